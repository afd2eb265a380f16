// Driver entry points about the device's resources rather than its work: memory capacity and pointer attributes,
// page-locking the caller's memory, stream-ordered allocation, stream priorities, function attributes and
// occupancy. Each is traced for CUPTI's driver domain with its genuine *_params struct. The JIT linker and tensor
// maps, and virtual memory management are not modelled: they answer CUDA_ERROR_NOT_SUPPORTED with one line on stderr.
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "api_support.h"  // also CUDA's generated_cuda_meta.h, which has no include guard
#include "device_properties.h"
#include "kernel_registry.h"

namespace {

using simcuda::Stream;
using namespace simcuda::driver_api;

// What the simulated kernels report for cuFuncGetAttribute: a modest kernel of 32 registers and no static shared
// memory, with the device's limits.
constexpr int kRegistersPerThread = 32;

CUresult stream_priority(CUstream handle, bool per_thread, int* priority) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *priority = stream->priority;
  return CUDA_SUCCESS;
}

// Stream-ordered allocation without pools: the memory exists at once (earlier than the stream needs it, which the
// stream-ordered contract allows) and goes when the stream reaches its free.
CUresult alloc_async(CUdeviceptr* dptr, size_t bytes, CUstream handle, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  void* p = simcuda::allocate(bytes, simcuda::Memory::Device, stream->device->ordinal());
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

void free_when_reached(void* pointer) { simcuda::release(pointer, simcuda::Memory::Device); }

CUresult free_async(CUdeviceptr pointer, CUstream handle, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  auto* p = reinterpret_cast<void*>(pointer);
  auto allocation = simcuda::allocation_of(p);
  if (!allocation || allocation->begin != p || allocation->kind != simcuda::Memory::Device)
    return CUDA_ERROR_INVALID_VALUE;
  // Stream-ordered: the memory goes when the stream reaches the free, after the work queued before it.
  return stream->device->host_func(stream, free_when_reached, p);
}

// The pointer for one side of a 2D copy; nullptr for arrays, which the simulator does not model.
void* side_pointer(CUmemorytype type, const void* host, CUdeviceptr device_pointer) {
  switch (type) {
    case CU_MEMORYTYPE_HOST: return const_cast<void*>(host);
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: return reinterpret_cast<void*>(device_pointer);
    default: return nullptr;
  }
}

CUresult copy_2d(const CUDA_MEMCPY2D* copy, CUstream handle, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (copy == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto* src = static_cast<unsigned char*>(side_pointer(copy->srcMemoryType, copy->srcHost, copy->srcDevice));
  auto* dst = static_cast<unsigned char*>(side_pointer(copy->dstMemoryType, copy->dstHost, copy->dstDevice));
  if (src == nullptr || dst == nullptr) {
    simcuda::say_unsupported_once("a 2D copy from or to a CUDA array");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (copy->WidthInBytes > copy->srcPitch || copy->WidthInBytes > copy->dstPitch) return CUDA_ERROR_INVALID_VALUE;
  src += copy->srcY * copy->srcPitch + copy->srcXInBytes;
  dst += copy->dstY * copy->dstPitch + copy->dstXInBytes;
  if (copy->WidthInBytes == copy->srcPitch && copy->WidthInBytes == copy->dstPitch)
    return stream->device->copy(stream, dst, src, copy->WidthInBytes * copy->Height, false);
  for (size_t row = 0; row < copy->Height; ++row) {
    CUresult r = stream->device->copy(stream, dst + row * copy->dstPitch, src + row * copy->srcPitch, copy->WidthInBytes,
                               false);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult fill_words(CUdeviceptr dst, unsigned value, size_t count, CUstream handle, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (dst % sizeof(uint32_t) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!simcuda::device_accessible(reinterpret_cast<void*>(dst), count * sizeof(uint32_t)))
    return CUDA_ERROR_INVALID_VALUE;
  return stream->device->fill32(stream, reinterpret_cast<void*>(dst), value, count);
}

int occupancy(int block_size, size_t dynamic_shared) {
  if (block_size <= 0) return 0;
  int warps_per_block = (block_size + 31) / 32;
  int by_threads = 2048 / (warps_per_block * 32);
  int by_registers = 65536 / (warps_per_block * 32 * kRegistersPerThread);
  int by_shared = dynamic_shared == 0 ? 32 : static_cast<int>(233472 / (dynamic_shared + 1024));
  return std::max(0, std::min({32, by_threads, by_registers, by_shared}));
}

// The caching override flag changes nothing here: the simulated device has no L1/shared-memory split to choose.
CUresult max_active_blocks(int* blocks, CUfunction function, int block_size, size_t dynamic_shared) {
  if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
  if (!simcuda::is_kernel(function)) return CUDA_ERROR_INVALID_HANDLE;
  if (blocks == nullptr || block_size <= 0 || block_size > 1024) return CUDA_ERROR_INVALID_VALUE;
  *blocks = occupancy(block_size, dynamic_shared);
  return CUDA_SUCCESS;
}

#define SIMCUDA_DRIVER_UNSUPPORTED(name, params)  \
  CUresult CUDAAPI name params {                  \
    simcuda::say_unsupported_once(#name);         \
    return CUDA_ERROR_NOT_SUPPORTED;              \
  }

}  // namespace

extern "C" {

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return TRACED(cuDeviceTotalMem_v2, bytes, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *bytes = simcuda::kTotalDeviceMemory;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  return TRACED(cuMemGetInfo_v2, free, total) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *total = simcuda::kTotalDeviceMemory;
    *free = *total - std::min(*total, simcuda::device_bytes_in_use(device().ordinal()));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return TRACED(cuDeviceGetPCIBusId, pciBusId, len, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    // domain:bus:device.function, as the driver formats it ("0000:18:00.0": a 4-digit domain, where nvidia-smi
    // prints 8); the physical device's, whatever its ordinal
    const int physical = simcuda::physical_device(dev);
    std::snprintf(pciBusId, static_cast<size_t>(len), "%04X:%02X:%02X.0",
                  *simcuda::device_attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, physical),
                  *simcuda::device_attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, physical),
                  *simcuda::device_attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, physical));
    return CUDA_SUCCESS;
  });
}

// The physical device's UUID, whatever ordinal CUDA_VISIBLE_DEVICES gave it (the same 16 bytes nvidia-smi prints
// as GPU-...). The _v2 name differs only for MIG instances, which the simulator does not model.
CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return TRACED(cuDeviceGetUuid, uuid, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *uuid = simcuda::physical_device_uuid(simcuda::physical_device(dev));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return TRACED(cuDeviceGetUuid_v2, uuid, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *uuid = simcuda::physical_device_uuid(simcuda::physical_device(dev));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return TRACED(cuDevicePrimaryCtxGetState, dev, flags, active) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    *active = simcuda::primary_context_retained(dev) ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return TRACED(cuCtxGetStreamPriorityRange, leastPriority, greatestPriority) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (leastPriority != nullptr) *leastPriority = simcuda::kLeastStreamPriority;
    if (greatestPriority != nullptr) *greatestPriority = simcuda::kGreatestStreamPriority;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int* priority) {
  return TRACED(cuStreamGetPriority, hStream, priority) { return stream_priority(hStream, false, priority); });
}

CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int* priority) {
  return TRACED(cuStreamGetPriority_ptsz, hStream, priority) { return stream_priority(hStream, true, priority); });
}

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  return TRACED(cuPointerGetAttribute, data, attribute, ptr) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto allocation = simcuda::allocation_of(reinterpret_cast<const void*>(ptr));
    if (!allocation) return CUDA_ERROR_INVALID_VALUE;  // memory the driver does not know
    bool on_device = allocation->kind == simcuda::Memory::Device;
    switch (attribute) {
      case CU_POINTER_ATTRIBUTE_CONTEXT:
        *static_cast<CUcontext*>(data) = simcuda::primary_context(allocation->device);
        break;
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned*>(data) = on_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr*>(data) = ptr; break;
      case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (on_device) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
        break;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<int*>(data) = 0; break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data) = allocation->device; break;
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr*>(data) = reinterpret_cast<CUdeviceptr>(allocation->begin);
        break;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(data) = allocation->bytes; break;
      case CU_POINTER_ATTRIBUTE_MAPPED: *static_cast<int*>(data) = 1; break;
      default:
        simcuda::say_unsupported_once("this cuPointerGetAttribute attribute");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return TRACED(cuMemHostRegister_v2, p, bytesize, Flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (p == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    return simcuda::register_host_range(p, bytesize) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  });
}

