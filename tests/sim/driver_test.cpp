// The simulated driver (libcuda.so.1) as Triton and firstassert use it: modules and functions by mangled name,
// cuLaunchKernel/cuLaunchKernelEx, cuGetProcAddress, stream memory operations on host-mapped memory, capture
// status, CUDA_INJECTION64_PATH, and faults. Graphs themselves: graph_test.cpp.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "kernels/stock_kernels.h"
#include "simcuda.h"
#include "support/fresh_process.h"

extern "C" {
// Exported by libcuda under these names; the toolkit headers declare them only for the driver's own build.
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     CUstream, void**, void**);
CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream, CUdeviceptr, cuuint64_t, unsigned);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);
}

namespace {

const char* kBusyName = "_ZN10simkernels11busy_kernelEy";
const char* kFaultName = "_ZN10simkernels12fault_kernelEi";
const char* kAddName = "_ZN2at6native22elementwise_add_kernelIfEEvPT_PKS2_S5_S2_l";

// As a Triton-style program does: initialize, bind the primary context, load a module.
class Driver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(simkernels_host_stub("busy"), nullptr);  // loads and registers the stock kernels
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUdevice device;
    ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
    CUcontext context;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    static const char image[] = "simulated cubin";
    ASSERT_EQ(cuModuleLoadData(&module_, image), CUDA_SUCCESS);
  }
  void TearDown() override { cuModuleUnload(module_); }

  CUfunction function(const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, module_, name), CUDA_SUCCESS) << name;
    return f;
  }

  CUmodule module_ = nullptr;
};

CUresult launch_busy(CUfunction busy, CUstream stream, unsigned long long us) {
  void* args[] = {&us};
  return cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr);
}

// What PyTorch's caching allocator and launch heuristics ask of the driver about memory and functions.
TEST_F(Driver, PointerAttributesDescribeTheAllocationHoldingAnAddress) {
  CUdeviceptr base = 0;
  ASSERT_EQ(cuMemAlloc_v2(&base, 4096), CUDA_SUCCESS);
  CUdeviceptr start = 0;
  size_t size = 0;
  ASSERT_EQ(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, base + 100), CUDA_SUCCESS);
  ASSERT_EQ(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, base + 100), CUDA_SUCCESS);
  EXPECT_EQ(start, base);
  EXPECT_EQ(size, 4096u);
  unsigned type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, base), CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  ASSERT_EQ(cuMemGetAddressRange_v2(&start, &size, base + 4095), CUDA_SUCCESS);
  EXPECT_EQ(start, base);
  int on_stack = 0;
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(&on_stack)),
            CUDA_ERROR_INVALID_VALUE)
      << "memory the driver does not know";
  EXPECT_EQ(cuMemFree_v2(base), CUDA_SUCCESS);
}

TEST_F(Driver, MemsetD32FillsWordsInTheStreamsOrder) {
  CUdeviceptr words = 0;
  ASSERT_EQ(cuMemAlloc_v2(&words, 16 * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(words, 0xdeadbeefu, 16, nullptr), CUDA_SUCCESS);
  uint32_t back[16] = {};
  ASSERT_EQ(cuMemcpyDtoH_v2(back, words, sizeof back), CUDA_SUCCESS);
  for (uint32_t word : back) EXPECT_EQ(word, 0xdeadbeefu);
  EXPECT_EQ(cuMemsetD32Async(words + 2, 0, 1, nullptr), CUDA_ERROR_INVALID_VALUE) << "not 4-byte aligned";
  EXPECT_EQ(cuMemFree_v2(words), CUDA_SUCCESS);
}

TEST_F(Driver, OccupancyFallsWithBlockSizeAndDynamicSharedMemory) {
  CUfunction busy = function(kBusyName);
  int small = 0, large = 0, shared = 0;
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&small, busy, 64, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&large, busy, 1024, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&shared, busy, 64, 100 * 1024), CUDA_SUCCESS);
  EXPECT_GE(small, large);
  EXPECT_GE(large, 1) << "a 1024-thread block fits an SM of 2048 threads";
  EXPECT_LE(large * 1024, 2048);
  EXPECT_LT(shared, small) << "100 KiB of shared memory per block leaves room for two blocks";
  int threads = 0;
  ASSERT_EQ(cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, busy), CUDA_SUCCESS);
  EXPECT_EQ(threads, 1024);
  EXPECT_EQ(cuFuncSetAttribute(busy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 300 * 1024),
            CUDA_ERROR_INVALID_VALUE)
      << "more than the device's opt-in shared memory per block";
}

