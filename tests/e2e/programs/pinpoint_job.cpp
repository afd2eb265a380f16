// Jobs whose failing launch is hard to see from the host, for the pinpointing mechanisms.
//
// usage: pinpoint_job MODE
//   in-flight     8 launches on one stream, the 5th asserts (nll_loss); the others keep the stream busy
//   two-streams   two streams busy at once; the 2nd launch of stream B asserts (index_select) while the 1st
//                 launch of stream A, a minute long, runs: the fault stops it, unfinished
//   big-block     a launch with 2048 threads per block, refused; the job goes on and ends normally
//   big-block-abort  the same, then abort() (an uncaught exception ends a job this way)
//   kill          as in-flight, then SIGKILL right after the sync that printed the assertion line
//   kill-after-secondary  as kill, with one more failing call (a secondary error) before the SIGKILL
//   unfollowed-first  nll_loss asserts; cudaGetDevice (a call firstassert does not follow) is asked until it returns
//                 the error, then cudaGetLastError; prints "cudaGetDevice: <name>" and "cudaGetLastError: <name>"
// Prints "sync: <name>" for the job's own synchronization and "next call: <name>" for the call after the
// failing launch (in-flight only).
#include <cuda_runtime_api.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "kernels/stock_kernels.h"

namespace {

struct Tensors {
  float *input, *loss, *weight_sum, *dst;
  long *bad_labels, *bad_indices;
};

Tensors make_tensors() {
  Tensors t{};
  cudaMalloc(reinterpret_cast<void**>(&t.input), sizeof(float) * 64);
  cudaMalloc(reinterpret_cast<void**>(&t.loss), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&t.weight_sum), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&t.dst), sizeof(float) * 64);
  cudaMalloc(reinterpret_cast<void**>(&t.bad_labels), sizeof(long) * 4);
  cudaMalloc(reinterpret_cast<void**>(&t.bad_indices), sizeof(long) * 4);
  long labels[4] = {0, 1, 7, 2};  // 7: out of range for 4 classes
  long indices[4] = {0, 3, 2, 9};  // 9: out of range for 4 rows
  cudaMemcpy(t.bad_labels, labels, sizeof labels, cudaMemcpyHostToDevice);
  cudaMemcpy(t.bad_indices, indices, sizeof indices, cudaMemcpyHostToDevice);
  return t;
}

cudaError_t busy(cudaStream_t stream, unsigned long long us) {
  void* args[] = {&us};
  return cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, args, 0, stream);
}

cudaError_t bad_nll_loss(Tensors& t, cudaStream_t stream) {
  long nframe = 4, ndim = 4, classes = 4, ignore = -100;
  bool average = true;
  const float* no_weights = nullptr;
  void* args[] = {&t.loss, &t.weight_sum, &t.input, &t.bad_labels, &no_weights, &average, &nframe, &ndim, &classes,
                  &ignore};
  return cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, args, 0, stream);
}

cudaError_t bad_index_select(Tensors& t, cudaStream_t stream) {
  long num = 4, inner = 1, rows = 4;
  const float* src = t.input;
  void* args[] = {&t.dst, &src, &t.bad_indices, &num, &inner, &rows};
  return cudaLaunchKernel(simkernels_host_stub("index_select"), dim3{1}, dim3{32}, args, 0, stream);
}

int in_flight(bool kill_after, bool secondary_first = false) {
  Tensors t = make_tensors();
  for (int i = 0; i < 4; ++i) busy(nullptr, 20000);
  cudaError_t launched = bad_nll_loss(t, nullptr);
  void* more = nullptr;
  cudaError_t next = cudaMalloc(&more, 16);  // the program's very next call after the failing launch
  std::printf("next call: %s\n", cudaGetErrorName(next));
  for (int i = 0; i < 3; ++i) busy(nullptr, 1000);
  std::fflush(stdout);
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("launch: %s\nsync: %s\n", cudaGetErrorName(launched), cudaGetErrorName(sync));
  std::fflush(stdout);
  if (secondary_first) {
    void* again = nullptr;
    std::printf("after the sync: %s\n", cudaGetErrorName(cudaMalloc(&again, 16)));
    std::fflush(stdout);
  }
  if (kill_after) kill(getpid(), SIGKILL);
  return sync == cudaSuccess ? 0 : 1;
}

int two_streams() {
  Tensors t = make_tensors();
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  busy(a, 60000000);  // a minute: still running on stream A when B faults, which stops it
  busy(a, 1000);
  busy(b, 20000);
  bad_index_select(t, b);
  busy(b, 1000);
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}

int unfollowed_first() {
  Tensors t = make_tensors();
  bad_nll_loss(t, nullptr);
  int device = 0;
  cudaError_t seen = cudaSuccess;
  for (int i = 0; i < 10000 && (seen = cudaGetDevice(&device)) == cudaSuccess; ++i) usleep(1000);
  cudaError_t last = cudaGetLastError();
  std::printf("cudaGetDevice: %s\ncudaGetLastError: %s\n", cudaGetErrorName(seen), cudaGetErrorName(last));
  return 1;
}

int big_block(bool abort_after) {
  unsigned long long us = 1;
  void* args[] = {&us};
  cudaError_t refused = cudaLaunchKernel(simkernels_host_stub("busy"), dim3{2}, dim3{2048}, args, 0, nullptr);
  cudaError_t cleared = cudaGetLastError();
  busy(nullptr, 1000);
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("launch: %s\ncleared: %s\nsync: %s\n", cudaGetErrorName(refused), cudaGetErrorName(cleared),
              cudaGetErrorName(sync));
  std::fflush(stdout);
  if (abort_after) std::abort();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  if (std::strcmp(mode, "in-flight") == 0) return in_flight(false);
  if (std::strcmp(mode, "logged-in-flight") == 0) {
    // Lines written as std::cerr writes them: the text through fwrite, std::endl's newline through putc. A library's
    // log line, then an assertion line a launcher relays from an earlier attempt (a path the parser cannot cut from
    // a glued prefix, as torch 2.8's /pytorch/... and 2.15's /__w/... are not).
    std::cerr << "I1207 12:00:00.000 42 Logger.cpp:46] profiler_stop" << std::endl;
    std::cerr << "/pytorch/aten/src/ATen/native/cuda/Loss.cu:245: nll_loss_forward_reduce_cuda_kernel_2d: block: "
                 "[0,0,0], thread: [7,0,0] Assertion `t >= 0 && t < n_classes` failed."
              << std::endl;
    return in_flight(false);
  }
  if (std::strcmp(mode, "kill") == 0) return in_flight(true);
  if (std::strcmp(mode, "kill-after-secondary") == 0) return in_flight(true, true);
  if (std::strcmp(mode, "two-streams") == 0) return two_streams();
  if (std::strcmp(mode, "big-block") == 0) return big_block(false);
  if (std::strcmp(mode, "unfollowed-first") == 0) return unfollowed_first();
  if (std::strcmp(mode, "big-block-abort") == 0) return big_block(true);
  std::fprintf(stderr, "pinpoint_job: unknown mode '%s' (in-flight, two-streams, big-block, kill, kill-after-secondary, unfollowed-first)\n", mode);
  return 2;
}
