// CUDA graphs as PyTorch's torch.cuda.graph, torch.compile's cudagraphs and vLLM use them: kernels captured from a
// stream (or added node by node), the graph instantiated, replayed again and again, and one replay asserting.
//
// usage: graph_job MODE
//   capture   five kernels captured (add, busy, nll_loss, add, busy); the graph is destroyed once instantiated, as
//             PyTorch does; two healthy replays, then a bad label and a third replay: node 3 asserts
//   nodes     three kernels added node by node in a chain (add -> nll_loss -> add): node 2 asserts
//   diamond   add, then nll_loss and add both depending on it only: node 2 asserts; node 3, ready with it but added
//             after it, comes after it in the simulator's replay and never runs
//   update    the executable graph of a capture (add, add) updated from a second capture (add, nll_loss): node 2 asserts
//   many      2,000 graphs of 20 kernels each captured, replayed and destroyed, then the capture case
//   healthy   the capture case with good labels throughout, the graph kept: prints each kernel node's dependencies
//             among the kernel nodes, and the loss
// Prints "replays: N" (replays the runtime accepted) and what each mode adds.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bad_labels.h"
#include "kernels/stock_kernels.h"

namespace {

struct Job {
  BadLabelsLoss loss;
  float* out = nullptr;
  float alpha = 1.0f;
  long n = 16;
  unsigned long long busy_us = 2000;
  void* add_args[5] = {&out, &loss.input, &loss.input, &alpha, &n};
  void* busy_args[1] = {&busy_us};
  cudaStream_t stream = nullptr;
  int replays = 0;

  Job() {
    cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float) * 16);
    float input[16];
    for (int i = 0; i < 16; ++i) input[i] = -0.25f * static_cast<float>(i % 4 + 1);  // a loss that prints the same
    cudaMemcpy(loss.input, input, sizeof input, cudaMemcpyHostToDevice);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    labels(false);
  }
  void labels(bool bad) {
    long host[4] = {0, 1, bad ? 9 : 2, 3};
    cudaMemcpy(loss.labels, host, sizeof host, cudaMemcpyHostToDevice);
  }
  void add() { cudaLaunchKernel(simkernels_host_stub("elementwise_add"), dim3{1}, dim3{16}, add_args, 0, stream); }
  void busy() { cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, busy_args, 0, stream); }
  void nll_loss() { cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, loss.args, 0, stream); }
  cudaError_t replay(cudaGraphExec_t exec) {
    cudaError_t e = cudaGraphLaunch(exec, stream);
    if (e == cudaSuccess) ++replays;
    return e;
  }
};

// The step a training loop captures: where each kernel node was made.
cudaGraph_t capture_step(Job& job) {
  cudaGraph_t graph = nullptr;
  cudaStreamBeginCapture(job.stream, cudaStreamCaptureModeGlobal);
  job.add();
  job.busy();
  job.nll_loss();  // CAPTURED_NLL_LOSS
  job.add();
  job.busy();
  cudaStreamEndCapture(job.stream, &graph);
  return graph;
}

cudaGraphNode_t add_node(cudaGraph_t graph, std::vector<cudaGraphNode_t> deps, const char* kernel,
                         void** args, unsigned block) {
  cudaKernelNodeParams params{};
  params.func = const_cast<void*>(simkernels_host_stub(kernel));
  params.gridDim = dim3{1};
  params.blockDim = dim3{block};
  params.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  cudaGraphAddKernelNode(&node, graph, deps.data(), deps.size(), &params);
  return node;
}

// The replay that asserts, and the sync that learns it.
int fail_replay(Job& job, cudaGraphExec_t exec) {
  job.labels(true);
  job.replay(exec);
  cudaError_t e = cudaStreamSynchronize(job.stream);
  std::printf("replays: %d\n", job.replays);
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}

int capture_case(Job& job) {
  cudaGraph_t graph = capture_step(job);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  for (int i = 0; i < 2; ++i) {
    job.replay(exec);
    cudaStreamSynchronize(job.stream);
  }
  return fail_replay(job, exec);
}