TEST_F(Driver, FunctionsAreFoundByMangledNameAndLaunched) {
  CUfunction add = function(kAddName);
  ASSERT_NE(add, nullptr);
  const char* name = nullptr;
  ASSERT_EQ(cuFuncGetName(&name, add), CUDA_SUCCESS);
  EXPECT_STREQ(name, kAddName);
  CUfunction missing = nullptr;
  EXPECT_EQ(cuModuleGetFunction(&missing, module_, "_Z7missingv"), CUDA_ERROR_NOT_FOUND);

  CUdeviceptr a, b, out;
  ASSERT_EQ(cuMemAlloc(&a, 4 * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 4 * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&out, 4 * sizeof(float)), CUDA_SUCCESS);
  float ha[4] = {1, 2, 3, 4}, hb[4] = {10, 20, 30, 40}, hout[4] = {};
  ASSERT_EQ(cuMemcpyHtoD(a, ha, sizeof ha), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoD(b, hb, sizeof hb), CUDA_SUCCESS);
  float alpha = 0.5f;
  long n = 4;
  void* args[] = {&out, &a, &b, &alpha, &n};
  ASSERT_EQ(cuLaunchKernel(add, 1, 1, 1, 4, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH(hout, out, sizeof hout), CUDA_SUCCESS);
  EXPECT_FLOAT_EQ(hout[0], 6.0f);
  EXPECT_FLOAT_EQ(hout[3], 24.0f);

  // cuLaunchKernelEx, as Triton's launcher uses it.
  alpha = 1.0f;
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 4;
  config.blockDimY = config.blockDimZ = 1;
  ASSERT_EQ(cuLaunchKernelEx(&config, add, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH(hout, out, sizeof hout), CUDA_SUCCESS);
  EXPECT_FLOAT_EQ(hout[1], 22.0f);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(out), CUDA_SUCCESS);
}

TEST_F(Driver, RejectsBadLaunchesSynchronouslyWithoutStickiness) {
  CUfunction busy = function(kBusyName);
  unsigned long long us = 1;
  void* args[] = {&us};
  EXPECT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1025, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(busy, 0, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, reinterpret_cast<CUstream>(0x1234), args, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_F(Driver, GetProcAddressGivesTheVersionedAndPerThreadEntryPoints) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  ASSERT_EQ(cuGetProcAddress("cuLaunchKernel", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuLaunchKernel"));
  ASSERT_EQ(cuGetProcAddress("cuLaunchKernel", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                             &status),
            CUDA_SUCCESS);
  EXPECT_EQ(fn, reinterpret_cast<void*>(&cuLaunchKernel_ptsz));
  ASSERT_EQ(cuGetProcAddress("cuStreamWriteValue64", &fn, CUDA_VERSION, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(fn, reinterpret_cast<void*>(&cuStreamWriteValue64_v2));
  ASSERT_EQ(cuGetProcAddress("cuGetProcAddress", &fn, CUDA_VERSION, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
  EXPECT_EQ(cuGetProcAddress("cuNoSuchEntryPoint", &fn, CUDA_VERSION, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(fn, nullptr);
}

TEST_F(Driver, StreamWriteValueLandsAfterThePriorWorkOfItsStream) {
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
  *static_cast<volatile uint64_t*>(host) = 0;
  CUdeviceptr slot = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer(&slot, host, 0), CUDA_SUCCESS);
  ASSERT_EQ(launch_busy(function(kBusyName), stream, 100000), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue64(stream, slot, 42, 0), CUDA_SUCCESS);
  EXPECT_EQ(*static_cast<volatile uint64_t*>(host), 0u) << "the write waits for the kernel before it";
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(*static_cast<volatile uint64_t*>(host), 42u);
  EXPECT_EQ(cuStreamWriteValue64(stream, slot + 4, 1, 0), CUDA_ERROR_INVALID_VALUE) << "misaligned";
  uint64_t unmapped = 0;
  EXPECT_EQ(cuStreamWriteValue64(stream, reinterpret_cast<CUdeviceptr>(&unmapped), 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(Driver, CaptureStatusFollowsBeginAndEnd) {
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);

  // Synchronizing a capturing stream is refused and breaks the capture, as on CUDA.
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  graph = reinterpret_cast<CUgraph>(0x1);
  EXPECT_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
      << "the legacy stream cannot be captured";
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(Driver, PerThreadVariantsUseTheCallingThreadsStream) {
  CUfunction busy = function(kBusyName);
  unsigned long long us = 50000;
  void* args[] = {&us};
  ASSERT_EQ(cuLaunchKernel_ptsz(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuStreamSynchronize_ptsz(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
}

// cuCtxSetLimit is a request the driver may clamp; cuCtxGetLimit reads back what was set (what Triton's driver
// utilities do when they load a kernel). The documented starting values; an H100's unsupported and query-only limits.
TEST_F(Driver, ContextLimitsAreSetAndReadBack) {
  size_t value = 0;
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 1024u);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_PRINTF_FIFO_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 1u << 20);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 8u << 20);
  ASSERT_EQ(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 4096u);
  ASSERT_EQ(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 1000), CUDA_SUCCESS) << "a hint, clamped";
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_MAX_L2_FETCH_GRANULARITY), CUDA_SUCCESS);
  EXPECT_EQ(value, 128u);
  int most = 0;
  ASSERT_EQ(cuDeviceGetAttribute(&most, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, size_t{1} << 40), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_PERSISTING_L2_CACHE_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, static_cast<size_t>(most)) << "at most the device's persisting L2";
  EXPECT_EQ(cuCtxGetLimit(&value, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH), CUDA_ERROR_UNSUPPORTED_LIMIT)
      << "gone from compute capability 9.0";
  EXPECT_EQ(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1), CUDA_ERROR_INVALID_VALUE) << "can only be queried";
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_CIG_ENABLED), CUDA_SUCCESS);
  EXPECT_EQ(value, 0u) << "not a CIG context";
  EXPECT_EQ(cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSetLimit(CU_LIMIT_MAX, 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024), CUDA_SUCCESS);  // as it was, for the tests after this one
}

TEST_F(Driver, NamesErrors) {
  const char* text = nullptr;
  ASSERT_EQ(cuGetErrorName(CUDA_ERROR_ASSERT, &text), CUDA_SUCCESS);
  EXPECT_STREQ(text, "CUDA_ERROR_ASSERT");
  ASSERT_EQ(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &text), CUDA_SUCCESS);
  EXPECT_STREQ(text, "an illegal memory access was encountered");
  EXPECT_EQ(cuGetErrorName(static_cast<CUresult>(12345), &text), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Driver, PushThenPopLeavesTheContextBeneathCurrent) {
  CUcontext context = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&context), CUDA_SUCCESS);
  ASSERT_NE(context, nullptr);
  ASSERT_EQ(cuCtxPushCurrent(context), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, context);
  CUcontext current = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, context) << "the pop must uncover the context set before the push";
  CUstream stream = nullptr;
  EXPECT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  EXPECT_EQ(launch_busy(function(kBusyName), stream, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

// The context stack is per thread: a new thread starts with an empty one.
TEST_F(Driver, ContextStackPopsInOrderAndRefusesToPopWhenEmpty) {
  CUcontext primary = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&primary), CUDA_SUCCESS);
  std::thread([primary] {
    CUcontext popped = nullptr;
    EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext current = primary;
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
    ASSERT_EQ(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, primary);
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, primary) << "one push is left";
    CUstream stream = nullptr;
    EXPECT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
    popped = nullptr;
    ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, primary);
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
    EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(cuStreamCreate(&stream, 0), CUDA_ERROR_INVALID_CONTEXT);
    // cuCtxSetCurrent replaces the top, or pushes onto an empty stack; nullptr pops.
    ASSERT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(primary), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
    EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
  }).join();
}

TEST_F(Driver, StreamWriteValue32LandsAfterThePriorWorkOfItsStream) {
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 2 * sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
  auto* slots = static_cast<volatile uint32_t*>(host);
  slots[0] = 0;
  slots[1] = 0;
  CUdeviceptr slot = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer(&slot, host, 0), CUDA_SUCCESS);
  ASSERT_EQ(launch_busy(function(kBusyName), stream, 100000), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32(stream, slot, 42, 0), CUDA_SUCCESS);
  EXPECT_EQ(slots[0], 0u) << "the write waits for the kernel before it";
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(slots[0], 42u);
  EXPECT_EQ(slots[1], 0u) << "a 32-bit write touches 4 bytes";
  ASSERT_EQ(cuStreamWriteValue32(stream, slot + 4, 7, 0), CUDA_SUCCESS) << "4-byte alignment is enough";
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(slots[1], 7u);
  EXPECT_EQ(slots[0], 42u);
  EXPECT_EQ(cuStreamWriteValue32(stream, slot + 2, 1, 0), CUDA_ERROR_INVALID_VALUE) << "misaligned";
  uint32_t unmapped = 0;
  EXPECT_EQ(cuStreamWriteValue32(stream, reinterpret_cast<CUdeviceptr>(&unmapped), 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

// A breadcrumb written during a capture is captured, as CUDA captures stream memory operations: a batch
// memory-operation node of the graph, landing when the graph is replayed rather than when it was issued.
TEST_F(Driver, StreamWritesDuringCaptureAreCapturedAndLandOnReplay) {
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&host, 2 * sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
  auto* slots = static_cast<volatile uint64_t*>(host);
  slots[0] = 0;
  slots[1] = 0;
  CUdeviceptr slot = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer(&slot, host, 0), CUDA_SUCCESS);

  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(launch_busy(function(kBusyName), stream, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWriteValue64(stream, slot, 42, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWriteValue32(stream, slot + 8, 43, 0), CUDA_SUCCESS);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  ASSERT_NE(graph, nullptr);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(slots[0], 0u) << "a write issued during the capture landed";
  EXPECT_EQ(slots[1], 0u);
  size_t count = 0;
  ASSERT_EQ(cuGraphGetNodes(graph, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 3u) << "the kernel and one node per write";

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(slots[0], 42u);
  EXPECT_EQ(slots[1], 43u);

  // Outside a capture a write lands on its own.
  ASSERT_EQ(cuStreamWriteValue64(stream, slot, 44, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(slots[0], 44u);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST(DriverInit, CallsBeforeCuInitFail) {
  FRESH_PROCESS({
    int count = -1;
    EXPECT_EQ(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    CUstream stream;
    EXPECT_EQ(cuStreamCreate(&stream, 0), CUDA_ERROR_NOT_INITIALIZED);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    EXPECT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(cuStreamCreate(&stream, 0), CUDA_ERROR_INVALID_CONTEXT) << "no context is current yet";
  });
}

TEST(DriverInit, CuInitCallsInitializeInjectionOfTheLibraryNamedByTheEnvironment) {
  FRESH_PROCESS({
    setenv("CUDA_INJECTION64_PATH", SIM_INJECTION_PROBE_PATH, 1);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    using Counter = int (*)();
    auto calls = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "injection_probe_initialize_calls"));
    auto driver_ok = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "injection_probe_driver_calls_ok"));
    ASSERT_NE(calls, nullptr) << "cuInit did not load " << SIM_INJECTION_PROBE_PATH;
    EXPECT_EQ(calls(), 1) << "InitializeInjection runs once per process";
    EXPECT_EQ(driver_ok(), 1) << "the driver answers calls made from InitializeInjection";
  });
}

TEST(DriverInit, UnloadableInjectionLibraryIsReportedAndIgnored) {
  FRESH_PROCESS({
    setenv("CUDA_INJECTION64_PATH", "/nonexistent/libtool.so", 1);
    simtest::StderrCapture err;
    EXPECT_EQ(cuInit(0), CUDA_SUCCESS);
    EXPECT_NE(err.text().find("cannot load CUDA_INJECTION64_PATH=/nonexistent/libtool.so"), std::string::npos);
  });
}

TEST(DriverLimits, WhatIsNotModelledFailsWithNotSupportedAndSaysSoOnce) {
  FRESH_PROCESS({
    ASSERT_NE(simkernels_host_stub("busy"), nullptr);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext context;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    simtest::StderrCapture err;
    int value = 0;
    // Texture limits are not modelled.
    EXPECT_EQ(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 0), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, 0), CUDA_ERROR_NOT_SUPPORTED);

    CUmodule module;
    ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
    CUfunction busy;
    ASSERT_EQ(cuModuleGetFunction(&busy, module, kBusyName), CUDA_SUCCESS);
    unsigned long long us = 1;
    size_t size = sizeof us;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &us, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    EXPECT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), CUDA_ERROR_NOT_SUPPORTED);

    // A kernel with an unmangled name and no declared parameter sizes cannot have its arguments copied.
    simcuda_register_kernel(nullptr, "triton_like_kernel", [](void**, dim3, dim3) {});
    CUfunction unsized;
    ASSERT_EQ(cuModuleGetFunction(&unsized, module, "triton_like_kernel"), CUDA_SUCCESS);
    void* args[] = {&us};
    EXPECT_EQ(cuLaunchKernel(unsized, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS) << "none of these is sticky";

    std::string printed = err.text();
    const std::string line = "simcuda: this cuDeviceGetAttribute attribute is not supported by the simulator\n";
    EXPECT_NE(printed.find(line), std::string::npos) << printed;
    EXPECT_EQ(printed.find(line), printed.rfind(line)) << "said once, not per call";
    // A kernel with a body needs its arguments; one without (a no-op) does not.
    EXPECT_NE(printed.find("CU_LAUNCH_PARAM_BUFFER_POINTER"), std::string::npos) << printed;
    EXPECT_NE(printed.find("parameter sizes are unknown"), std::string::npos) << printed;
  });
}

// A breadcrumb written after a kernel that faulted must never land; one written before the fault must.
TEST(DriverFault, StreamWriteAfterAFaultedKernelNeverLands) {
  FRESH_PROCESS({
    ASSERT_NE(simkernels_host_stub("busy"), nullptr);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext context;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    CUmodule module;
    ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
    CUfunction busy, fault;
    ASSERT_EQ(cuModuleGetFunction(&busy, module, kBusyName), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&fault, module, kFaultName), CUDA_SUCCESS);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    void* host = nullptr;
    ASSERT_EQ(cuMemHostAlloc(&host, 2 * sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    auto* slots = static_cast<volatile uint64_t*>(host);
    slots[0] = 0;
    slots[1] = 0;
    CUdeviceptr device_slots;
    ASSERT_EQ(cuMemHostGetDevicePointer(&device_slots, host, 0), CUDA_SUCCESS);

    ASSERT_EQ(launch_busy(busy, stream, 20000), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue64(stream, device_slots, 1, 0), CUDA_SUCCESS);
    int code = 710;
    void* args[] = {&code};
    ASSERT_EQ(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue64(stream, device_slots, 2, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue64(stream, device_slots + 8, 3, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(slots[0], 1u) << "the breadcrumb before the faulting kernel landed";
    EXPECT_EQ(slots[1], 0u) << "nothing after the faulting kernel landed";
    EXPECT_EQ(cuStreamWriteValue64(stream, device_slots, 4, 0), CUDA_ERROR_ASSERT);
    EXPECT_EQ(slots[0], 1u);
    CUcontext current = nullptr;
    EXPECT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS) << "context queries still answer";
  });
}

// In a fresh process: initialize, make the primary context current, load a module, give busy and fault.
void bring_up(CUfunction* busy, CUfunction* fault) {
  ASSERT_NE(simkernels_host_stub("busy"), nullptr);
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext context;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
  CUmodule module;
  ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(busy, module, kBusyName), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(fault, module, kFaultName), CUDA_SUCCESS);
}

TEST(DriverFault, StreamWriteValue32AfterAFaultedKernelNeverLands) {
  FRESH_PROCESS({
    CUfunction busy = nullptr, fault = nullptr;
    bring_up(&busy, &fault);
    if (::testing::Test::HasFatalFailure()) return;
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    void* host = nullptr;
    ASSERT_EQ(cuMemHostAlloc(&host, 2 * sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    auto* slots = static_cast<volatile uint32_t*>(host);
    slots[0] = 0;
    slots[1] = 0;
    CUdeviceptr device_slots;
    ASSERT_EQ(cuMemHostGetDevicePointer(&device_slots, host, 0), CUDA_SUCCESS);

    ASSERT_EQ(launch_busy(busy, stream, 20000), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue32(stream, device_slots, 1, 0), CUDA_SUCCESS);
    int code = 710;
    void* args[] = {&code};
    ASSERT_EQ(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue32(stream, device_slots, 2, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamWriteValue32(stream, device_slots + 4, 3, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(slots[0], 1u) << "the breadcrumb before the faulting kernel landed";
    EXPECT_EQ(slots[1], 0u) << "nothing after the faulting kernel landed";
    EXPECT_EQ(cuStreamWriteValue32(stream, device_slots, 4, 0), CUDA_ERROR_ASSERT);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(slots[0], 1u);
  });
}

// The driver's assertion line is printed by a synchronizing call, not by calls that merely return the sticky error.
TEST(DriverFault, CallsThatDoNotSynchronizeDoNotPrintTheAssertionLine) {
  FRESH_PROCESS({
    CUfunction busy = nullptr, fault = nullptr;
    bring_up(&busy, &fault);
    if (::testing::Test::HasFatalFailure()) return;
    simcuda_register_kernel(nullptr, "_Z18driver_assert_kerni", [](void**, dim3, dim3) {
      simcuda_device_assert("kern.py", 9, "driver_assert_kern", "idx < n", dim3{0, 0, 0}, dim3{4, 0, 0});
    });
    CUmodule module;
    ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
    CUfunction asserting;
    ASSERT_EQ(cuModuleGetFunction(&asserting, module, "_Z18driver_assert_kerni"), CUDA_SUCCESS);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    void* host = nullptr;
    ASSERT_EQ(cuMemHostAlloc(&host, sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    CUdeviceptr slot;
    ASSERT_EQ(cuMemHostGetDevicePointer(&slot, host, 0), CUDA_SUCCESS);

    simtest::StderrCapture err;
    int n = 1;
    void* args[] = {&n};
    ASSERT_EQ(cuLaunchKernel(asserting, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr), CUDA_SUCCESS);
    CUresult seen = CUDA_SUCCESS;
    CUdevice device;
    for (int i = 0; i < 10000 && (seen = cuCtxGetDevice(&device)) == CUDA_SUCCESS; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(seen, CUDA_ERROR_ASSERT);
    EXPECT_EQ(launch_busy(busy, stream, 1), CUDA_ERROR_ASSERT);
    EXPECT_EQ(cuStreamWriteValue64(stream, slot, 1, 0), CUDA_ERROR_ASSERT);
    CUstream other;
    EXPECT_EQ(cuStreamCreate(&other, 0), CUDA_ERROR_ASSERT);
    EXPECT_EQ(err.text(), "") << "printed before any synchronizing call";
  });
}

}  // namespace
