// Runtime entry points that describe the device: its properties (built from driver attributes, as NVIDIA's runtime
// builds cudaDeviceProp), memory capacity, limits, PCI address, peers, the profiler markers, and the driver's entry
// points.
#include <cstring>

#include "runtime_call.h"

using namespace simcuda::runtime;

namespace {

// CUDA 13.0's meta header has no params structs for these calls; the layouts follow their argument lists.
struct cudaProfilerStart_v4000_params {};
struct cudaProfilerStop_v4000_params {};

// The properties of the device asked for (an ordinal already checked): the runtime builds them from the driver's.
void fill_properties(cudaDeviceProp* p, int device) {
  auto attribute = [device](CUdevice_attribute which) {
    int value = 0;
    return driver().legacy.device_get_attribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
  };
  *p = cudaDeviceProp{};
  driver().legacy.device_get_name(p->name, sizeof p->name, device);
  CUuuid uuid{};
  driver().legacy.device_get_uuid(&uuid, device);
  static_assert(sizeof p->uuid == sizeof uuid);
  std::memcpy(&p->uuid, &uuid, sizeof uuid);
  driver().legacy.device_total_mem(&p->totalGlobalMem, device);
  p->sharedMemPerBlock = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p->regsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p->warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p->memPitch = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  p->maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p->maxThreadsDim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  p->maxThreadsDim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  p->maxThreadsDim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  p->maxGridSize[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  p->maxGridSize[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  p->maxGridSize[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  p->totalConstMem = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  p->major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p->minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p->textureAlignment = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  p->texturePitchAlignment = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
  p->multiProcessorCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p->integrated = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED);
  p->canMapHostMemory = attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  p->surfaceAlignment = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT));
  p->concurrentKernels = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
  p->ECCEnabled = attribute(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  p->pciBusID = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  p->pciDeviceID = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  p->pciDomainID = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  p->tccDriver = attribute(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
  p->asyncEngineCount = attribute(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  p->unifiedAddressing = attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  p->memoryBusWidth = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  p->l2CacheSize = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  p->persistingL2CacheMaxSize = attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  p->maxThreadsPerMultiProcessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p->streamPrioritiesSupported = attribute(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
  p->globalL1CacheSupported = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED);
  p->localL1CacheSupported = attribute(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED);
  p->sharedMemPerMultiprocessor =
      static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  p->regsPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  p->managedMemory = attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  p->isMultiGpuBoard = attribute(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
  p->multiGpuBoardGroupID = attribute(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID);
  p->hostNativeAtomicSupported = attribute(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  p->pageableMemoryAccess = attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  p->concurrentManagedAccess = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  p->computePreemptionSupported = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
  p->canUseHostPointerForRegisteredMem = attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
  p->cooperativeLaunch = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  p->sharedMemPerBlockOptin = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  p->pageableMemoryAccessUsesHostPageTables =
      attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
  p->directManagedMemAccessFromHost = attribute(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
  p->maxBlocksPerMultiProcessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  p->accessPolicyMaxWindowSize = attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  p->reservedSharedMemPerBlock = static_cast<size_t>(attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
  p->hostRegisterSupported = attribute(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
  p->memoryPoolsSupported = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
  p->clusterLaunch = attribute(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
#if CUDART_VERSION >= 13000
  p->deviceNumaId = attribute(CU_DEVICE_ATTRIBUTE_NUMA_ID);
  p->hostNumaId = attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
#else
  // Fields CUDA 13.0 removed from cudaDeviceProp (its release notes: use cudaDeviceGetAttribute instead).
  p->clockRate = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  p->memoryClockRate = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  p->computeMode = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
  p->kernelExecTimeoutEnabled = attribute(CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT);
  p->deviceOverlap = attribute(CU_DEVICE_ATTRIBUTE_GPU_OVERLAP);
  p->singleToDoublePrecisionPerfRatio = attribute(CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO);
#endif
}

// A symbol the driver lacks is not an error: funcPtr is NULL and driverStatus says why (NVIDIA's documentation).
cudaError_t entry_point(const char* symbol, void** funcPtr, int cuda_version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  if (symbol == nullptr || funcPtr == nullptr) return cudaErrorInvalidValue;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = driver().get_proc_address(symbol, funcPtr, cuda_version, flags, &status);
  if (driverStatus != nullptr) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
  if (r != CUDA_SUCCESS) *funcPtr = nullptr;
  return cudaSuccess;
}

}  // namespace

extern "C" {

// CUDA 12's headers name the call cudaGetDeviceProperties_v2 (CUDA 11's cudaDeviceProp was shorter); CUDA 13's give
// the same layout back its plain name.
#if CUDART_VERSION >= 13000
cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
  return TRACED(cudaGetDeviceProperties, v12000, prop, device) {
#else
cudaError_t CUDARTAPI cudaGetDeviceProperties_v2(struct cudaDeviceProp* prop, int device) {
  return TRACED(cudaGetDeviceProperties_v2, v12000, prop, device) {
#endif
    if (prop == nullptr) return cudaErrorInvalidValue;
    if (cudaError_t e = prepare(); e != cudaSuccess) return e;
    int count = 0;
    driver().legacy.device_get_count(&count);
    if (device < 0 || device >= count) return cudaErrorInvalidDevice;
    fill_properties(prop, device);
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return TRACED(cudaDeviceGetPCIBusId, v4010, pciBusId, len, device) {
    if (cudaError_t e = prepare(); e != cudaSuccess) return e;
    if (!valid_device(device)) return cudaErrorInvalidDevice;
    return to_runtime(driver().legacy.device_get_pci_bus_id(pciBusId, len, device));
  }));
}

cudaError_t CUDARTAPI cudaMemGetInfo(size_t* free, size_t* total) {
  return TRACED(cudaMemGetInfo, v3020, free, total) {
    return via_driver([&] { return driver().legacy.mem_get_info(free, total); });
  }));
}

// The device's limits are its primary context's: cudaLimit and CUlimit number them alike (driver_types.h, cuda.h).
cudaError_t CUDARTAPI cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  return TRACED(cudaDeviceSetLimit, v3020, limit, value) {
    if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.ctx_set_limit(static_cast<CUlimit>(limit), value); });
  }));
}

cudaError_t CUDARTAPI cudaDeviceGetLimit(size_t* pValue, enum cudaLimit limit) {
  return TRACED(cudaDeviceGetLimit, v3020, pValue, limit) {
    if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.ctx_get_limit(pValue, static_cast<CUlimit>(limit)); });
  }));
}

