// Driver entry points between devices: whether one device's contexts may reach another's memory, enabling and
// disabling that access, and copies from one context's memory to another's. Under unified addressing every device
// pointer is distinct in the process, so a peer copy is a copy; peer access is bookkeeping (a kernel body reaches
// any memory: the simulator cannot fault on a peer access that was not enabled).
#include <cuda.h>

#include "api_support.h"  // also CUDA's generated_cuda_meta.h, which has no include guard

namespace {

using simcuda::Stream;
using namespace simcuda::driver_api;

// The error texts of cuCtxEnablePeerAccess/cuCtxDisablePeerAccess (CUDA Driver API, Peer Context Memory Access):
// CUDA_ERROR_INVALID_CONTEXT "if there is no current context, peerContext is not a valid context, or if the current
// context is peerContext".
CUresult peer_ready(CUcontext peer, int* peer_device) {
  if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
  *peer_device = simcuda::context_device(peer);
  if (*peer_device < 0 || *peer_device == device().ordinal()) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

CUresult peer_copy(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src, CUcontext src_context, size_t bytes,
                   CUstream handle, bool per_thread, bool blocking) {
  if (blocking) {
    if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
  }
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (!simcuda::is_context(dst_context) || !simcuda::is_context(src_context)) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == 0 || src == 0) return CUDA_ERROR_INVALID_VALUE;
  return stream->device->copy(stream, reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes,
                              blocking);
}

}  // namespace

extern "C" {

// Every pair of distinct simulated devices can reach each other (as GPUs on one NVLink/NVSwitch fabric); a device
// and itself answer 0, as the driver and the runtime do.
CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return TRACED(cuDeviceCanAccessPeer, canAccessPeer, dev, peerDev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (CUresult r = device_ready(peerDev); r != CUDA_SUCCESS) return r;
    if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *canAccessPeer = dev != peerDev ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return TRACED(cuCtxEnablePeerAccess, peerContext, Flags) {
    int peer = -1;
    if (CUresult r = peer_ready(peerContext, &peer); r != CUDA_SUCCESS) return r;
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return simcuda::set_peer_access(device().ordinal(), peer, true) == simcuda::PeerChange::Done
               ? CUDA_SUCCESS
               : CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  });
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) {
  return TRACED(cuCtxDisablePeerAccess, peerContext) {
    int peer = -1;
    if (CUresult r = peer_ready(peerContext, &peer); r != CUDA_SUCCESS) return r;
    return simcuda::set_peer_access(device().ordinal(), peer, false) == simcuda::PeerChange::Done
               ? CUDA_SUCCESS
               : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  });
}

// cuMemcpyPeer "exhibits synchronous behavior for most use cases"; peer access need not be enabled (the driver
// stages the copy otherwise).
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount) {
  return TRACED(cuMemcpyPeer, dstDevice, dstContext, srcDevice, srcContext, ByteCount) {
    return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, nullptr, false, true);
  });
}

CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount) {
  return TRACED(cuMemcpyPeer_ptds, dstDevice, dstContext, srcDevice, srcContext, ByteCount) {
    return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, nullptr, true, true);
  });
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return TRACED(cuMemcpyPeerAsync, dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream) {
    return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, false, false);
  });
}

CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return TRACED(cuMemcpyPeerAsync_ptsz, dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream) {
    return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true, false);
  });
}

}  // extern "C"
