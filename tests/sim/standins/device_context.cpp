#include "device_context.h"

namespace standins {
namespace {

CUresult primary_context(CUcontext* context) {
  // Retained once for the process, as the runtime keeps its primary context for the life of the process.
  static CUcontext primary = nullptr;
  static CUresult result = [] {
    CUdevice device = 0;
    if (CUresult r = cuDeviceGet(&device, 0); r != CUDA_SUCCESS) return r;
    return cuDevicePrimaryCtxRetain(&primary, device);
  }();
  *context = primary;
  return result;
}

}  // namespace

// The thread's current context is the device the caller chose (torch's cuda:1 has made device 1's current): only a
// thread with none gets device 0's, so that no other device's context is created behind the caller's back.
CUresult bind_context() {
  static const CUresult initialized = cuInit(0);  // once per process
  if (initialized != CUDA_SUCCESS) return initialized;
  CUcontext current = nullptr;
  if (CUresult r = cuCtxGetCurrent(&current); r != CUDA_SUCCESS) return r;
  if (current != nullptr) return CUDA_SUCCESS;
  CUcontext primary = nullptr;
  if (CUresult r = primary_context(&primary); r != CUDA_SUCCESS) return r;
  return cuCtxSetCurrent(primary);
}

}  // namespace standins
