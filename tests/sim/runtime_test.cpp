// The simulated runtime (libcudart.so.13) over the simulated driver: asynchrony, stream ordering and concurrency,
// the default streams, events, copies, graphs, and the sticky and non-sticky errors of real CUDA.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernels/stock_kernels.h"
#include "simcuda.h"
#include "support/cuda_entry_points.h"
#include "support/fresh_process.h"
#include "support/test_kernels.h"

extern "C" void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*, dim3*,
                                       int*);

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

// The device's limits are its primary context's, through the driver: what the runtime sets, the driver reads back.
TEST_F(Runtime, DeviceLimitsAreTheContextsLimits) {
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20), cudaSuccess);
  size_t value = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&value, cudaLimitMallocHeapSize), cudaSuccess);
  EXPECT_EQ(value, 64u << 20);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 64u << 20);
  EXPECT_EQ(cudaDeviceGetLimit(&value, cudaLimitDevRuntimeSyncDepth), cudaErrorUnsupportedLimit);
  EXPECT_EQ(cudaDeviceSetLimit(static_cast<cudaLimit>(7), 1), cudaErrorInvalidValue) << "no such cudaLimit";
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 8u << 20), cudaSuccess);  // as it was
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

// The host runs far ahead of the device: a thousand launches queued on each of four streams return at once, the
// streams run side by side, and each runs its own in order.
TEST_F(Runtime, AThousandLaunchesQueuedOnEachOfFourStreams) {
  constexpr int kStreams = 4, kQueued = 1000;
  cudaStream_t streams[kStreams];
  for (cudaStream_t& s : streams) ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (cudaStream_t s : streams) ASSERT_EQ(launch(busy(), s, 100000ull), cudaSuccess);  // holds every queue back
  for (int i = 0; i < kQueued; ++i) {
    for (int k = 0; k < kStreams; ++k) ASSERT_EQ(launch(&record_kernel, streams[k], k * kQueued + i), cudaSuccess);
  }
  for (cudaStream_t s : streams) EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady) << "queued, not run";
  EXPECT_TRUE(recorded_ids().empty());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> ids = recorded_ids();
  ASSERT_EQ(ids.size(), size_t{kStreams * kQueued});
  std::vector<int> last(kStreams, -1);
  for (int id : ids) {
    EXPECT_GT(id, last[id / kQueued]) << "stream " << id / kQueued << " ran out of order";
    last[id / kQueued] = id;
  }
  for (cudaStream_t s : streams) cudaStreamDestroy(s);
}

// An assert drops every launch still queued, however deep the queue: none of the thousand behind it runs.
TEST(RuntimeFault, AnAssertDropsAThousandQueuedLaunches) {
  FRESH_PROCESS({
    register_test_kernels();
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(launch(busy(), s, 50000ull), cudaSuccess);
    ASSERT_EQ(launch(&assert_kernel, s, 0u), cudaSuccess);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(launch(&record_kernel, s, i), cudaSuccess) << "queued before the fault";
    EXPECT_EQ(cudaStreamSynchronize(s), cudaErrorAssert);
    EXPECT_TRUE(recorded_ids().empty());
  });
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

TEST_F(Runtime, BlockingStreamWaitsForEarlierWorkOnTheLegacyStream) {
  cudaStream_t blocking;
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  std::atomic<int> flag{0};
  int seen = -1;
  ASSERT_EQ(launch(&set_flag_kernel, nullptr, &flag, 50000u), cudaSuccess);
  ASSERT_EQ(launch(&read_flag_kernel, blocking, &flag, &seen), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(blocking), cudaSuccess);
  EXPECT_EQ(seen, 1) << "the blocking stream's kernel ran before the legacy stream's earlier work finished";
  cudaStreamDestroy(blocking);
}

// A tool (or a library such as Triton) pushing and popping the context on the runtime's thread must leave the
// runtime's context current. Run on a thread of its own: the context stack is per thread.
TEST_F(Runtime, PushAndPopOfTheContextLeaveThePrimaryContextCurrent) {
  std::thread([] {
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    CUcontext primary = nullptr;
    ASSERT_EQ(cuCtxGetCurrent(&primary), CUDA_SUCCESS);
    ASSERT_NE(primary, nullptr) << "the runtime binds its context to the thread";
    ASSERT_EQ(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, primary);
    CUcontext current = nullptr;
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, primary) << "the pop must uncover the context the runtime had bound";
    void* memory = nullptr;
    EXPECT_EQ(cudaMalloc(&memory, 64), cudaSuccess);
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    EXPECT_EQ(launch(&record_kernel, stream, 1), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
    EXPECT_EQ(cudaFree(memory), cudaSuccess);
  }).join();
  EXPECT_EQ(recorded_ids(), std::vector<int>{1});
}

TEST_F(Runtime, RuntimeRebindsThePrimaryContextWhenTheThreadHasNone) {
  std::thread([] {
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    CUcontext primary = nullptr;
    ASSERT_EQ(cuCtxGetCurrent(&primary), CUDA_SUCCESS);
    ASSERT_NE(primary, nullptr);
    ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    CUcontext current = primary;
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
    void* memory = nullptr;
    EXPECT_EQ(cudaMalloc(&memory, 64), cudaSuccess) << "the runtime's next call binds the primary context again";
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, primary);
    EXPECT_EQ(cudaFree(memory), cudaSuccess);
  }).join();
}

