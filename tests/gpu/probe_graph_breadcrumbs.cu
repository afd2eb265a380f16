// gpu-check probe 6, on the real driver and without the shim: do graph breadcrumbs name the node of a CUDA graph that
// asserted in a replay? A graph launch is one launch to the host, so stream breadcrumbs cannot tell its kernels
// apart. The shim instead, during the capture, after each kernel captured into the stream, asks cuStreamGetCaptureInfo
// for the graph and the node just captured, and adds to the graph a batch memory-operation node writing 1 into a
// host-mapped slot, a leaf depending on that node alone (the stream's own dependencies untouched, so the user's graph
// keeps its shape); before each launch of the graph it resets the slots with cuMemsetD8Async on the launch stream.
// After a fault, the first node whose slot reads 0 is the one that failed. Each step of that is checked here, the
// driver's entry points fetched as the shim fetches them (by name, for the CUDA version of these headers), with
// their signatures from cuda.h. Kernel 2 of 3 asserts at the last replay.
//
// usage: probe_graph_breadcrumbs
// Prints "probe6: PASS ..." or "probe6: FAIL ..." per step, then "probe6: answer: ...". Exit status 0 when it probed,
// 2 when a driver entry point is missing or the set-up failed, 5 when there is no usable device.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cassert>
#include <cstdint>
#include <cstdio>

#include "probe_support.h"

namespace {

constexpr int kKernels = 3;
constexpr int kAsserting = 1;               // the kernel (0-based) that asserts when told to
constexpr long long kSpinCycles = 2000000;  // about a millisecond: the breadcrumbs follow real work

// The driver's entry points, fetched by name as the shim does (it runs beside whatever libcuda the program loaded).
// cuda.h's macros make these names the current versions: cuStreamGetCaptureInfo_v3, cuGraphNodeGetDependencies_v2.
struct Driver {
  decltype(&cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&cuMemHostGetDevicePointer) mem_host_get_device_pointer = nullptr;
  decltype(&cuStreamGetCaptureInfo) stream_get_capture_info = nullptr;
  decltype(&cuGraphAddBatchMemOpNode) graph_add_batch_mem_op_node = nullptr;
  decltype(&cuGraphNodeGetType) graph_node_get_type = nullptr;
  decltype(&cuGraphNodeGetDependencies) graph_node_get_dependencies = nullptr;
  decltype(&cuMemsetD8Async) memset_d8_async = nullptr;
};

bool fetch_all(Driver& d) {
  return fetch("cuCtxGetCurrent", d.ctx_get_current) && fetch("cuMemHostAlloc", d.mem_host_alloc) &&
         fetch("cuMemHostGetDevicePointer", d.mem_host_get_device_pointer) &&
         fetch("cuStreamGetCaptureInfo", d.stream_get_capture_info) &&
         fetch("cuGraphAddBatchMemOpNode", d.graph_add_batch_mem_op_node) &&
         fetch("cuGraphNodeGetType", d.graph_node_get_type) &&
         fetch("cuGraphNodeGetDependencies", d.graph_node_get_dependencies) &&
         fetch("cuMemsetD8Async", d.memset_d8_async);
}

int failures = 0;

void step(bool ok, const char* what) {
  std::printf("probe6: %s %s\n", ok ? "PASS" : "FAIL", what);
  failures += ok ? 0 : 1;
}

}  // namespace

// Read at run time, not captured: the replay after the host sets *fail asserts.
__global__ void probe_node_kernel(int index, const int* fail, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  assert(!(index == kAsserting && *fail != 0));
}

