// A job on two GPUs of one process, as a model split over cuda:0 and cuda:1 runs: each device its own buffers, the
// launches made with their device current; the nll_loss of FAILING gets a label out of range.
//
// usage: multi_device_job SCENARIO FAILING
//   busy     the other device is kept busy (long kernels on its legacy stream) while FAILING asserts; afterwards
//            the other device is given more work and synchronized
//   threads  a thread per device, each launching onto its device's legacy stream, FAILING's thread asserts
//   peer     the labels reach FAILING by a peer copy from the other device; the activations go back the same way
//   waits    each device's stream waits on an event of the other's before its next kernel
//   both     FAILING asserts first; later the other device asserts too
// Prints "failing sync: <error>" (FAILING's device sync) and "other sync: <error>" (the other device's, last).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "kernels/stock_kernels.h"

namespace {

constexpr long kBatch = 4, kClasses = 4;

// One device's share of the model: activations, a loss and its labels, in that device's memory.
struct Shard {
  float *input = nullptr, *out = nullptr, *loss = nullptr, *weight_sum = nullptr;
  long* labels = nullptr;
  long n = kBatch * kClasses, nframe = kBatch, ndim = kClasses, classes = kClasses, ignore = -100;
  float alpha = 1.0f;
  bool average = true;
  const float* no_weights = nullptr;
  unsigned long long busy_us = 2000;
  void* add_args[5] = {&out, &input, &input, &alpha, &n};
  void* loss_args[10] = {&loss, &weight_sum, &out, &labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};
  void* busy_args[1] = {&busy_us};

  explicit Shard(int device) {
    cudaSetDevice(device);
    cudaMalloc(reinterpret_cast<void**>(&input), sizeof(float) * kBatch * kClasses);
    cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float) * kBatch * kClasses);
    cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&weight_sum), sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&labels), sizeof(long) * kBatch);
    set_labels(false);
  }
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  void set_labels(bool bad) {
    long host[kBatch] = {0, 1, 2, 3};
    if (bad) host[2] = kClasses;
    cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice);
  }
};

void launch(const char* kernel, dim3 block, void** args, cudaStream_t stream = nullptr) {
  cudaLaunchKernel(simkernels_host_stub(kernel), dim3{1}, block, args, 0, stream);
}

// A training step's kernels on the current device's legacy stream: the layer, then the loss.
void step(Shard& s) {
  launch("elementwise_add", dim3{128}, s.add_args);
  launch("nll_loss", dim3{32}, s.loss_args);
}

const char* sync_device(int device) {
  cudaSetDevice(device);
  return cudaGetErrorName(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: multi_device_job busy|threads|peer|waits|both FAILING\n");
    return 2;
  }
  std::string scenario = argv[1];
  int failing = std::atoi(argv[2]);
  int other = 1 - failing;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    std::fprintf(stderr, "multi_device_job: needs two devices, has %d\n", count);
    return 4;
  }
  Shard shards[2] = {Shard(0), Shard(1)};
  Shard &bad = shards[failing], &good = shards[other];

  if (scenario == "busy" || scenario == "both") {
    cudaSetDevice(other);
    good.busy_us = 200000;  // 0.2 s each: the other device is still at work when the assert fires
    for (int i = 0; i < 3; ++i) launch("busy", dim3{1}, good.busy_args);
    cudaSetDevice(failing);
    step(bad);
    bad.set_labels(true);
    step(bad);
    step(bad);
  } else if (scenario == "threads") {
    auto run = [](Shard& s, int device, bool asserts) {
      cudaSetDevice(device);
      for (int i = 0; i < 20; ++i) {
        if (asserts && i == 12) s.set_labels(true);
        step(s);
      }
    };
    std::thread first(run, std::ref(shards[0]), 0, failing == 0);
    std::thread second(run, std::ref(shards[1]), 1, failing == 1);
    first.join();
    second.join();
  } else if (scenario == "peer") {
    int can = 0;
    cudaDeviceCanAccessPeer(&can, failing, other);
    cudaSetDevice(failing);
    if (can != 0) cudaDeviceEnablePeerAccess(other, 0);
    cudaSetDevice(other);
    long* staged = nullptr;  // the labels are prepared on the other device, which runs its own loss meanwhile
    cudaMalloc(reinterpret_cast<void**>(&staged), sizeof(long) * kBatch);
    long host[kBatch] = {0, 1, kClasses, 3};
    cudaMemcpy(staged, host, sizeof host, cudaMemcpyHostToDevice);
    step(good);
    cudaSetDevice(failing);
    cudaMemcpyPeerAsync(bad.labels, failing, staged, other, sizeof(long) * kBatch, nullptr);
    cudaMemcpyPeerAsync(bad.input, failing, good.out, other, sizeof(float) * kBatch * kClasses, nullptr);
    step(bad);
    cudaMemcpyPeerAsync(good.input, other, bad.out, failing, sizeof(float) * kBatch * kClasses, nullptr);
  } else if (scenario == "waits") {
    cudaStream_t streams[2];
    cudaEvent_t done[2];
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking);
      cudaEventCreateWithFlags(&done[d], cudaEventDisableTiming);
    }
    for (int i = 0; i < 6; ++i) {
      for (int d = 0; d < 2; ++d) {
        cudaSetDevice(d);
        if (d == failing && i == 4) shards[d].set_labels(true);
        cudaStreamWaitEvent(streams[d], done[1 - d], 0);  // the other device's previous step
        launch("elementwise_add", dim3{128}, shards[d].add_args, streams[d]);
        launch("nll_loss", dim3{32}, shards[d].loss_args, streams[d]);
        cudaEventRecord(done[d], streams[d]);
      }
    }
  } else {
    std::fprintf(stderr, "multi_device_job: unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  std::printf("failing sync: %s\n", sync_device(failing));
  if (scenario == "both") {
    cudaSetDevice(other);
    good.set_labels(true);
    step(good);
  } else if (scenario != "waits") {
    cudaSetDevice(other);
    step(good);  // the other device goes on
  }
  std::printf("other sync: %s\n", sync_device(other));
  return 0;
}
