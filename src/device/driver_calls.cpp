#include "driver_calls.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace firstassert {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

template <typename Fn>
void fetch(GetProcAddress get, const char* name, Fn& out) {
  void* fn = nullptr;
  if (get(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, nullptr) == CUDA_SUCCESS)
    out = reinterpret_cast<Fn>(fn);
}

std::atomic<const DriverCalls*> resolved{nullptr};
std::mutex resolve_mutex;

}  // namespace

const DriverCalls* driver_calls() {
  if (const DriverCalls* calls = resolved.load(std::memory_order_acquire)) return calls;
  std::lock_guard lock(resolve_mutex);
  if (const DriverCalls* calls = resolved.load()) return calls;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto get = reinterpret_cast<GetProcAddress>(dlsym(driver, "cuGetProcAddress_v2"));
  if (get == nullptr) return nullptr;
  auto* calls = new DriverCalls;  // lives as long as the process
  fetch(get, "cuStreamSynchronize", calls->stream_synchronize);
  fetch(get, "cuStreamWriteValue64", calls->stream_write_value64);
  fetch(get, "cuMemHostAlloc", calls->mem_host_alloc);
  fetch(get, "cuMemHostGetDevicePointer", calls->mem_host_get_device_pointer);
  fetch(get, "cuCtxGetDevice", calls->ctx_get_device);
  fetch(get, "cuCtxGetCurrent", calls->ctx_get_current);
  fetch(get, "cuDeviceGetAttribute", calls->device_get_attribute);
  fetch(get, "cuDeviceGetName", calls->device_get_name);
  fetch(get, "cuDeviceGetUuid", calls->device_get_uuid);
  fetch(get, "cuDeviceGetPCIBusId", calls->device_get_pci_bus_id);
  fetch(get, "cuStreamGetCaptureInfo", calls->stream_get_capture_info);
  fetch(get, "cuGraphAddBatchMemOpNode", calls->graph_add_batch_mem_op_node);
  fetch(get, "cuGraphKernelNodeGetParams", calls->graph_kernel_node_get_params);
  fetch(get, "cuGraphGetNodes", calls->graph_get_nodes);
  fetch(get, "cuGraphNodeGetType", calls->graph_node_get_type);
  fetch(get, "cuMemsetD8Async", calls->memset_d8_async);
  fetch(get, "cuFuncGetName", calls->func_get_name);
  fetch(get, "cuKernelGetName", calls->kernel_get_name);
  resolved.store(calls, std::memory_order_release);
  return calls;
}

CUresult map_host_memory(const DriverCalls& calls, size_t bytes, void** host, CUdeviceptr* device) {
  CUresult r = calls.mem_host_alloc(host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_SUCCESS) r = calls.mem_host_get_device_pointer(device, *host, 0);
  return r;
}

}  // namespace firstassert