// Only kernel launches are captured; other work fails with the capture error, is not run, and invalidates the
// capture, which then ends without a graph.
TEST_F(Runtime, UncapturableWorkFailsDoesNotRunAndInvalidatesTheCapture) {
  (void)cudaGetLastError();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int* slot = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&slot), sizeof(int)), cudaSuccess);
  const int zero = 0, value = 42;
  ASSERT_EQ(cudaMemcpy(slot, &zero, sizeof zero, cudaMemcpyHostToDevice), cudaSuccess);
  static std::atomic<int> host_function_runs{0};
  host_function_runs = 0;
  cudaEvent_t start, marker;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&marker), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);

  struct Case {
    const char* what;
    cudaError_t (*issue)(cudaStream_t, int*, const int*, cudaEvent_t);
  };
  const Case cases[] = {
      {"cudaMemcpyAsync",
       [](cudaStream_t s, int* dst, const int* src, cudaEvent_t) {
         return cudaMemcpyAsync(dst, src, sizeof(int), cudaMemcpyHostToDevice, s);
       }},
      {"cudaLaunchHostFunc",
       [](cudaStream_t s, int*, const int*, cudaEvent_t) {
         return cudaLaunchHostFunc(s, [](void*) { host_function_runs.fetch_add(1); }, nullptr);
       }},
      {"cudaEventRecord", [](cudaStream_t s, int*, const int*, cudaEvent_t e) { return cudaEventRecord(e, s); }},
  };
  int id = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    EXPECT_EQ(launch(&record_kernel, stream, ++id), cudaSuccess) << "kernel launches are captured";
    EXPECT_EQ(c.issue(stream, slot, &value, marker), cudaErrorStreamCaptureUnsupported);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
    auto graph = reinterpret_cast<cudaGraph_t>(&id);  // must be overwritten
    EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
    EXPECT_EQ(graph, nullptr);
    ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusNone);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << "the capture errors are not sticky";
  }
  int landed = -1;
  ASSERT_EQ(cudaMemcpy(&landed, slot, sizeof landed, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(landed, 0) << "the copy issued during the capture ran";
  EXPECT_EQ(host_function_runs.load(), 0) << "the host function issued during the capture ran";
  float ms = 0;
  EXPECT_NE(cudaEventElapsedTime(&ms, start, marker), cudaSuccess)
      << "the event issued during the capture was recorded";
  EXPECT_TRUE(recorded_ids().empty()) << "the kernels of an invalidated capture never run";

  // The stream captures and runs as before.
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(launch(&record_kernel, stream, 10), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_NE(graph, nullptr);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(launch(&record_kernel, stream, 11), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), (std::vector<int>{10, 11}));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  cudaEventDestroy(start);
  cudaEventDestroy(marker);
  cudaFree(slot);
  cudaStreamDestroy(stream);
  (void)cudaGetLastError();
}

// How PyTorch reaches driver entry points it does not link: the driver's own addresses, by cuGetProcAddress.
TEST_F(Runtime, GetDriverEntryPointGivesTheDriversEntryPoints) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  ASSERT_EQ(cudaGetDriverEntryPoint("cuLaunchKernel", &fn, cudaEnableDefault, &status), cudaSuccess);
  EXPECT_EQ(status, cudaDriverEntryPointSuccess);
  EXPECT_NE(fn, nullptr);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuLaunchKernel"));
  ASSERT_EQ(cudaGetDriverEntryPoint("cuLaunchKernel", &fn, cudaEnablePerThreadDefaultStream, &status), cudaSuccess);
  EXPECT_NE(fn, nullptr);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz"));
  fn = &status;
  status = cudaDriverEntryPointSuccess;
  // Not an error (NVIDIA's documentation): the pointer is NULL, the status says why, the last error stays clear.
  EXPECT_EQ(cudaGetDriverEntryPoint("cuNoSuchEntryPoint", &fn, cudaEnableDefault, &status), cudaSuccess);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(fn, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
#pragma GCC diagnostic pop
}

TEST_F(Runtime, ElapsedTimeBetweenTwoRecordedEventsIsNotNegative) {
  cudaStream_t stream;
  cudaEvent_t start, end;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&end), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  ASSERT_EQ(launch(busy(), stream, 2000ull), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(end, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(end), cudaSuccess);
  float ms = -1;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, end), cudaSuccess);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(end), cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, MemsetAsyncFillsAfterThePriorWorkOfItsStream) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  unsigned char* memory = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&memory), 64), cudaSuccess);
  ASSERT_EQ(launch(busy(), stream, 20000ull), cudaSuccess);
  ASSERT_EQ(launch(&store_int_kernel, stream, reinterpret_cast<int*>(memory), 7), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(memory, 0x5a, 64, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  unsigned char host[64] = {};
  ASSERT_EQ(cudaMemcpy(host, memory, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned char byte : host) ASSERT_EQ(byte, 0x5a);
  EXPECT_EQ(cudaFree(memory), cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Runtime, EmptyAllocationSucceedsWithANullPointer) {
  void* memory = &memory;
  EXPECT_EQ(cudaMalloc(&memory, 0), cudaSuccess);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(cudaFree(memory), cudaSuccess);
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

// Waits for the assert of assert_kernel through calls that do not synchronize, then checks that neither they, nor a
// launch or cudaGetLastError after the fault, print the driver's assertion line.
void expect_fault_learned_without_printing(cudaStream_t stream) {
  StderrCapture err;
  ASSERT_EQ(launch(&assert_kernel, stream, 5u), cudaSuccess);
  cudaError_t seen = cudaSuccess;
  for (int i = 0; i < 10000 && (seen = cudaPeekAtLastError()) == cudaSuccess; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(seen, cudaErrorAssert);
  EXPECT_EQ(launch(&record_kernel, stream, 1), cudaErrorAssert);
  EXPECT_EQ(cudaGetLastError(), cudaErrorAssert);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorAssert);
  EXPECT_EQ(err.text(), "") << "printed before any synchronizing call";
}

const char* const kAssertLine =
    "train.cu:42: assert_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.\n";

// The driver prints a device's assertion line when the host synchronizes, not when a call merely learns the error.
TEST(RuntimeFault, CallsThatDoNotSynchronizeDoNotPrintTheAssertionLine) {
  FRESH_PROCESS({
    register_test_kernels();
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    expect_fault_learned_without_printing(stream);
    EXPECT_TRUE(recorded_ids().empty());
  });
}

// Even when an earlier call already learnt the sticky error, the first synchronization prints the line, once.
TEST(RuntimeFault, FirstSynchronizeAfterTheFaultPrintsTheAssertionLineOnce) {
  FRESH_PROCESS({
    register_test_kernels();
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    expect_fault_learned_without_printing(stream);
    {
      StderrCapture err;
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorAssert);
      EXPECT_EQ(err.text(), kAssertLine);
    }
    {
      StderrCapture err;
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorAssert);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
      EXPECT_EQ(err.text(), "") << "the line is printed once";
    }
  });
}

// Kernels registered as PyTorch registers its own (a host stub and a mangled name, no body): one whose parameters
// cannot be sized from its name (a functor and a std::array by value) runs as a no-op; one of a family registered
// afterwards runs the family's body, which can tell which member it runs for.
void fill_stub() {}
void family_member_stub() {}
std::atomic<const char*> family_member_seen{nullptr};
void family_body(void** args, dim3, dim3) {
  **static_cast<float**>(args[0]) = 42.0f;
  family_member_seen = simcuda_running_kernel_name();
}
constexpr const char* kFillName =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
constexpr const char* kMemberName = "_ZN4test6family6memberIfEEvPfl";

TEST(RuntimeFamilies, UnsizableKernelsRunAsNoOpsAndFamiliesRunTheirBody) {
  FRESH_PROCESS({
    void* module = nullptr;
    __cudaRegisterFunction(&module, reinterpret_cast<const char*>(&fill_stub), const_cast<char*>(kFillName),
                           kFillName, -1, nullptr, nullptr, nullptr, nullptr, nullptr);
    __cudaRegisterFunction(&module, reinterpret_cast<const char*>(&family_member_stub),
                           const_cast<char*>(kMemberName), kMemberName, -1, nullptr, nullptr, nullptr, nullptr,
                           nullptr);
    simcuda_register_kernel_family("test::family::member", family_body);
    int n = 4;
    struct { float value; } functor{1.0f};
    void* array[1] = {nullptr};
    void* fill_args[] = {&n, &functor, &array};
    ASSERT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(&fill_stub), dim3{1}, dim3{32}, fill_args, 0, nullptr),
              cudaSuccess);
    float* out = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float)), cudaSuccess);
    long count = 1;
    void* member_args[] = {&out, &count};
    ASSERT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(&family_member_stub), dim3{1}, dim3{1}, member_args, 0,
                               nullptr),
              cudaSuccess);
    float back = 0;
    ASSERT_EQ(cudaMemcpy(&back, out, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, 42.0f);
    ASSERT_NE(family_member_seen.load(), nullptr);
    EXPECT_STREQ(family_member_seen.load(), kMemberName);
  });
}

