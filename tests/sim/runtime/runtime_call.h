// What every exported runtime entry point shares (runtime_api.cpp defines it): lazy initialization, the per-thread
// last error, the driver entry points, and TRACED, which wraps a call in the ENTER/EXIT callbacks of CUPTI's runtime
// domain as NVIDIA's runtime does.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_callbacks.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>  // no include guard: included here only

#include <atomic>
#include <cstdio>

#include "../common/api_trace.h"
#include "../common/say_unsupported.h"
#include "driver_link.h"

namespace simcuda::runtime {

extern thread_local cudaError_t last_error;

inline constexpr int kMaxRuntimeDevices = 16;  // the simulated driver's most (SIMCUDA_DEVICES)

const simcuda::PrivateTable& table();
cudaError_t to_runtime(CUresult r);
const DriverEntries& entries(bool per_thread);
// Lazy initialization (cuInit, the primary context), and the primary context bound where the thread has none.
cudaError_t prepare();
// A device's primary context, retained by the runtime once (cuDevicePrimaryCtxRetain).
CUresult primary_context(int device, CUcontext* context);
// The context a call's CUPTI callback data names: the thread's current one, or the primary context of its device
// (the one the call will bind) before it has any.
CUcontext call_context();
// The device of the thread's current context (cudaGetDevice's answer), after prepare().
int current_device();
// An ordinal of a visible device (cudaErrorInvalidDevice otherwise), after prepare().
bool valid_device(int device);
// prepare(), then the context's sticky error.
cudaError_t ready();
// Keeps a failure as the thread's last error.
cudaError_t record(cudaError_t e);
cudaError_t launch_result(CUresult r);
CUfunction function_of(const void* stub);
const char* name_of(const void* stub);

// Runs a driver call after the runtime's own checks.
template <typename Call>
cudaError_t via_driver(Call&& call) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  return to_runtime(call());
}

// Graph queries only read the graph: like the driver's, they answer after a fault.
template <typename Call>
cudaError_t query_via_driver(Call&& call) {
  if (cudaError_t e = prepare(); e != cudaSuccess) return e;
  return to_runtime(call());
}

// A synchronizing call always reaches the driver, which reports a lost context as a sync does.
template <typename Call>
cudaError_t sync_via_driver(Call&& call) {
  if (cudaError_t e = prepare(); e != cudaSuccess) return e;
  return to_runtime(call());
}

}  // namespace simcuda::runtime

// Not modelled: a program that needs one learns it at once, in one line, instead of failing to load.
#define SIMCUDA_RUNTIME_UNSUPPORTED(name, params)                                                                \
  cudaError_t CUDARTAPI name params {                                                                           \
    simcuda::say_unsupported_once(#name);                                                              \
    return simcuda::runtime::record(cudaErrorNotSupported);                                                     \
  }

#define RUNTIME_SITE(fn, version) \
  simcuda::TraceSite { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##fn##_##version, #fn }
// TRACED(fn, version, args...) { body })): the call traced with fn_version_params{args...}; errors kept as last.
#define TRACED(fn, version, ...)                                                                                 \
  record(simcuda::traced_call<cudaError_t>(table(), RUNTIME_SITE(fn, version), fn##_##version##_params{__VA_ARGS__}, \
                                           nullptr, call_context(), [&]() -> cudaError_t
#define TRACED_LAUNCH(fn, version, stub, ...)                                                                    \
  record(simcuda::traced_call<cudaError_t>(table(), RUNTIME_SITE(fn, version), fn##_##version##_params{__VA_ARGS__}, \
                                           name_of(stub), call_context(), [&]() -> cudaError_t
