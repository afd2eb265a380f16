// A launch loop on the simulator, timed from inside the process so that start-up is not counted.
//
// usage: launch_loop LAUNCHES [--sync-each | --calls | --ops]
//   --sync-each   synchronize the stream after every launch: what CUDA_LAUNCH_BLOCKING=1 does to a job
//   --calls       no launch: each of the LAUNCHES iterations makes the three runtime calls PyTorch makes most around
//                 its ops (cudaGetDevice for a device guard, cudaGetLastError after a launch, cudaStreamQuery)
//   --ops         each iteration is one op as PyTorch shapes an eager CUDA op: two cudaGetDevice (the device guard's
//                 get and its check), the launch, cudaGetLastError (C10_CUDA_KERNEL_LAUNCH_CHECK)
// Prints "cpu_ns_per_launch: X" (CPU time of the launching thread, which is where the shim's work happens; the
// simulated device's worker threads are not counted) and "wall_ns_per_launch: Y" for the timed loop, after a
// warm-up of its own so that the shim's first-touch allocations and the simulator's thread start are not counted.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "kernels/stock_kernels.h"

namespace {

enum class Shape { launches, sync_each, calls, ops };

bool run(long iterations, Shape shape, cudaStream_t stream, const void* kernel, void** args) {
  int device = 0;
  for (long i = 0; i < iterations; ++i) {
    if (shape == Shape::calls) {
      if (cudaGetDevice(&device) != cudaSuccess || cudaGetLastError() != cudaSuccess) return false;
      cudaError_t query = cudaStreamQuery(stream);
      if (query != cudaSuccess && query != cudaErrorNotReady) return false;
      continue;
    }
    if (shape == Shape::ops && (cudaGetDevice(&device) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess))
      return false;
    if (cudaLaunchKernel(kernel, dim3{1}, dim3{1}, args, 0, stream) != cudaSuccess) return false;
    if (shape == Shape::ops && cudaGetLastError() != cudaSuccess) return false;
    if (shape == Shape::sync_each && cudaStreamSynchronize(stream) != cudaSuccess) return false;
  }
  return cudaStreamSynchronize(stream) == cudaSuccess;
}

long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  long launches = argc > 1 ? std::atol(argv[1]) : 0;
  Shape shape = Shape::launches;
  if (argc > 2 && std::strcmp(argv[2], "--sync-each") == 0) shape = Shape::sync_each;
  if (argc > 2 && std::strcmp(argv[2], "--calls") == 0) shape = Shape::calls;
  if (argc > 2 && std::strcmp(argv[2], "--ops") == 0) shape = Shape::ops;
  if (launches <= 0 || (argc > 2 && shape == Shape::launches)) {
    std::fprintf(stderr, "usage: launch_loop LAUNCHES [--sync-each | --calls | --ops]\n");
    return 2;
  }
  cudaStream_t stream;
  float *out, *a, *b;
  if (cudaStreamCreate(&stream) != cudaSuccess || cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float)) ||
      cudaMalloc(reinterpret_cast<void**>(&a), sizeof(float)) ||
      cudaMalloc(reinterpret_cast<void**>(&b), sizeof(float))) {
    std::fprintf(stderr, "launch_loop: CUDA set-up failed\n");
    return 1;
  }
  float alpha = 1.0f;
  long n = 1;
  void* args[] = {&out, &a, &b, &alpha, &n};
  const void* kernel = simkernels_host_stub("elementwise_add");

  if (!run(launches / 10 + 1, shape, stream, kernel, args)) return 1;
  auto wall_start = std::chrono::steady_clock::now();
  long long cpu_start = thread_cpu_ns();
  if (!run(launches, shape, stream, kernel, args)) return 1;
  long long cpu = thread_cpu_ns() - cpu_start;
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall_start);
  std::printf("cpu_ns_per_launch: %.1f\nwall_ns_per_launch: %.1f\n", static_cast<double>(cpu) / launches,
              static_cast<double>(wall.count()) / launches);
  return 0;
}
