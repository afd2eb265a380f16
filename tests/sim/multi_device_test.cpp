// Several simulated GPUs in one process (SIMCUDA_DEVICES=3, set by tests/sim/meson.build): each device's identity,
// its primary context with its own streams, memory and sticky error, the runtime's per-thread device, peers, events
// across devices, CUDA_VISIBLE_DEVICES as the driver applies it, and what CUPTI says about each device's work.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernels/stock_kernels.h"
#include "simcuda.h"
#include "support/fresh_process.h"
#include "support/test_kernels.h"

namespace {

using namespace simtest;

constexpr int kDevices = 3;
const char* kAssertLine =
    "train.cu:42: assert_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.\n";

class MultiDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
    clear_recorded_ids();
  }
  void TearDown() override { cudaSetDevice(0); }
};

const void* busy() { return simkernels_host_stub("busy"); }

std::string uuid_of(const cudaUUID_t& uuid) { return std::string(uuid.bytes, sizeof uuid.bytes); }

std::string pci_bus_id(int device) {
  char bus[32] = {};
  EXPECT_EQ(cudaDeviceGetPCIBusId(bus, sizeof bus, device), cudaSuccess);
  return bus;
}

TEST_F(MultiDevice, EachDeviceHasItsOwnIdentity) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(count, kDevices);
  std::set<std::string> uuids, buses;
  std::set<int> bus_numbers;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    EXPECT_STREQ(prop.name, "NVIDIA H100 80GB HBM3 (simcuda)") << "the same model in every slot";
    uuids.insert(uuid_of(prop.uuid));
    bus_numbers.insert(prop.pciBusID);
    buses.insert(pci_bus_id(d));
    // The driver's view agrees with the runtime's.
    CUuuid driver_uuid{};
    ASSERT_EQ(cuDeviceGetUuid_v2(&driver_uuid, d), CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(driver_uuid.bytes, prop.uuid.bytes, sizeof driver_uuid.bytes), 0);
    int bus_number = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&bus_number, cudaDevAttrPciBusId, d), cudaSuccess);
    EXPECT_EQ(bus_number, prop.pciBusID);
  }
  EXPECT_EQ(uuids.size(), 3u);
  EXPECT_EQ(bus_numbers.size(), 3u);
  EXPECT_EQ(buses, (std::set<std::string>{"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0"}));
  cudaDeviceProp prop{};
  EXPECT_EQ(cudaGetDeviceProperties(&prop, kDevices), cudaErrorInvalidDevice);
  CUdevice device = 0;
  EXPECT_EQ(cuDeviceGet(&device, kDevices), CUDA_ERROR_INVALID_DEVICE);
}

// Each thread has its own current device; what it allocates and creates belongs there.
TEST_F(MultiDevice, EachThreadHasItsOwnDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* on_zero = nullptr;
  ASSERT_EQ(cudaMalloc(&on_zero, 64), cudaSuccess);
  int seen_in_thread = -1, allocation_device = -1, stream_device = -1;
  std::thread other([&] {
    int device = -1;
    EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
    EXPECT_EQ(device, 0) << "a new thread starts on device 0";
    ASSERT_EQ(cudaSetDevice(2), cudaSuccess);
    EXPECT_EQ(cudaGetDevice(&seen_in_thread), cudaSuccess);
    void* memory = nullptr;
    ASSERT_EQ(cudaMalloc(&memory, 64), cudaSuccess);
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory), cudaSuccess);
    allocation_device = attributes.device;
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    CUcontext context = nullptr;
    ASSERT_EQ(cuStreamGetCtx(stream, &context), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPushCurrent_v2(context), CUDA_SUCCESS);
    CUdevice of_context = -1;
    ASSERT_EQ(cuCtxGetDevice(&of_context), CUDA_SUCCESS);
    stream_device = of_context;
    cuCtxPopCurrent_v2(&context);
    EXPECT_EQ(launch(&record_kernel, stream, 7), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaStreamDestroy(stream);
    cudaFree(memory);
  });
  other.join();
  EXPECT_EQ(seen_in_thread, 2);
  EXPECT_EQ(allocation_device, 2);
  EXPECT_EQ(stream_device, 2);
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0) << "another thread's cudaSetDevice leaves this one's device alone";
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, on_zero), cudaSuccess);
  EXPECT_EQ(attributes.device, 0);
  EXPECT_EQ(recorded_ids(), std::vector<int>{7});
  cudaFree(on_zero);
}