int nodes_case(Job& job, bool diamond) {
  cudaGraph_t graph = nullptr;
  cudaGraphCreate(&graph, 0);
  cudaGraphNode_t first = add_node(graph, {}, "elementwise_add", job.add_args, 16);
  cudaGraphNode_t loss = add_node(graph, {first}, "nll_loss", job.loss.args, 32);  // ADDED_NLL_LOSS
  add_node(graph, {diamond ? first : loss}, "elementwise_add", job.add_args, 16);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, graph, 0);
  job.replay(exec);
  cudaStreamSynchronize(job.stream);
  return fail_replay(job, exec);
}

int update_case(Job& job) {
  cudaGraph_t first = nullptr, second = nullptr;
  cudaStreamBeginCapture(job.stream, cudaStreamCaptureModeGlobal);
  job.add();
  job.add();
  cudaStreamEndCapture(job.stream, &first);
  cudaStreamBeginCapture(job.stream, cudaStreamCaptureModeGlobal);
  job.add();
  job.nll_loss();
  cudaStreamEndCapture(job.stream, &second);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, first, 0);
  job.replay(exec);
  cudaStreamSynchronize(job.stream);
  cudaGraphExecUpdateResultInfo info{};
  std::printf("update: %s\n", cudaGetErrorName(cudaGraphExecUpdate(exec, second, &info)));
  return fail_replay(job, exec);
}

int many_case(Job& job) {
  job.busy_us = 0;
  for (int g = 0; g < 2000; ++g) {
    cudaGraph_t graph = nullptr;
    cudaStreamBeginCapture(job.stream, cudaStreamCaptureModeGlobal);
    for (int k = 0; k < 20; ++k) job.add();
    cudaStreamEndCapture(job.stream, &graph);
    cudaGraphExec_t exec = nullptr;
    cudaGraphInstantiate(&exec, graph, 0);
    job.replay(exec);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamSynchronize(job.stream);
  job.busy_us = 2000;
  return capture_case(job);
}

int healthy_case(Job& job) {
  cudaGraph_t graph = capture_step(job);
  cudaGraphExec_t exec = nullptr;
  cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < 3; ++i) job.replay(exec);
  cudaError_t e = cudaStreamSynchronize(job.stream);
  // What the program sees of its graph: its kernel nodes and, for each, the kernel nodes it depends on.
  size_t count = 0;
  cudaGraphGetNodes(graph, nullptr, &count);
  std::vector<cudaGraphNode_t> nodes(count);
  cudaGraphGetNodes(graph, nodes.data(), &count);
  std::vector<cudaGraphNode_t> kernels;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel) kernels.push_back(node);
  }
  std::printf("kernel nodes: %zu\n", kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    size_t n = 0;
    cudaGraphNodeGetDependencies(kernels[i], nullptr, nullptr, &n);
    std::vector<cudaGraphNode_t> deps(n);
    cudaGraphNodeGetDependencies(kernels[i], deps.data(), nullptr, &n);
    std::string line;
    for (cudaGraphNode_t d : deps) {
      for (size_t k = 0; k < kernels.size(); ++k) {
        if (kernels[k] == d) line += " " + std::to_string(k + 1);
      }
      cudaGraphNodeType type;
      if (cudaGraphNodeGetType(d, &type) == cudaSuccess && type != cudaGraphNodeTypeKernel) line += " other";
    }
    std::printf("node %zu depends on:%s\n", i + 1, line.empty() ? " none" : line.c_str());
  }
  float loss = 0;
  cudaMemcpy(&loss, job.loss.loss, sizeof loss, cudaMemcpyDeviceToHost);
  std::printf("loss: %.4f\n", loss);
  std::printf("replays: %d\n", job.replays);
  std::printf("sync: %s\n", cudaGetErrorName(e));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return e == cudaSuccess ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  Job job;
  if (mode == "capture") return capture_case(job);
  if (mode == "nodes") return nodes_case(job, false);
  if (mode == "diamond") return nodes_case(job, true);
  if (mode == "update") return update_case(job);
  if (mode == "many") return many_case(job);
  if (mode == "healthy") return healthy_case(job);
  std::fprintf(stderr, "usage: graph_job capture|nodes|diamond|update|many|healthy\n");
  return 2;
}