// The device is H100-class, and the runtime's properties are the driver's attributes, as NVIDIA's runtime builds them.
TEST(RuntimeDevice, PropertiesAreThoseOfAnH100ClassDeviceAndAgreeWithTheDriver) {
  FRESH_PROCESS({
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    EXPECT_NE(std::string(prop.name).find("H100"), std::string::npos) << prop.name;
    EXPECT_EQ(prop.major, 9);
    EXPECT_EQ(prop.minor, 0);
    EXPECT_EQ(prop.multiProcessorCount, 132);
    EXPECT_EQ(prop.totalGlobalMem, size_t{80} << 30);
    EXPECT_EQ(prop.warpSize, 32);
    EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
    EXPECT_EQ(prop.sharedMemPerBlockOptin, size_t{232448});
    int value = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxThreadsPerMultiProcessor, 0), cudaSuccess);
    EXPECT_EQ(prop.maxThreadsPerMultiProcessor, value);
    ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, 0), cudaSuccess);
    EXPECT_EQ(prop.l2CacheSize, value);
    EXPECT_EQ(cudaGetDeviceProperties(&prop, 1), cudaErrorInvalidDevice);

    size_t free = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, size_t{1} << 20), cudaSuccess);
    size_t free_after = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
    EXPECT_EQ(total, prop.totalGlobalMem);
    EXPECT_EQ(free - free_after, size_t{1} << 20) << "an allocation is taken from the free memory";
    char bus[32];
    ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, 0), cudaSuccess);
    EXPECT_STREQ(bus, "0000:18:00.0");
  });
}