// CUDA C Programming Guide, "Stream and Event Behavior": a launch into another device's stream fails; a copy into it
// succeeds; an event records only into its own device's streams.
TEST_F(MultiDevice, AStreamBelongsToItsDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStream_t on_zero;
  ASSERT_EQ(cudaStreamCreate(&on_zero), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaEvent_t on_one;
  ASSERT_EQ(cudaEventCreate(&on_one), cudaSuccess);
  EXPECT_EQ(launch(&record_kernel, on_zero, 1), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(on_one, on_zero), cudaErrorInvalidResourceHandle);
  int host = 0, back = 0;
  void* device_memory = nullptr;
  ASSERT_EQ(cudaMalloc(&device_memory, sizeof host), cudaSuccess);
  host = 5;
  EXPECT_EQ(cudaMemcpyAsync(device_memory, &host, sizeof host, cudaMemcpyHostToDevice, on_zero), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(on_zero), cudaSuccess) << "synchronizing another device's stream is allowed";
  ASSERT_EQ(cudaMemcpy(&back, device_memory, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, 5);
  EXPECT_TRUE(recorded_ids().empty());
  cudaFree(device_memory);
  cudaEventDestroy(on_one);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStreamDestroy(on_zero);
}

// cudaStreamWaitEvent: "event may be from a different device than stream". The kernel on device 1 runs only once
// device 0's kernel has written the flag.
TEST_F(MultiDevice, AnEventOnOneDeviceOrdersAnotherDevicesStream) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  std::atomic<int>* flag = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&flag), sizeof *flag), cudaSuccess);
  ASSERT_EQ(cudaMemset(flag, 0, sizeof *flag), cudaSuccess);
  cudaStream_t zero;
  ASSERT_EQ(cudaStreamCreate(&zero), cudaSuccess);
  cudaEvent_t written;
  ASSERT_EQ(cudaEventCreate(&written), cudaSuccess);
  ASSERT_EQ(launch(&set_flag_kernel, zero, flag, 100000u), cudaSuccess);  // busy 100 ms, then *flag = 1
  ASSERT_EQ(cudaEventRecord(written, zero), cudaSuccess);

  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaStream_t one;
  ASSERT_EQ(cudaStreamCreate(&one), cudaSuccess);
  int* saw = nullptr;
  ASSERT_EQ(cudaMallocManaged(reinterpret_cast<void**>(&saw), sizeof *saw), cudaSuccess);
  *saw = -1;
  ASSERT_EQ(cudaStreamWaitEvent(one, written, 0), cudaSuccess);
  ASSERT_EQ(launch(&read_flag_kernel, one, flag, saw), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(one), cudaErrorNotReady) << "device 1 waits for device 0";
  ASSERT_EQ(cudaStreamSynchronize(one), cudaSuccess);
  EXPECT_EQ(*saw, 1) << "the kernel on device 1 saw what the kernel on device 0 wrote";
  EXPECT_EQ(cudaEventQuery(written), cudaSuccess) << "querying another device's event is allowed";
  cudaEvent_t on_one;
  ASSERT_EQ(cudaEventCreate(&on_one), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(on_one, one), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(on_one), cudaSuccess);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, written, on_one), cudaErrorInvalidResourceHandle)
      << "events of two devices have no elapsed time";
  cudaEventDestroy(on_one);
  cudaStreamDestroy(one);
  cudaFree(saw);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaEventDestroy(written);
  cudaStreamDestroy(zero);
  cudaFree(flag);
}

