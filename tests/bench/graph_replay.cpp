// Replays of a captured CUDA graph on the simulator, timed from inside the process so that start-up, the capture and
// the instantiation are not counted.
//
// usage: graph_replay REPLAYS [--nodes N] [--sync-every K]
//   --nodes N        kernel launches captured into the graph (default 100)
//   --sync-every K   synchronize the stream after every K replays (default 10; 0: only at the end), so that the
//                    device keeps up and the queue does not grow with REPLAYS
// Captures N small kernel launches on a non-default stream (cudaStreamBeginCapture/EndCapture), instantiates the
// graph, replays it REPLAYS / 10 + 1 times as a warm-up (the shim's first-touch allocations, the simulator's thread
// start), then times REPLAYS replays and a final cudaStreamSynchronize. Prints "cpu_ns_per_replay: X" (CPU time of
// the launching thread, where the shim's callbacks run; the simulated device's worker threads are not counted) and
// "wall_ns_per_replay: Y" (which also holds the device executing the nodes, and whatever the shim adds to the graph
// or queues before each launch).
//
// Under valgrind --tool=callgrind --instr-atstart=no, only the timed replays are instrumented (callgrind's client
// requests, where valgrind's header is installed; they do nothing outside valgrind), in every thread, so that the
// instruction counts hold the replays alone: neither start-up, the capture nor the instantiation.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "kernels/stock_kernels.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define GRAPH_REPLAY_START_INSTRUMENTATION() CALLGRIND_START_INSTRUMENTATION
#define GRAPH_REPLAY_STOP_INSTRUMENTATION() CALLGRIND_STOP_INSTRUMENTATION
#else
#define GRAPH_REPLAY_START_INSTRUMENTATION() ((void)0)
#define GRAPH_REPLAY_STOP_INSTRUMENTATION() ((void)0)
#endif

namespace {

bool replay(cudaGraphExec_t exec, cudaStream_t stream, long replays, long sync_every) {
  for (long i = 1; i <= replays; ++i) {
    if (cudaGraphLaunch(exec, stream) != cudaSuccess) return false;
    if (sync_every > 0 && i % sync_every == 0 && cudaStreamSynchronize(stream) != cudaSuccess) return false;
  }
  return cudaStreamSynchronize(stream) == cudaSuccess;
}

long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

int usage() {
  std::fprintf(stderr, "usage: graph_replay REPLAYS [--nodes N] [--sync-every K]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long replays = argc > 1 ? std::atol(argv[1]) : 0;
  long nodes = 100;
  long sync_every = 10;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      nodes = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--sync-every") == 0 && i + 1 < argc) {
      sync_every = std::atol(argv[++i]);
    } else {
      return usage();
    }
  }
  if (replays <= 0 || nodes <= 0 || sync_every < 0) return usage();

  cudaStream_t stream;
  float *out, *a, *b;
  if (cudaStreamCreate(&stream) != cudaSuccess || cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float)) ||
      cudaMalloc(reinterpret_cast<void**>(&a), sizeof(float)) ||
      cudaMalloc(reinterpret_cast<void**>(&b), sizeof(float))) {
    std::fprintf(stderr, "graph_replay: CUDA set-up failed\n");
    return 1;
  }
  float alpha = 1.0f;
  long n = 1;
  void* args[] = {&out, &a, &b, &alpha, &n};
  const void* kernel = simkernels_host_stub("elementwise_add");

  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) {
    std::fprintf(stderr, "graph_replay: cudaStreamBeginCapture failed\n");
    return 1;
  }
  for (long i = 0; i < nodes; ++i) {
    if (cudaLaunchKernel(kernel, dim3{1}, dim3{1}, args, 0, stream) != cudaSuccess) {
      std::fprintf(stderr, "graph_replay: capturing launch %ld failed\n", i);
      return 1;
    }
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    std::fprintf(stderr, "graph_replay: ending the capture or instantiating the graph failed\n");
    return 1;
  }
  size_t graph_nodes = 0;
  if (cudaGraphGetNodes(graph, nullptr, &graph_nodes) != cudaSuccess) graph_nodes = 0;

  if (!replay(exec, stream, replays / 10 + 1, sync_every)) {
    std::fprintf(stderr, "graph_replay: warm-up replays failed\n");
    return 1;
  }
  GRAPH_REPLAY_START_INSTRUMENTATION();
  auto wall_start = std::chrono::steady_clock::now();
  long long cpu_start = thread_cpu_ns();
  bool replayed = replay(exec, stream, replays, sync_every);
  long long cpu = thread_cpu_ns() - cpu_start;
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall_start);
  GRAPH_REPLAY_STOP_INSTRUMENTATION();
  if (!replayed) {
    std::fprintf(stderr, "graph_replay: timed replays failed\n");
    return 1;
  }

  if (cudaGraphExecDestroy(exec) != cudaSuccess || cudaGraphDestroy(graph) != cudaSuccess) {
    std::fprintf(stderr, "graph_replay: destroying the graph failed\n");
    return 1;
  }
  std::printf("graph_nodes: %zu\ncpu_ns_per_replay: %.1f\nwall_ns_per_replay: %.1f\n", graph_nodes,
              static_cast<double>(cpu) / replays, static_cast<double>(wall.count()) / replays);
  return 0;
}