CUresult CUDAAPI cuMemHostUnregister(void* p) {
  return TRACED(cuMemHostUnregister, p) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    return simcuda::unregister_host_range(p) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  });
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return TRACED(cuMemAllocAsync, dptr, bytesize, hStream) { return alloc_async(dptr, bytesize, hStream, false); });
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return TRACED(cuMemAllocAsync_ptsz, dptr, bytesize, hStream) {
    return alloc_async(dptr, bytesize, hStream, true);
  });
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return TRACED(cuMemFreeAsync, dptr, hStream) { return free_async(dptr, hStream, false); });
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return TRACED(cuMemFreeAsync_ptsz, dptr, hStream) { return free_async(dptr, hStream, true); });
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return TRACED(cuMemcpy2DAsync_v2, pCopy, hStream) { return copy_2d(pCopy, hStream, false); });
}

CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return TRACED(cuMemcpy2DAsync_v2_ptsz, pCopy, hStream) { return copy_2d(pCopy, hStream, true); });
}

CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return TRACED(cuFuncGetAttribute, pi, attrib, hfunc) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (!simcuda::is_kernel(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
      case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
      case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
      case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
      case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = kRegistersPerThread; break;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
      case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 232448; break;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
      default:
        simcuda::say_unsupported_once("this cuFuncGetAttribute attribute");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return TRACED(cuFuncSetAttribute, hfunc, attrib, value) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (!simcuda::is_kernel(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        return value >= 0 && value <= 232448 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        return value >= -1 && value <= 100 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
      default:
        return CUDA_SUCCESS;  // accepted; the simulated device's kernels do not depend on them
    }
  });
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return TRACED(cuFuncSetCacheConfig, hfunc, config) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    return simcuda::is_kernel(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize) {
  return TRACED(cuOccupancyMaxActiveBlocksPerMultiprocessor, numBlocks, func, blockSize, dynamicSMemSize) {
    return max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
  });
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                      int blockSize, size_t dynamicSMemSize,
                                                                      unsigned int flags) {
  return TRACED(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, numBlocks, func, blockSize, dynamicSMemSize,
                flags) {
    return max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
  });
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  return TRACED(cuMemGetAddressRange_v2, pbase, psize, dptr) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    auto allocation = simcuda::allocation_of(reinterpret_cast<const void*>(dptr));
    if (!allocation || allocation->kind != simcuda::Memory::Device) return CUDA_ERROR_NOT_FOUND;
    if (pbase != nullptr) *pbase = reinterpret_cast<CUdeviceptr>(allocation->begin);
    if (psize != nullptr) *psize = allocation->bytes;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return TRACED(cuMemsetD32Async, dstDevice, ui, N, hStream) { return fill_words(dstDevice, ui, N, hStream, false); });
}

CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return TRACED(cuMemsetD32Async_ptsz, dstDevice, ui, N, hStream) {
    return fill_words(dstDevice, ui, N, hStream, true);
  });
}

// Virtual memory management: the device reports CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0.
SIMCUDA_DRIVER_UNSUPPORTED(cuMemAddressReserve, (CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemAddressFree, (CUdeviceptr, size_t))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemCreate, (CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                                         unsigned long long))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemRelease, (CUmemGenericAllocationHandle))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemMap, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemUnmap, (CUdeviceptr, size_t))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemSetAccess, (CUdeviceptr, size_t, const CUmemAccessDesc*, size_t))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemGetAllocationGranularity, (size_t*, const CUmemAllocationProp*,
                                                           CUmemAllocationGranularity_flags))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemExportToShareableHandle, (void*, CUmemGenericAllocationHandle,
                                                          CUmemAllocationHandleType, unsigned long long))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemImportFromShareableHandle, (CUmemGenericAllocationHandle*, void*,
                                                            CUmemAllocationHandleType))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle*, void*))
SIMCUDA_DRIVER_UNSUPPORTED(cuMemGetAllocationPropertiesFromHandle, (CUmemAllocationProp*,
                                                                    CUmemGenericAllocationHandle))

// No JIT: kernels are the registered ones, found by name; PTX and cubins handed over at run time are not compiled.
SIMCUDA_DRIVER_UNSUPPORTED(cuLinkCreate_v2, (unsigned int, CUjit_option*, void**, CUlinkState*))
SIMCUDA_DRIVER_UNSUPPORTED(cuLinkAddData_v2, (CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned int,
                                              CUjit_option*, void**))
SIMCUDA_DRIVER_UNSUPPORTED(cuLinkComplete, (CUlinkState, void**, size_t*))
SIMCUDA_DRIVER_UNSUPPORTED(cuTensorMapEncodeTiled, (CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                                    const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                                    const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill))

}  // extern "C"