TEST_F(MultiDevice, PeersReachEachOthersMemory) {
  int can = -1;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 1, 1), cudaSuccess);
  EXPECT_EQ(can, 0) << "a device is not its own peer";
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, 0, kDevices), cudaErrorInvalidDevice);

  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice) << "the current device itself";
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
  cudaGetLastError();

  // The driver's view: one context's access to another's.
  CUcontext zero = nullptr, one = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&zero, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&one, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxPushCurrent_v2(one), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(zero, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxEnablePeerAccess(one, 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuCtxDisablePeerAccess(zero), CUDA_SUCCESS);
  cuCtxPopCurrent_v2(&one);
}

TEST_F(MultiDevice, CopiesBetweenDevicesDeliverTheData) {
  constexpr size_t kCount = 1000;
  std::vector<int> host(kCount), back(kCount, 0);
  for (size_t i = 0; i < kCount; ++i) host[i] = static_cast<int>(i * 3);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&a, kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, host.data(), kCount * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeer(b, 1, a, 0, kCount * sizeof(int)), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeerAsync(c, 2, b, 1, kCount * sizeof(int), stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  // Unified addressing: a plain copy between two devices' memory.
  ASSERT_EQ(cudaMemcpy(back.data(), c, kCount * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  ASSERT_EQ(cudaMemset(a, 0, kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, c, kCount * sizeof(int), cudaMemcpyDeviceToDevice), cudaSuccess);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(cudaMemcpy(back.data(), a, kCount * sizeof(int), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(back, host);
  EXPECT_EQ(cudaMemcpyPeer(b, kDevices, a, 0, 4), cudaErrorInvalidDevice);
  cudaGetLastError();
  // The driver's peer copy names the two contexts.
  CUcontext zero = nullptr, one = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&zero, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&one, 1), CUDA_SUCCESS);
  ASSERT_EQ(cudaMemset(b, 0, kCount * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cuMemcpyPeer(reinterpret_cast<CUdeviceptr>(b), one, reinterpret_cast<CUdeviceptr>(a), zero,
                         kCount * sizeof(int)),
            CUDA_SUCCESS);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(cudaMemcpy(back.data(), b, kCount * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

// CUDA_ERROR_ASSERT: "The context cannot be used anymore" -- the faulting device's. The documentation says nothing of
// other devices' contexts: here they keep working (to be confirmed on a GPU, docs/gpu-validation.md).
void assert_on_one_device_leaves_the_other_working(int faulting, int healthy) {
  ASSERT_EQ(cudaSetDevice(healthy), cudaSuccess);
  cudaStream_t busy_stream;
  ASSERT_EQ(cudaStreamCreate(&busy_stream), cudaSuccess);
  ASSERT_EQ(launch(busy(), busy_stream, 100000ull), cudaSuccess);  // still running when the other device asserts
  ASSERT_EQ(launch(&record_kernel, busy_stream, 1), cudaSuccess);

  ASSERT_EQ(cudaSetDevice(faulting), cudaSuccess);
  StderrCapture err;
  ASSERT_EQ(launch(&assert_kernel, nullptr, 5u), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
  EXPECT_EQ(err.text(), kAssertLine) << "printed once, by the faulting device's sync";
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, 16), cudaErrorAssert) << "sticky on the faulting device";
  EXPECT_EQ(cudaGetLastError(), cudaErrorAssert);

  ASSERT_EQ(cudaSetDevice(healthy), cudaSuccess) << "leaving the lost device is allowed";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the healthy device has no error of its own";
  EXPECT_EQ(cudaStreamSynchronize(busy_stream), cudaSuccess);
  EXPECT_EQ(recorded_ids(), std::vector<int>{1}) << "the healthy device's queued kernel completed";
  ASSERT_EQ(launch(&record_kernel, busy_stream, 2), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(recorded_ids(), (std::vector<int>{1, 2}));
  ASSERT_EQ(cudaMalloc(&memory, 16), cudaSuccess);
  cudaFree(memory);

  ASSERT_EQ(cudaSetDevice(faulting), cudaErrorAssert) << "going back finds the lost context";
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
}

TEST_F(MultiDevice, AnAssertOnDeviceOneLeavesDeviceZeroWorking) {
  FRESH_PROCESS({
    register_test_kernels();
    assert_on_one_device_leaves_the_other_working(1, 0);
  });
}

TEST_F(MultiDevice, AnAssertOnDeviceZeroLeavesDeviceOneWorking) {
  FRESH_PROCESS({
    register_test_kernels();
    assert_on_one_device_leaves_the_other_working(0, 1);
  });
}

// CUDA_ERROR_ILLEGAL_ADDRESS (and every other sticky error but the assert): "This leaves the process in an
// inconsistent state and any further CUDA work will return the same error" -- every device's context.
TEST_F(MultiDevice, AnIllegalAddressOnOneDeviceReachesEveryContext) {
  FRESH_PROCESS({
    ASSERT_NE(simkernels_host_stub("fault"), nullptr);  // loads and registers the stock kernels
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext zero = nullptr, one = nullptr;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&zero, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&one, 1), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(one), CUDA_SUCCESS);
    CUmodule module = nullptr;
    ASSERT_EQ(cuModuleLoadData(&module, "simulated cubin"), CUDA_SUCCESS);
    CUfunction f = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&f, module, "_ZN10simkernels12fault_kernelEi"), CUDA_SUCCESS);
    int code = CUDA_ERROR_ILLEGAL_ADDRESS;
    void* args[] = {&code};
    ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    ASSERT_EQ(cuCtxSetCurrent(zero), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  });
}

// What CUDA_VISIBLE_DEVICES leaves (CUDA C Programming Guide, "CUDA Environment Variables"): the listed devices,
// renumbered from 0 in the list's order, each keeping its physical identity; the list stops at an invalid entry.
struct Visible {
  int count;
  std::vector<std::string> buses;  // by new ordinal
};

Visible visible_with(const char* value) {
  setenv("CUDA_VISIBLE_DEVICES", value, 1);
  Visible v{0, {}};
  CUresult r = cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) return v;
  EXPECT_EQ(r, CUDA_SUCCESS);
  EXPECT_EQ(cuDeviceGetCount(&v.count), CUDA_SUCCESS);
  for (int d = 0; d < v.count; ++d) {
    char bus[32] = {};
    EXPECT_EQ(cuDeviceGetPCIBusId(bus, sizeof bus, d), CUDA_SUCCESS);
    v.buses.push_back(bus);
  }
  return v;
}

TEST_F(MultiDevice, VisibleDevicesRenumberInTheListsOrder) {
  FRESH_PROCESS({
    Visible v = visible_with("1,0");
    EXPECT_EQ(v.count, 2);
    EXPECT_EQ(v.buses, (std::vector<std::string>{"0000:2A:00.0", "0000:18:00.0"}));
    // Ordinal 0 is physical device 1: its UUID is the one device 1 has without the variable (GPU-51dac011-...).
    CUuuid uuid{};
    ASSERT_EQ(cuDeviceGetUuid_v2(&uuid, 0), CUDA_SUCCESS);
    EXPECT_EQ(static_cast<unsigned char>(uuid.bytes[3]), 0x11);
    int count = 0;
    ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(pci_bus_id(0), "0000:2A:00.0");
  });
}

TEST_F(MultiDevice, VisibleDevicesStopAtTheFirstInvalidEntry) {
  FRESH_PROCESS({
    Visible v = visible_with("1,x,0");
    EXPECT_EQ(v.count, 1);
    EXPECT_EQ(v.buses, std::vector<std::string>{"0000:2A:00.0"});
  });
  FRESH_PROCESS({ EXPECT_EQ(visible_with("2,-1,0").buses, std::vector<std::string>{"0000:3A:00.0"}); });
  FRESH_PROCESS({ EXPECT_EQ(visible_with("0,7").count, 1) << "an index past the last device is invalid"; });
  FRESH_PROCESS({ EXPECT_EQ(visible_with("1,1,2").count, 1) << "a device listed twice is an invalid entry"; });
}

TEST_F(MultiDevice, VisibleDevicesByUuidOrItsPrefix) {
  FRESH_PROCESS({
    Visible v = visible_with("GPU-51dac022-2f6e-4b1d-9c3a-5e708b41d202,GPU-51dac0");
    EXPECT_EQ(v.buses, std::vector<std::string>{"0000:3A:00.0"}) << "a prefix naming several devices is invalid";
  });
  FRESH_PROCESS({ EXPECT_EQ(visible_with("GPU-51dac01,0").buses, (std::vector<std::string>{"0000:2A:00.0",
                                                                                            "0000:18:00.0"})); });
}

TEST_F(MultiDevice, NoVisibleDeviceIsNoDevice) {
  FRESH_PROCESS({
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    EXPECT_EQ(cuInit(0), CUDA_ERROR_NO_DEVICE);
    int count = -1;
    EXPECT_EQ(cudaGetDeviceCount(&count), cudaErrorNoDevice);
    EXPECT_EQ(count, 0);
    EXPECT_EQ(cudaSetDevice(0), cudaErrorNoDevice);
  });
  FRESH_PROCESS({ EXPECT_EQ(visible_with("x,0").count, 0); });
}

TEST_F(MultiDevice, ABadDeviceCountIsSaidAndOneDeviceSimulated) {
  FRESH_PROCESS({
    setenv("SIMCUDA_DEVICES", "two", 1);
    StderrCapture err;
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    EXPECT_EQ(err.text(), "simcuda: SIMCUDA_DEVICES=two is not a device count from 1 to 16; 1 device is simulated\n");
    int count = 0;
    ASSERT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
    EXPECT_EQ(count, 1);
  });
}

// ---- CUPTI ---------------------------------------------------------------------------------------------------

struct Seen {
  std::mutex mutex;
  std::vector<CUcontext> created;                 // CONTEXT_CREATED, in order
  std::vector<std::pair<CUcontext, int>> launches;  // cudaLaunchKernel ENTER: (context, contextUid)
};
Seen& seen() {
  static Seen* instance = new Seen;
  return *instance;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Seen& s = seen();
  std::lock_guard lock(s.mutex);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    s.created.push_back(static_cast<const CUpti_ResourceData*>(data)->context);
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite == CUPTI_API_ENTER) s.launches.emplace_back(call->context, static_cast<int>(call->contextUid));
  }
}

std::vector<std::pair<uint32_t, uint32_t>> kernel_devices;  // (deviceId, contextId) of each kernel record

void CUPTIAPI request_buffer(uint8_t** buffer, size_t* size, size_t* max) {
  *size = 1 << 16;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max = 0;
}

void CUPTIAPI complete_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      kernel_devices.emplace_back(kernel->deviceId, kernel->contextId);
    }
  }
  std::free(buffer);
}

