// The context's limits (cuCtxSetLimit, cuCtxGetLimit), as NVIDIA's Driver API documents them (Context Management):
// setting one is a request the driver may clamp or round, and cuCtxGetLimit reads back what was set. Triton's driver
// utilities call both when they load a kernel. Traced for CUPTI's driver domain with their genuine *_params structs.
//
// The simulated device is an H100 (compute capability 9.0), for which:
// - CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH is CUDA_ERROR_UNSUPPORTED_LIMIT (the device runtime's synchronize is gone from
//   compute capability 9.0);
// - CU_LIMIT_SHMEM_SIZE and CU_LIMIT_CIG_ENABLED can only be queried; the context is not a CIG one (CIG_ENABLED 0),
//   and the CIG shared-memory size, documented for CIG contexts only, is CUDA_ERROR_UNSUPPORTED_LIMIT here;
// - CU_LIMIT_MAX_L2_FETCH_GRANULARITY is a hint between 0 and 128 bytes (clamped), CU_LIMIT_PERSISTING_L2_CACHE_SIZE at
//   most the device's CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE (clamped);
// - the printf FIFO and the malloc heap may be set only before a kernel that uses them has run; no simulated kernel
//   uses either, so they may always be set.
// Starting values: a 1 KiB stack per thread, a 1 MiB printf FIFO, an 8 MiB malloc heap, 2,048 pending device-runtime
// launches (the values CUDA's programming guide gives); the L2 fetch granularity and the persisting L2 size start at 0
// here, which the documentation does not say: to confirm on a GPU.
#include <cuda.h>

#include <algorithm>
#include <array>
#include <mutex>

#include "api_support.h"  // also CUDA's generated_cuda_meta.h, which has no include guard
#include "device_properties.h"

namespace {

using namespace simcuda::driver_api;

struct Limits {
  std::mutex mutex;
  std::array<size_t, CU_LIMIT_MAX> value{};
  Limits() {
    value[CU_LIMIT_STACK_SIZE] = 1024;
    value[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
    value[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
    value[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    value[CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 1;
  }
};

Limits& limits() {
  static Limits* process_limits = new Limits;  // callbacks may query limits while the process exits
  return *process_limits;
}

bool unsupported(CUlimit limit) {
  return limit == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH || limit == CU_LIMIT_SHMEM_SIZE;
}

bool query_only(CUlimit limit) { return limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_ENABLED; }

// What the driver keeps of a request.
size_t granted(CUlimit limit, size_t value) {
  if (limit == CU_LIMIT_MAX_L2_FETCH_GRANULARITY) return std::min<size_t>(value, 128);
  if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE) {
    int most = simcuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0).value_or(0);
    return std::min<size_t>(value, static_cast<size_t>(most));
  }
  return value;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  return TRACED(cuCtxSetLimit, limit, value) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    if (unsupported(limit)) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    if (query_only(limit)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(limits().mutex);
    limits().value[limit] = granted(limit, value);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  return TRACED(cuCtxGetLimit, pvalue, limit) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pvalue == nullptr || limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    if (unsupported(limit)) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    std::lock_guard lock(limits().mutex);
    *pvalue = limits().value[limit];
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