TEST(RuntimeStreams, PrioritiesAreClampedToTheDevicesRangeAndReported) {
  FRESH_PROCESS({
    int least = 1, greatest = 1;
    ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
    EXPECT_EQ(least, 0);
    EXPECT_LT(greatest, least) << "lower numbers are greater priorities";
    cudaStream_t high, beyond;
    ASSERT_EQ(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithPriority(&beyond, cudaStreamNonBlocking, greatest - 10), cudaSuccess);
    int priority = 1;
    ASSERT_EQ(cudaStreamGetPriority(high, &priority), cudaSuccess);
    EXPECT_EQ(priority, greatest);
    ASSERT_EQ(cudaStreamGetPriority(beyond, &priority), cudaSuccess);
    EXPECT_EQ(priority, greatest) << "out-of-range priorities are clamped";
  });
}

TEST(RuntimeStreams, StreamOrderedFreeWaitsForTheWorkQueuedBeforeIt) {
  FRESH_PROCESS({
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    void* p = nullptr;
    ASSERT_EQ(cudaMallocAsync(&p, 256, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(p, 7, 256, stream), cudaSuccess);
    std::vector<unsigned char> back(256);
    ASSERT_EQ(cudaMemcpyAsync(back.data(), p, 256, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaFreeAsync(p, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(back[255], 7);
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, back.data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
    ASSERT_EQ(cudaHostRegister(back.data(), back.size(), cudaHostRegisterDefault), cudaSuccess);
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, back.data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
    ASSERT_EQ(cudaHostUnregister(back.data()), cudaSuccess);
  });
}

TEST(RuntimeLimits, InterProcessMemoryIsNotSupportedAndSaysSoOnce) {
  FRESH_PROCESS({
    StderrCapture err;
    cudaIpcMemHandle_t handle;
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, 64), cudaSuccess);
    EXPECT_EQ(cudaIpcGetMemHandle(&handle, p), cudaErrorNotSupported);
    EXPECT_EQ(cudaIpcGetMemHandle(&handle, p), cudaErrorNotSupported);
    EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
    EXPECT_EQ(err.text(), "simcuda: cudaIpcGetMemHandle is not supported by the simulator\n");
  });
}

// ---- the process exiting with work still queued ------------------------------------------------------------------

// What the kernels of the exit tests write into: a function-local static that marks itself dead when destroyed. The
// test builds it before the device exists, so it is destroyed after the simulator's exit handler has run. (A static
// built after the device is destroyed before that handler: kernel bodies, which on the simulator are host code, can
// still reach it. A known limit of the simulator, see docs/architecture.md; real kernels never touch host statics.)
struct ExitSink {
  std::atomic<bool> dead{false};
  std::atomic<long> writes{0};
  std::atomic<cudaStream_t> stream{nullptr};
  ~ExitSink();
};

ExitSink& exit_sink() {
  static ExitSink sink;
  return sink;
}

ExitSink::~ExitSink() {
  dead.store(true);
  // While the device still runs the queued kernels, the next one finds this object destroyed (and exits with 3):
  // wait for that, bounded, so that a missing teardown fails every time rather than by chance.
  for (int i = 0; i < 10000 && cudaStreamQuery(stream.load()) == cudaErrorNotReady; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

volatile int exit_stub_calls = 0;
void exit_work_kernel(unsigned long long) { exit_stub_calls = 1; }
void exit_assert_kernel(std::atomic<int>*) { exit_stub_calls = 2; }

void register_exit_kernels() {
  const size_t u64[] = {sizeof(unsigned long long)};
  simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&exit_work_kernel), "exit_work_kernel",
                                      [](void** a, dim3, dim3) {
                                        ExitSink& sink = exit_sink();
                                        if (sink.dead.load()) _exit(3);  // ran after the program's statics died
                                        unsigned long long us;
                                        std::memcpy(&us, a[0], sizeof us);
                                        simcuda_sleep_us(static_cast<unsigned>(us));
                                        if (sink.dead.load()) _exit(3);
                                        sink.writes.fetch_add(1);
                                      },
                                      1, u64);
  const size_t one_pointer[] = {sizeof(void*)};
  simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&exit_assert_kernel), "exit_assert_kernel",
                                      [](void** a, dim3, dim3) {
                                        simcuda_device_assert("exit.cu", 7, "exit_assert_kernel", "never synchronized",
                                                              dim3{2, 0, 0}, dim3{3, 0, 0});
                                        std::atomic<int>* raised;
                                        std::memcpy(&raised, a[0], sizeof raised);
                                        raised->store(1);
                                      },
                                      1, one_pointer);
}

TEST(RuntimeExit, ExitWithKernelsStillQueuedIsPromptAndClean) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);  // a hang at exit fails this test instead of the whole suite
        (void)exit_sink();
        register_exit_kernels();
        cudaStream_t stream;
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) _exit(10);
        exit_sink().stream = stream;
        for (int i = 0; i < 200; ++i) {
          if (launch(&exit_work_kernel, stream, 2000ull) != cudaSuccess) _exit(11);
          if (launch(&exit_work_kernel, nullptr, 2000ull) != cudaSuccess) _exit(12);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(RuntimeExit, AssertionNeverSynchronizedOnIsPrintedAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);
        register_exit_kernels();
        static std::atomic<int> raised{0};
        if (launch(&exit_assert_kernel, nullptr, &raised) != cudaSuccess) _exit(10);
        // Wait for the assert on the host side only: no CUDA call learns of it before the exit.
        for (int i = 0; i < 10000 && raised.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::exit(raised.load() == 1 ? 0 : 11);
      },
      ::testing::ExitedWithCode(0),
      "exit\\.cu:7: exit_assert_kernel: block: \\[2,0,0\\], thread: \\[3,0,0\\] "
      "Assertion `never synchronized` failed\\.");
}

}  // namespace