TEST_F(MultiDevice, CuptiTellsTheDevicesApart) {
  FRESH_PROCESS({
    register_test_kernels();
    CUpti_SubscriberHandle subscriber;
    ASSERT_EQ(cuptiSubscribe(&subscriber, on_callback, nullptr), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);

    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // initializes: the thread is on device 0
    ASSERT_EQ(launch(&record_kernel, nullptr, 1), cudaSuccess);
    ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
    ASSERT_EQ(launch(&record_kernel, nullptr, 2), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);

    CUcontext zero = nullptr, one = nullptr;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&zero, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&one, 1), CUDA_SUCCESS);
    Seen& s = seen();
    EXPECT_EQ(s.created, (std::vector<CUcontext>{zero, one})) << "each device's primary context, when first retained";
    EXPECT_EQ(s.launches, (std::vector<std::pair<CUcontext, int>>{{zero, 1}, {one, 2}}))
        << "callback data name the calling thread's current context";
    uint32_t id = 99;
    ASSERT_EQ(cuptiGetDeviceId(one, &id), CUPTI_SUCCESS);
    EXPECT_EQ(id, 1u);
    ASSERT_EQ(cuptiGetContextId(one, &id), CUPTI_SUCCESS);
    EXPECT_EQ(id, 2u);
    ASSERT_EQ(cuptiGetDeviceId(zero, &id), CUPTI_SUCCESS);
    EXPECT_EQ(id, 0u);
    std::sort(kernel_devices.begin(), kernel_devices.end());  // the two devices ran side by side
    EXPECT_EQ(kernel_devices, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}, {1, 2}}))
        << "kernel records carry the launching device and context";
    cuptiUnsubscribe(subscriber);
  });
}

}  // namespace