// The driver's answer: distinct devices reach each other; a device and itself answer 0, as the runtime does.
cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  return TRACED(cudaDeviceCanAccessPeer, v4000, canAccessPeer, device, peerDevice) {
    if (cudaError_t e = prepare(); e != cudaSuccess) return e;
    if (canAccessPeer == nullptr) return cudaErrorInvalidValue;
    return to_runtime(driver().legacy.device_can_access_peer(canAccessPeer, device, peerDevice));
  }));
}

// The current device's context reaches peerDevice's (its primary context, which the runtime retains). The driver's
// CUDA_ERROR_INVALID_CONTEXT for a peer that is the current device is the runtime's cudaErrorInvalidDevice
// (cudaDeviceEnablePeerAccess: "cudaErrorInvalidDevice" where the device cannot access the peer).
static cudaError_t peer_access(int peer_device, bool enable) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  if (!valid_device(peer_device) || peer_device == current_device()) return cudaErrorInvalidDevice;
  CUcontext peer = nullptr;
  if (CUresult r = primary_context(peer_device, &peer); r != CUDA_SUCCESS) return to_runtime(r);
  CUresult r = enable ? driver().legacy.ctx_enable_peer_access(peer, 0) : driver().legacy.ctx_disable_peer_access(peer);
  return r == CUDA_ERROR_INVALID_CONTEXT ? cudaErrorInvalidDevice : to_runtime(r);
}

cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  return TRACED(cudaDeviceEnablePeerAccess, v4000, peerDevice, flags) {
    if (flags != 0) {
      if (cudaError_t e = ready(); e != cudaSuccess) return e;
      return cudaErrorInvalidValue;
    }
    return peer_access(peerDevice, true);
  }));
}

cudaError_t CUDARTAPI cudaDeviceDisablePeerAccess(int peerDevice) {
  return TRACED(cudaDeviceDisablePeerAccess, v4000, peerDevice) { return peer_access(peerDevice, false); }));
}

// Profiler range markers: accepted; no profiler collects in ranges here.
cudaError_t CUDARTAPI cudaProfilerStart(void) {
  return TRACED(cudaProfilerStart, v4000) { return ready(); }));
}

cudaError_t CUDARTAPI cudaProfilerStop(void) {
  return TRACED(cudaProfilerStop, v4000) { return ready(); }));
}

// How PyTorch reaches driver entry points it does not link (cuGetProcAddress underneath).
cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                              enum cudaDriverEntryPointQueryResult* driverStatus) {
  return TRACED(cudaGetDriverEntryPoint, v11030, symbol, funcPtr, flags, driverStatus) {
    return entry_point(symbol, funcPtr, CUDA_VERSION, flags, driverStatus);
  }));
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                       unsigned int cudaVersion, unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult* driverStatus) {
  return TRACED(cudaGetDriverEntryPointByVersion, v12050, symbol, funcPtr, cudaVersion, flags, driverStatus) {
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus);
  }));
}

// Graph memory nodes are not modelled, so none is allocated: the usage attributes are zero, and resetting them is
// allowed as for a device that never used graph memory.
cudaError_t CUDARTAPI cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value) {
  return TRACED(cudaDeviceGetGraphMemAttribute, v11040, device, attr, value) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (!valid_device(device)) return cudaErrorInvalidDevice;
    if (value == nullptr) return cudaErrorInvalidValue;
    *static_cast<unsigned long long*>(value) = 0;
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void* value) {
  return TRACED(cudaDeviceSetGraphMemAttribute, v11040, device, attr, value) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (!valid_device(device)) return cudaErrorInvalidDevice;
    if (value == nullptr || *static_cast<unsigned long long*>(value) != 0) return cudaErrorInvalidValue;
    return cudaSuccess;
  }));
}

}  // extern "C"