int main() {
  if (!have_device()) return kNoDevice;
  cudaFree(nullptr);
  Driver d;
  if (!fetch_all(d)) return 2;

  // The slots are allocated before the capture begins: a global-mode capture (torch.cuda.graph's) forbids pinned
  // allocation while it runs, as the shim finds at cudaStreamBeginCapture's entry.
  void* host = nullptr;
  CUdeviceptr slots_device = 0;
  CUcontext ctx = nullptr;
  int* fail = nullptr;
  cudaStream_t stream = nullptr;
  if (d.mem_host_alloc(&host, kKernels * sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
          CUDA_SUCCESS ||
      d.mem_host_get_device_pointer(&slots_device, host, 0) != CUDA_SUCCESS ||
      d.ctx_get_current(&ctx) != CUDA_SUCCESS || cudaMalloc(&fail, sizeof(int)) != cudaSuccess ||
      cudaMemset(fail, 0, sizeof(int)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("probe: set-up failed (%s)\n", cudaGetErrorName(cudaGetLastError()));
    return 2;
  }
  volatile uint32_t* slots = static_cast<volatile uint32_t*>(host);
  for (int i = 0; i < kKernels; ++i) slots[i] = 0;

  // The capture: after each kernel, one leaf write of 1 into its slot, depending on the node just captured.
  CUgraphNode kernel_nodes[kKernels] = {};
  CUgraph capturing = nullptr;
  bool infos = true, leaves = true;
  cudaError_t began = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < kKernels; ++i) {
    probe_node_kernel<<<1, 32, 0, stream>>>(i, fail, kSpinCycles);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    const CUgraphNode* dependencies = nullptr;
    const CUgraphEdgeData* edges = nullptr;
    size_t count = 0;
    CUresult info = d.stream_get_capture_info(stream, &status, &id, &capturing, &dependencies, &edges, &count);
    infos = infos && info == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_ACTIVE && count == 1;
    if (info != CUDA_SUCCESS || count != 1) continue;
    kernel_nodes[i] = dependencies[0];  // valid only until the next call on the stream: copied, then used at once
    CUstreamBatchMemOpParams write = {};
    write.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    write.writeValue.address = slots_device + i * sizeof(uint32_t);
    write.writeValue.value = 1;
    write.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // with the memory barrier: the kernel's work is done
    CUDA_BATCH_MEM_OP_NODE_PARAMS params = {ctx, 1, &write, 0};
    CUgraphNode leaf = nullptr;
    leaves = leaves && d.graph_add_batch_mem_op_node(&leaf, capturing, &kernel_nodes[i], 1, &params) == CUDA_SUCCESS;
  }
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  std::printf("probe6: capture began %s, ended %s; the graph being captured %s the graph it ended with\n",
              cudaGetErrorName(began), cudaGetErrorName(ended), capturing == graph ? "is" : "is NOT");
  step(began == cudaSuccess && infos, "cuStreamGetCaptureInfo after each captured launch: active, one dependency");
  step(leaves, "cuGraphAddBatchMemOpNode of a leaf write after each kernel node, during the capture");
  if (ended != cudaSuccess || graph == nullptr) {
    std::printf("probe6: answer: no, the capture did not end with a graph (%s)\n", cudaGetErrorName(ended));
    return 0;
  }

  // The graph: the user's three kernels and the three leaves, the kernels still a chain of their own.
  size_t count = 0;
  cudaGraphGetNodes(graph, nullptr, &count);
  int kernels = 0, mem_ops = 0;
  if (count <= 16) {
    cudaGraphNode_t nodes[16];
    cudaGraphGetNodes(graph, nodes, &count);
    for (size_t i = 0; i < count; ++i) {
      CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
      d.graph_node_get_type(nodes[i], &type);
      kernels += type == CU_GRAPH_NODE_TYPE_KERNEL;
      mem_ops += type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    }
  }
  std::printf("probe6: cudaGraphGetNodes: %zu nodes, %d kernel and %d batch mem-op (expected 6: 3 and 3)\n", count,
              kernels, mem_ops);
  step(count == 6 && kernels == 3 && mem_ops == 3, "the graph holds the 3 kernels and the 3 leaf writes");
  bool chained = true;
  for (int i = 1; i < kKernels; ++i) {
    CUgraphNode on[4] = {};
    size_t n = 4;
    chained = chained && d.graph_node_get_dependencies(kernel_nodes[i], on, nullptr, &n) == CUDA_SUCCESS && n == 1 &&
              on[0] == kernel_nodes[i - 1];
  }
  step(chained, "each kernel depends on exactly the kernel before it (the leaves changed no user dependency)");

  // The replays: the slots reset on the launch stream, then the launch.
  cudaGraphExec_t exec = nullptr;
  cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  step(e == cudaSuccess, "cudaGraphInstantiate");
  if (e != cudaSuccess) {
    std::printf("probe6: answer: no, the graph with its leaf writes does not instantiate (%s)\n", cudaGetErrorName(e));
    return 0;
  }
  auto replay = [&] {
    CUresult reset = d.memset_d8_async(slots_device, 0, kKernels * sizeof(uint32_t), stream);
    cudaError_t launched = cudaGraphLaunch(exec, stream);
    cudaError_t synced = cudaStreamSynchronize(stream);
    std::printf("probe6: replay: reset %d, launch %s, sync %s; slots %u %u %u\n", static_cast<int>(reset),
                cudaGetErrorName(launched), cudaGetErrorName(synced), slots[0], slots[1], slots[2]);
    return reset == CUDA_SUCCESS && launched == cudaSuccess ? synced : cudaErrorUnknown;
  };
  for (int healthy = 0; healthy < 2; ++healthy) {
    e = replay();
    step(e == cudaSuccess && slots[0] == 1 && slots[1] == 1 && slots[2] == 1,
         "a healthy replay: every slot reads 1 after the sync");
  }
  const int assert_now = 1;
  cudaMemcpy(fail, &assert_now, sizeof assert_now, cudaMemcpyHostToDevice);  // kernel 2 asserts from now on
  e = replay();
  step(e == cudaErrorAssert, "the replay with kernel 2 asserting: its sync returns cudaErrorAssert");
  step(slots[0] == 1 && slots[1] == 0 && slots[2] == 0,
       "after the assert the slots read 1 0 0: kernel 1 completed, kernel 2 (and kernel 3 after it) did not");
  std::printf("probe6: answer: %s\n", failures == 0
                                          ? "yes, graph breadcrumbs name the node that asserted in a replay"
                                          : "no, graph breadcrumbs do not work as designed (see the FAIL lines)");
  return 0;
}
