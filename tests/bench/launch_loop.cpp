// A launch loop on the simulator, timed from inside the process so that start-up is not counted.
//
// usage: launch_loop LAUNCHES [--sync-each]
//   --sync-each   synchronize the stream after every launch: what CUDA_LAUNCH_BLOCKING=1 does to a job
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

bool run(long launches, bool sync_each, cudaStream_t stream, const void* kernel, void** args) {
  for (long i = 0; i < launches; ++i) {
    if (cudaLaunchKernel(kernel, dim3{1}, dim3{1}, args, 0, stream) != cudaSuccess) return false;
    if (sync_each && cudaStreamSynchronize(stream) != cudaSuccess) return false;
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
  bool sync_each = argc > 2 && std::strcmp(argv[2], "--sync-each") == 0;
  if (launches <= 0) {
    std::fprintf(stderr, "usage: launch_loop LAUNCHES [--sync-each]\n");
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

  if (!run(launches / 10 + 1, sync_each, stream, kernel, args)) return 1;
  auto wall_start = std::chrono::steady_clock::now();
  long long cpu_start = thread_cpu_ns();
  if (!run(launches, sync_each, stream, kernel, args)) return 1;
  long long cpu = thread_cpu_ns() - cpu_start;
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall_start);
  std::printf("cpu_ns_per_launch: %.1f\nwall_ns_per_launch: %.1f\n", static_cast<double>(cpu) / launches,
              static_cast<double>(wall.count()) / launches);
  return 0;
}
