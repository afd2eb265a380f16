// Runtime entry points about kernels as functions: their attributes and occupancy, answered by the driver for the
// kernel the host stub (or cudaKernel_t) names.
#include "runtime_call.h"

using namespace simcuda::runtime;

namespace {

// CUDA 13.0's meta header has no params struct for this call; the layout follows its argument list.
struct cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000_params {
  int* numBlocks;
  const void* func;
  int blockSize;
  size_t dynamicSMemSize;
};

int function_attribute(CUfunction f, CUfunction_attribute which) {
  int value = 0;
  return driver().legacy.func_get_attribute(&value, which, f) == CUDA_SUCCESS ? value : 0;
}

cudaError_t occupancy(int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize, unsigned flags) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  if (numBlocks == nullptr) return cudaErrorInvalidValue;
  CUfunction f = function_of(func);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  return to_runtime(driver().legacy.occupancy_max_active_blocks(numBlocks, f, blockSize, dynamicSMemSize, flags));
}

cudaError_t set_attribute(const void* func, cudaFuncAttribute attr, int value) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  CUfunction f = function_of(func);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  // cudaFuncAttribute and CUfunction_attribute share their values from MaxDynamicSharedMemorySize on.
  CUfunction_attribute driver_attribute;
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      driver_attribute = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
      break;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      driver_attribute = CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
      break;
    default:
      return cudaSuccess;  // accepted; the simulated device's kernels do not depend on them
  }
  return to_runtime(driver().legacy.func_set_attribute(f, driver_attribute, value));
}

}  // namespace

extern "C" {

cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
  return TRACED(cudaFuncGetAttributes, v3020, attr, func) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (attr == nullptr) return cudaErrorInvalidValue;
    CUfunction f = function_of(func);
    if (f == nullptr) return cudaErrorInvalidDeviceFunction;
    *attr = cudaFuncAttributes{};
    attr->sharedSizeBytes = static_cast<size_t>(function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
    attr->constSizeBytes = static_cast<size_t>(function_attribute(f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES));
    attr->localSizeBytes = static_cast<size_t>(function_attribute(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    attr->maxThreadsPerBlock = function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    attr->numRegs = function_attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
    attr->ptxVersion = function_attribute(f, CU_FUNC_ATTRIBUTE_PTX_VERSION);
    attr->binaryVersion = function_attribute(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    attr->cacheModeCA = function_attribute(f, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    attr->maxDynamicSharedSizeBytes = function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    attr->preferredShmemCarveout = function_attribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
  return TRACED(cudaFuncSetAttribute, v9000, func, attr, value) { return set_attribute(func, attr, value); }));
}

#if CUDART_VERSION >= 13000  // CUPTI 12 has no callback id for it
cudaError_t CUDARTAPI cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr, int value,
                                                      int device) {
  return TRACED(cudaKernelSetAttributeForDevice, v12060, kernel, attr, value, device) {
    // Kernels are the process's, not a device's, in the simulator: an attribute set for one device holds for all.
    if (device != 0 && (prepare() != cudaSuccess || !valid_device(device))) return cudaErrorInvalidDevice;
    return set_attribute(kernel, attr, value);
  }));
}
#endif

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                                    size_t dynamicSMemSize) {
  return TRACED(cudaOccupancyMaxActiveBlocksPerMultiprocessor, v6000, numBlocks, func, blockSize, dynamicSMemSize) {
    return occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0);
  }));
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                             int blockSize, size_t dynamicSMemSize,
                                                                             unsigned int flags) {
  return TRACED(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, v7000, numBlocks, func, blockSize,
                dynamicSMemSize, flags) {
    return occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags);
  }));
}

}  // extern "C"
