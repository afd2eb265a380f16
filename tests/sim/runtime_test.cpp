// The simulated runtime (libcudart.so.13) over the simulated driver: asynchrony, stream ordering and concurrency,
// the default streams, events, copies, graphs, and the sticky and non-sticky errors of real CUDA.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kernels/stock_kernels.h"
#include "support/cuda_entry_points.h"
#include "support/fresh_process.h"
#include "support/test_kernels.h"

namespace {

using namespace simtest;

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
    clear_recorded_ids();
  }
};

const void* busy() { return simkernels_host_stub("busy"); }

TEST_F(Runtime, LaunchesReturnBeforeTheKernelsRun) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(launch(busy(), stream, 200000ull), cudaSuccess);
  ASSERT_EQ(launch(&record_kernel, stream, 1), cudaSuccess);
  // The host is back while the device is still busy with the first kernel.
  EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady);
  EXPECT_TRUE(recorded_ids().empty());
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), std::vector<int>{1});
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(Runtime, EachStreamRunsItsWorkInOrder) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(launch(&record_kernel, stream, i), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<int> expected;
  for (int i = 0; i < 50; ++i) expected.push_back(i);
  EXPECT_EQ(recorded_ids(), expected);
  cudaStreamDestroy(stream);
}

// The kernel on stream A can only finish seeing the flag if the kernel on stream B runs while A's is running.
TEST_F(Runtime, StreamsRunConcurrently) {
  cudaStream_t a, b;
  ASSERT_EQ(cudaStreamCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&b), cudaSuccess);
  std::atomic<int> flag{0};
  int saw = -1;
  ASSERT_EQ(launch(&wait_flag_kernel, a, &flag, &saw), cudaSuccess);
  ASSERT_EQ(launch(&set_flag_kernel, b, &flag, 0u), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(saw, 1);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST_F(Runtime, LegacyDefaultStreamWaitsForBlockingStreams) {
  cudaStream_t blocking;
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  std::atomic<int> flag{0};
  int seen = -1;
  ASSERT_EQ(launch(&set_flag_kernel, blocking, &flag, 50000u), cudaSuccess);
  ASSERT_EQ(launch(&read_flag_kernel, nullptr, &flag, &seen), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(seen, 1) << "the legacy stream's kernel ran before the blocking stream's work finished";
  cudaStreamDestroy(blocking);
}

TEST_F(Runtime, NonBlockingStreamRunsBesideTheLegacyStream) {
  cudaStream_t nonblocking;
  ASSERT_EQ(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
  std::atomic<int> flag{0};
  int saw = -1;
  ASSERT_EQ(launch(&wait_flag_kernel, nonblocking, &flag, &saw), cudaSuccess);
  ASSERT_EQ(launch(&set_flag_kernel, nullptr, &flag, 0u), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(saw, 1);
  cudaStreamDestroy(nonblocking);
}

TEST_F(Runtime, PerThreadDefaultStreamsOfTwoThreadsRunConcurrently) {
  std::atomic<int> flag{0};
  int saw = -1;
  cudaError_t waiter_result = cudaErrorUnknown, setter_result = cudaErrorUnknown;
  std::thread waiter([&] {
    void* args[] = {&flag, &saw};
    std::atomic<int>* f = &flag;
    int* s = &saw;
    args[0] = &f;
    args[1] = &s;
    waiter_result = cudaLaunchKernel_ptsz(reinterpret_cast<const void*>(&wait_flag_kernel), dim3{1}, dim3{1}, args,
                                          0, nullptr);
    if (waiter_result == cudaSuccess) waiter_result = cudaStreamSynchronize(cudaStreamPerThread);
  });
  std::thread setter([&] {
    std::atomic<int>* f = &flag;
    unsigned us = 1000;
    void* args[] = {&f, &us};
    setter_result =
        cudaLaunchKernel_ptsz(reinterpret_cast<const void*>(&set_flag_kernel), dim3{1}, dim3{1}, args, 0, nullptr);
    if (setter_result == cudaSuccess) setter_result = cudaStreamSynchronize_ptsz(nullptr);
  });
  waiter.join();
  setter.join();
  EXPECT_EQ(waiter_result, cudaSuccess);
  EXPECT_EQ(setter_result, cudaSuccess);
  EXPECT_EQ(saw, 1);
}

TEST_F(Runtime, ArgumentsAreCopiedAtLaunch) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(launch(busy(), stream, 20000ull), cudaSuccess);
  int id = 7;
  void* args[] = {&id};
  ASSERT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(&record_kernel), dim3{1}, dim3{1}, args, 0, stream),
            cudaSuccess);
  id = 8;  // the caller reuses its argument storage before the kernel runs
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), std::vector<int>{7});
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, EventsCompleteWithTheWorkBeforeThem) {
  cudaStream_t stream;
  cudaEvent_t event;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&event), cudaSuccess);
  ASSERT_EQ(launch(busy(), stream, 100000ull), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(event), cudaErrorNotReady);
  ASSERT_EQ(cudaEventSynchronize(event), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(event), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, StreamWaitEventOrdersWorkAcrossStreams) {
  cudaStream_t producer, consumer;
  cudaEvent_t done;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&done), cudaSuccess);
  std::atomic<int> flag{0};
  int seen = -1;
  ASSERT_EQ(launch(&set_flag_kernel, producer, &flag, 50000u), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(done, producer), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, done, 0), cudaSuccess);
  ASSERT_EQ(launch(&read_flag_kernel, consumer, &flag, &seen), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
  EXPECT_EQ(seen, 1);
  cudaEventDestroy(done);
  cudaStreamDestroy(producer);
  cudaStreamDestroy(consumer);
}

