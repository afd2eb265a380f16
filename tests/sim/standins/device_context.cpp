#include "device_context.h"

namespace standins {
namespace {

CUresult primary_context(CUcontext* context) {
  // Retained once for the process, as the runtime keeps its primary context for the life of the process.
  static CUcontext primary = nullptr;
  static CUresult result = [] {
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return r;
    CUdevice device = 0;
    if (CUresult r = cuDeviceGet(&device, 0); r != CUDA_SUCCESS) return r;
    return cuDevicePrimaryCtxRetain(&primary, device);
  }();
  *context = primary;
  return result;
}

}  // namespace

CUresult bind_context() {
  CUcontext primary = nullptr;
  if (CUresult r = primary_context(&primary); r != CUDA_SUCCESS) return r;
  CUcontext current = nullptr;
  if (CUresult r = cuCtxGetCurrent(&current); r != CUDA_SUCCESS) return r;
  return current != nullptr ? CUDA_SUCCESS : cuCtxSetCurrent(primary);
}

}  // namespace standins
