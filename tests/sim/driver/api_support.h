// What the exported driver entry points (driver_api.cpp, graph_api.cpp) share: the CUPTI tracing of each call with
// its genuine *_params struct, and the checks calls make first, in the driver's order.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <generated_cuda_meta.h>

#include "../common/api_trace.h"
#include "../common/error_table.h"
#include "device.h"
#include "device_table.h"
#include "driver_state.h"
#include "tool_events.h"

#define DRIVER_SITE(fn) simcuda::TraceSite{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##fn, #fn}
// TRACED(fn, args...) { body }): the call traced with fn##_params{args...}.
#define TRACED(fn, ...)                                                                                     \
  simcuda::traced_call<CUresult>(simcuda::private_table(), DRIVER_SITE(fn), fn##_params{__VA_ARGS__}, nullptr, \
                                 simcuda::current_context(), [&]() -> CUresult
#define TRACED_LAUNCH(fn, function, ...)                                                                        \
  simcuda::traced_call<CUresult>(simcuda::private_table(), DRIVER_SITE(fn), fn##_params{__VA_ARGS__},          \
                                 simcuda::private_table().function_name(function), simcuda::current_context(), \
                                 [&]() -> CUresult

namespace simcuda::driver_api {

// The device of the calling thread's current context: calls that need a context act on it. Only once
// context_ready() has found one.
inline Device& device() { return *Device::current(); }

inline CUresult initialized() { return driver_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

// A device ordinal argument (CUdevice): one of the visible devices, renumbered from 0 (device_table.h).
inline CUresult device_ready(CUdevice dev) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return dev >= 0 && dev < visible_device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// What every call that needs a context checks first, in the driver's order.
inline CUresult context_ready() {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  Device* current = Device::current();
  if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return current->observe_error();
}

// For synchronizing calls: the context checks, where a lost context is reported as a sync reports it (printing the
// device's pending assertion lines, even if an earlier call already returned the sticky error).
inline CUresult sync_ready() {
  CUresult r = context_ready();
  return is_sticky_error(r) ? device().sticky_at_sync() : r;
}

// Resolves a stream handle after the context checks; *stream is null on error. The default-stream handles name the
// current device's; any other handle may be a stream of another device's context (its owner: (*stream)->device).
inline CUresult stream_ready(CUstream handle, bool per_thread, Stream** stream) {
  *stream = nullptr;
  if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
  *stream = device().resolve(handle, per_thread);
  return *stream != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// For work that must run in the current context: CUDA C Programming Guide, "Multi-Device System", "Stream and Event
// Behavior": "A kernel launch will fail if it is issued to a stream that is not associated to the current device"
// (copies may go to another device's stream). The runtime reports it as cudaErrorInvalidResourceHandle.
inline CUresult current_stream_ready(CUstream handle, bool per_thread, Stream** stream) {
  if (CUresult r = stream_ready(handle, per_thread, stream); r != CUDA_SUCCESS) return r;
  if ((*stream)->device == &device()) return CUDA_SUCCESS;
  *stream = nullptr;
  return CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace simcuda::driver_api