TEST_F(Runtime, BlockingCopiesSeeTheKernelsBeforeThem) {
  float host[4] = {1, 2, 3, 4};
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, sizeof host), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(launch(busy(), nullptr, 20000ull), cudaSuccess);
  ASSERT_EQ(launch(&scale_kernel, nullptr, static_cast<float*>(device), 4l, 10.0f), cudaSuccess);
  float result[4] = {};
  ASSERT_EQ(cudaMemcpy(result, device, sizeof result, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(result[0], 10.0f);
  EXPECT_EQ(result[3], 40.0f);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  EXPECT_EQ(cudaFree(host), cudaErrorInvalidValue) << "freeing memory the device never gave out";
}

TEST_F(Runtime, TooLargeBlockIsANonStickyInvalidConfiguration) {
  (void)cudaGetLastError();  // an earlier test's error may still be this thread's last error
  int id = 1;
  void* args[] = {&id};
  EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(&record_kernel), dim3{1}, dim3{1025}, args, 0, nullptr),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "cudaGetLastError clears a non-sticky error";
  EXPECT_EQ(launch(&record_kernel, nullptr, 2), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(recorded_ids(), std::vector<int>{2});
}

TEST_F(Runtime, UnknownHostStubIsAnInvalidDeviceFunction) {
  static int not_a_kernel;
  EXPECT_EQ(cudaLaunchKernel(&not_a_kernel, dim3{1}, dim3{1}, nullptr, 0, nullptr), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
}

TEST_F(Runtime, EveryLaunchEntryPointRunsItsKernel) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const void* stub = reinterpret_cast<const void*>(&record_kernel);
  int id = 0;
  void* args[] = {&id};

  id = 1;
  ASSERT_EQ(cudaLaunchKernel(stub, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  id = 2;
  ASSERT_EQ(cudaLaunchKernel_ptsz(stub, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  cudaKernel_t handle = nullptr;
  ASSERT_EQ(__cudaGetKernel(&handle, stub), cudaSuccess);
  id = 3;
  ASSERT_EQ(__cudaLaunchKernel(handle, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  id = 4;
  ASSERT_EQ(__cudaLaunchKernel_ptsz(handle, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3{1};
  config.blockDim = dim3{1};
  config.stream = stream;
  id = 5;
  ASSERT_EQ(cudaLaunchKernelExC(&config, stub, args), cudaSuccess);
  id = 6;
  ASSERT_EQ(cudaLaunchKernelExC_ptsz(&config, stub, args), cudaSuccess);
  id = 7;
  ASSERT_EQ(cudaLaunchCooperativeKernel(stub, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  id = 8;
  ASSERT_EQ(cudaLaunchCooperativeKernel_ptsz(stub, dim3{1}, dim3{1}, args, 0, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, CapturedGraphReplaysItsLaunches) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_EQ(launch(&record_kernel, stream, 1), cudaSuccess);
  ASSERT_EQ(launch(&record_kernel, stream, 2), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_TRUE(recorded_ids().empty()) << "captured launches do not run";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, NamesKernelsAndErrors) {
  const char* name = nullptr;
  ASSERT_EQ(cudaFuncGetName(&name, simkernels_host_stub("nll_loss")), cudaSuccess);
  EXPECT_STREQ(name, "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorAssert), "cudaErrorAssert");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorAssert), "device-side assert triggered");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  int version = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&version), cudaSuccess);
  EXPECT_EQ(version, CUDART_VERSION);
}

// The heart of the problem firstassert solves: an assert in launch k of n surfaces only at a later sync.
TEST(RuntimeFault, AssertInAnInFlightLaunchSurfacesAtTheNextSyncAndSticks) {
  FRESH_PROCESS({
    register_test_kernels();
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    StderrCapture err;
    // Launches 1..3 keep the stream busy, launch 4 asserts, 5..8 are queued behind it.
    for (int i = 1; i <= 3; ++i) {
      ASSERT_EQ(launch(busy(), stream, 30000ull), cudaSuccess);
      ASSERT_EQ(launch(&record_kernel, stream, i), cudaSuccess);
    }
    ASSERT_EQ(launch(&assert_kernel, stream, 5u), cudaSuccess) << "the failing launch itself succeeds";
    for (int i = 5; i <= 8; ++i) ASSERT_EQ(launch(&record_kernel, stream, i), cudaSuccess);
    EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "nothing has failed yet as far as the host knows";
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorAssert);
    std::string printed = err.text();
    EXPECT_EQ(printed,
              "train.cu:42: assert_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.\n");
    EXPECT_EQ(recorded_ids(), (std::vector<int>{1, 2, 3})) << "work queued behind the fault is dropped";

    // Sticky: every later call returns 710, and cudaGetLastError cannot clear it.
    void* memory = nullptr;
    EXPECT_EQ(cudaMalloc(&memory, 16), cudaErrorAssert);
    EXPECT_EQ(launch(&record_kernel, stream, 9), cudaErrorAssert);
    EXPECT_EQ(cudaStreamQuery(stream), cudaErrorAssert);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
    cudaEvent_t event;
    EXPECT_EQ(cudaEventCreate(&event), cudaErrorAssert);
    float host = 0;
    EXPECT_EQ(cudaMemcpy(&host, &host, sizeof host, cudaMemcpyHostToHost), cudaErrorAssert);
    EXPECT_EQ(cudaGetLastError(), cudaErrorAssert);
    EXPECT_EQ(cudaGetLastError(), cudaErrorAssert);
    EXPECT_EQ(recorded_ids(), (std::vector<int>{1, 2, 3}));
  });
}

TEST(RuntimeFault, IllegalAddressIsStickyWithoutAnAssertionLine) {
  FRESH_PROCESS({
    StderrCapture err;
    ASSERT_EQ(launch(simkernels_host_stub("fault"), nullptr, 700), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    EXPECT_EQ(cudaStreamQuery(nullptr), cudaErrorIllegalAddress);
    EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
    EXPECT_EQ(err.text(), "");
  });
}

TEST(RuntimeFault, NonStickyDeviceErrorIsReportedOnceBySync) {
  FRESH_PROCESS({
    ASSERT_EQ(launch(simkernels_host_stub("fault"), nullptr, 701), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchOutOfResources);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(launch(simkernels_host_stub("busy"), nullptr, 10ull), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  });
}

TEST(RuntimeFault, AssertOnOneStreamDropsWorkOnEveryStream) {
  FRESH_PROCESS({
    register_test_kernels();
    cudaStream_t a, b;
    ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
    StderrCapture err;
    ASSERT_EQ(launch(busy(), a, 300000ull), cudaSuccess);
    ASSERT_EQ(launch(&record_kernel, a, 1), cudaSuccess);
    ASSERT_EQ(launch(busy(), b, 20000ull), cudaSuccess);
    ASSERT_EQ(launch(&assert_kernel, b, 0u), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(a), cudaErrorAssert);
    EXPECT_EQ(cudaStreamSynchronize(b), cudaErrorAssert);
    EXPECT_TRUE(recorded_ids().empty());
    EXPECT_NE(err.text().find("Assertion `label < n_classes` failed."), std::string::npos);
  });
}

}  // namespace
