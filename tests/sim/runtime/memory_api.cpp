// Runtime entry points for memory beyond cudaMalloc/cudaMemcpy: stream-ordered and managed allocation, page-locking
// the caller's memory, 2D and peer copies, pointer attributes, and device variables (__cudaRegisterVar). Device
// memory is host memory in the simulator; every call still goes through the driver, as the runtime's do.
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime_call.h"

using namespace simcuda::runtime;

namespace {

// A device variable's storage: allocated on first use and initialized from the host shadow, which nvcc compiles
// with the same initializer.
struct DeviceVariable {
  size_t size = 0;
  void* device = nullptr;
};

struct DeviceVariables {
  std::mutex mutex;
  std::unordered_map<const void*, DeviceVariable> by_host_shadow;
};

DeviceVariables& device_variables() {
  static auto* instance = new DeviceVariables;  // never destroyed: calls may come during exit
  return *instance;
}

cudaError_t variable_address(const void* symbol, void** address, size_t* size) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  DeviceVariables& v = device_variables();
  std::lock_guard lock(v.mutex);
  auto it = v.by_host_shadow.find(symbol);
  if (it == v.by_host_shadow.end()) return cudaErrorInvalidSymbol;
  DeviceVariable& variable = it->second;
  if (variable.device == nullptr) {
    CUdeviceptr p = 0;
    if (CUresult r = driver().legacy.mem_alloc(&p, variable.size == 0 ? 1 : variable.size); r != CUDA_SUCCESS)
      return to_runtime(r);
    std::memcpy(reinterpret_cast<void*>(p), symbol, variable.size);
    variable.device = reinterpret_cast<void*>(p);
  }
  *address = variable.device;
  if (size != nullptr) *size = variable.size;
  return cudaSuccess;
}

}  // namespace

extern "C" {

void CUDARTAPI __cudaRegisterVar(void**, char* hostVar, char*, const char*, int, size_t size, int, int) {
  if (hostVar == nullptr) return;
  DeviceVariables& v = device_variables();
  std::lock_guard lock(v.mutex);
  v.by_host_shadow[hostVar].size = size;
}

cudaError_t CUDARTAPI cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  return TRACED(cudaGetSymbolAddress, v3020, devPtr, symbol) {
    if (devPtr == nullptr) return cudaErrorInvalidValue;
    return variable_address(symbol, devPtr, nullptr);
  }));
}

cudaError_t CUDARTAPI cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                                         enum cudaMemcpyKind kind) {
  return TRACED(cudaMemcpyToSymbol, v3020, symbol, src, count, offset, kind) {
    void* address = nullptr;
    size_t size = 0;
    if (cudaError_t e = variable_address(symbol, &address, &size); e != cudaSuccess) return e;
    if (offset > size || count > size - offset) return cudaErrorInvalidValue;
    return to_runtime(driver().legacy.memcpy(reinterpret_cast<CUdeviceptr>(static_cast<char*>(address) + offset),
                                             reinterpret_cast<CUdeviceptr>(src), count));
  }));
}

cudaError_t CUDARTAPI cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return TRACED(cudaMallocAsync, v11020, devPtr, size, hStream) {
    if (devPtr == nullptr) return cudaErrorInvalidValue;
    return via_driver(
        [&] { return driver().legacy.mem_alloc_async(reinterpret_cast<CUdeviceptr*>(devPtr), size, hStream); });
  }));
}

cudaError_t CUDARTAPI cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return TRACED(cudaFreeAsync, v11020, devPtr, hStream) {
    if (devPtr == nullptr) return ready();
    return via_driver(
        [&] { return driver().legacy.mem_free_async(reinterpret_cast<CUdeviceptr>(devPtr), hStream); });
  }));
}

// Managed memory is device memory the host may touch: in the simulator all device memory is.
cudaError_t CUDARTAPI cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  return TRACED(cudaMallocManaged, v6000, devPtr, size, flags) {
    if (devPtr == nullptr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
      return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.mem_alloc(reinterpret_cast<CUdeviceptr*>(devPtr), size); });
  }));
}

cudaError_t CUDARTAPI cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return TRACED(cudaHostRegister, v4000, ptr, size, flags) {
    return via_driver([&] { return driver().legacy.mem_host_register(ptr, size, flags); });
  }));
}

cudaError_t CUDARTAPI cudaHostUnregister(void* ptr) {
  return TRACED(cudaHostUnregister, v4000, ptr) {
    return via_driver([&] { return driver().legacy.mem_host_unregister(ptr); });
  }));
}

cudaError_t CUDARTAPI cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                        size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
  return TRACED(cudaMemcpy2DAsync, v3020, dst, dpitch, src, spitch, width, height, kind, stream) {
    if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
    CUDA_MEMCPY2D copy{};
    // Unified addressing: either side may be host or device memory, whatever kind says.
    copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
    copy.srcPitch = spitch;
    copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
    copy.dstPitch = dpitch;
    copy.WidthInBytes = width;
    copy.Height = height;
    return via_driver([&] { return driver().legacy.memcpy_2d_async(&copy, stream); });
  }));
}

// Under unified addressing every device's pointers are distinct in the process: a peer copy is a copy, whichever
// devices the two ends are on (the runtime needs no peer access for it: the driver stages it otherwise).
cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                          cudaStream_t stream) {
  return TRACED(cudaMemcpyPeerAsync, v4000, dst, dstDevice, src, srcDevice, count, stream) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (!valid_device(dstDevice) || !valid_device(srcDevice)) return cudaErrorInvalidDevice;
    return to_runtime(driver().legacy.memcpy_async(reinterpret_cast<CUdeviceptr>(dst),
                                                   reinterpret_cast<CUdeviceptr>(src), count, stream));
  }));
}

cudaError_t CUDARTAPI cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return TRACED(cudaMemcpyPeer, v4000, dst, dstDevice, src, srcDevice, count) {
    if (cudaError_t e = prepare(); e != cudaSuccess) return e;
    if (!valid_device(dstDevice) || !valid_device(srcDevice)) return cudaErrorInvalidDevice;
    return to_runtime(
        driver().legacy.memcpy(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), count));
  }));
}

// Memory the driver does not know is unregistered host memory (no error since CUDA 11), as the runtime reports it.
cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
  return TRACED(cudaPointerGetAttributes, v4000, attributes, ptr) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (attributes == nullptr) return cudaErrorInvalidValue;
    *attributes = cudaPointerAttributes{};
    attributes->device = 0;
    auto address = reinterpret_cast<CUdeviceptr>(ptr);
    unsigned type = 0;
    if (driver().legacy.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) != CUDA_SUCCESS) {
      attributes->type = cudaMemoryTypeUnregistered;
      attributes->hostPointer = const_cast<void*>(ptr);
      return cudaSuccess;
    }
    // The device the memory was allocated on (for host memory, the device whose context allocated it).
    driver().legacy.pointer_get_attribute(&attributes->device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address);
    attributes->type = type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = type == CU_MEMORYTYPE_DEVICE ? nullptr : const_cast<void*>(ptr);
    return cudaSuccess;
  }));
}

}  // extern "C"
