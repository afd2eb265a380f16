// Jobs under the load real ones put on the pinpointing: deep queues, many streams, streams made and destroyed for
// hours, the ring wrapped many times. In each, exactly one launch asserts (nll_loss with a label out of range); the
// others are busy kernels.
//
// usage: load_job MODE [COUNT]
//   deep-queue    300 launches queued on one stream, the 11th asserts while the rest wait behind it; the stream
//                 starts (a host function holds it) only once the host has made all 300
//   many-streams  COUNT streams (default 64) with short work each; one more stream asserts after long work
//   churn         COUNT streams (default 6000) made, given a launch, synchronized and destroyed; then an assert with
//                 11 launches in flight on a new stream
//   long          COUNT launches (default 1000000) on one stream, then an assert with 11 in flight
//   side-stream   a side stream waits (an event) on the main stream after its asserting launch, with work queued
//   thread-churn  COUNT threads (default 5000), one after another in fours, each making three streams, launching
//                 onto them and onto its own default stream, synchronizing, destroying the streams and ending; then
//                 an assert with 11 launches in flight on a new stream
// Prints "asserting launch: N" (0-based, in the order the job made its launches: the shim's seq when it recorded
// every launch) and "sync: <name>" for the final cudaDeviceSynchronize.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/stock_kernels.h"

namespace {

long launches = 0;  // made so far

void busy(cudaStream_t stream, unsigned long long us) {
  void* args[] = {&us};
  cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, args, 0, stream);
  ++launches;
}

float *input, *loss, *weight_sum;
long* bad_labels;

void make_tensors() {
  cudaMalloc(reinterpret_cast<void**>(&input), sizeof(float) * 64);
  cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&weight_sum), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&bad_labels), sizeof(long) * 4);
  long labels[4] = {0, 1, 7, 2};  // 7: out of range for 4 classes
  cudaMemcpy(bad_labels, labels, sizeof labels, cudaMemcpyHostToDevice);
}

void bad_nll_loss(cudaStream_t stream) {
  long nframe = 4, ndim = 4, classes = 4, ignore = -100;
  bool average = true;
  const float* no_weights = nullptr;
  void* args[] = {&loss, &weight_sum, &input, &bad_labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};
  std::printf("asserting launch: %ld\n", launches);
  std::fflush(stdout);
  cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, args, 0, stream);
  ++launches;
}

// Ten launches of long work, the assert, and `behind` more queued behind it.
void assert_in_queue(cudaStream_t stream, int before, int behind) {
  for (int i = 0; i < before; ++i) busy(stream, 2000);
  bad_nll_loss(stream);
  for (int i = 0; i < behind; ++i) busy(stream, 100);
}

// Set once the host has made every launch of the queue that hold_until_all_made, queued first, holds back.
std::atomic<bool> all_made{false};

void CUDART_CB hold_until_all_made(void*) {
  while (!all_made.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

cudaStream_t new_stream() {
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return s;
}

int finish() {
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  long count = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 0;
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  make_tensors();
  if (std::strcmp(mode, "deep-queue") == 0) {
    cudaStream_t stream = new_stream();
    cudaLaunchHostFunc(stream, hold_until_all_made, nullptr);
    assert_in_queue(stream, 10, 289);
    all_made.store(true);
    return finish();
  }
  if (std::strcmp(mode, "many-streams") == 0) {
    std::vector<cudaStream_t> streams(count > 0 ? count : 64);
    for (cudaStream_t& s : streams) s = new_stream();
    cudaStream_t failing = new_stream();
    busy(failing, 300000);  // long enough for every other stream to finish first
    for (cudaStream_t s : streams) {
      for (int i = 0; i < 4; ++i) busy(s, 50);
    }
    assert_in_queue(failing, 0, 10);
    return finish();
  }
  if (std::strcmp(mode, "churn") == 0) {
    for (long i = 0; i < (count > 0 ? count : 6000); ++i) {
      cudaStream_t s = new_stream();
      busy(s, 1);
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
    }
    assert_in_queue(new_stream(), 5, 5);
    return finish();
  }
  if (std::strcmp(mode, "long") == 0) {
    cudaStream_t s = new_stream();
    for (long i = 0; i < (count > 0 ? count : 1000000); ++i) busy(s, 0);
    assert_in_queue(s, 5, 5);
    return finish();
  }
  if (std::strcmp(mode, "side-stream") == 0) {
    cudaStream_t main_stream = new_stream(), side = new_stream();
    cudaEvent_t ready = nullptr;
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    for (int i = 0; i < 3; ++i) busy(side, 100);
    cudaStreamSynchronize(side);  // the side stream's own earlier work completes, however loaded the machine
    assert_in_queue(main_stream, 5, 0);
    cudaEventRecord(ready, main_stream);
    cudaStreamWaitEvent(side, ready, 0);  // as torch.cuda.Stream.wait_stream does
    for (int i = 0; i < 10; ++i) busy(side, 100);
    for (int i = 0; i < 5; ++i) busy(main_stream, 100);
    return finish();
  }
  if (std::strcmp(mode, "thread-churn") == 0) {
    long threads = count > 0 ? count : 5000;
    for (long done = 0; done < threads; done += 4) {
      std::vector<std::thread> four;
      for (int i = 0; i < 4; ++i) {
        four.emplace_back([] {
          cudaStream_t own[3];
          unsigned long long us = 1;
          void* args[] = {&us};
          for (cudaStream_t& s : own) {
            s = new_stream();
            cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, args, 0, s);
          }
          cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, args, 0, cudaStreamPerThread);
          for (cudaStream_t s : own) cudaStreamSynchronize(s);
          cudaStreamSynchronize(cudaStreamPerThread);
          for (cudaStream_t s : own) cudaStreamDestroy(s);
        });
      }
      for (std::thread& t : four) t.join();
      launches += 16;  // four threads, four launches each
    }
    assert_in_queue(new_stream(), 5, 5);
    return finish();
  }
  std::fprintf(stderr,
               "load_job: unknown mode '%s' (deep-queue, many-streams, churn, long, side-stream, thread-churn)\n", mode);
  return 2;
}
