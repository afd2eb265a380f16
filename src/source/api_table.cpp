#include "api_table.h"

namespace firstassert::source {
namespace {

Dim3 dims(const dim3& d) { return {d.x, d.y, d.z}; }

template <typename P>
void read_dim3_launch(const P& p, LaunchEvent& e) {
  e.grid = dims(p.gridDim);
  e.block = dims(p.blockDim);
  e.shared_mem = static_cast<uint32_t>(p.sharedMem);
  e.stream = reinterpret_cast<uintptr_t>(p.stream);
}

template <typename P>
void read_runtime_config_launch(const P& p, LaunchEvent& e) {
  if (p.config == nullptr) return;
  e.grid = dims(p.config->gridDim);
  e.block = dims(p.config->blockDim);
  e.shared_mem = static_cast<uint32_t>(p.config->dynamicSmemBytes);
  e.stream = reinterpret_cast<uintptr_t>(p.config->stream);
}

template <typename P>
void read_xyz_launch(const P& p, LaunchEvent& e) {
  e.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  e.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  e.shared_mem = p.sharedMemBytes;
  e.stream = reinterpret_cast<uintptr_t>(p.hStream);
}

template <typename P>
void read_driver_config_launch(const P& p, LaunchEvent& e) {
  if (p.config == nullptr) return;
  e.grid = {p.config->gridDimX, p.config->gridDimY, p.config->gridDimZ};
  e.block = {p.config->blockDimX, p.config->blockDimY, p.config->blockDimZ};
  e.shared_mem = p.config->sharedMemBytes;
  e.stream = reinterpret_cast<uintptr_t>(p.config->hStream);
}

// The runtime names the stream `stream`, the driver `hStream`.
template <typename P>
void read_graph_launch(const P& p, LaunchEvent& e) {
  e.graph = true;
  if constexpr (requires { p.stream; }) e.stream = reinterpret_cast<uintptr_t>(p.stream);
  else e.stream = reinterpret_cast<uintptr_t>(p.hStream);
}

template <typename P>
void read_stream_field(const P& p, ApiCall& c) {
  c.stream = reinterpret_cast<uintptr_t>(p.stream);
}
template <typename P>
void read_hstream_field(const P& p, ApiCall& c) {
  c.stream = reinterpret_cast<uintptr_t>(p.hStream);
}
void no_stream(const NoParams&, ApiCall&) {}

template <typename P>
const P& as(const void* params) {
  return *static_cast<const P*>(params);
}

}  // namespace

bool returns_error_code(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return true;
#define FIRSTASSERT_NON_ERROR_CASE(suffix) case CUPTI_RUNTIME_TRACE_CBID_##suffix:
  switch (cbid) {
    FIRSTASSERT_RUNTIME_NON_ERROR_RESULTS(FIRSTASSERT_NON_ERROR_CASE)
    return false;
    default:
      return true;
  }
}

bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
#define FIRSTASSERT_IS_LAUNCH_CASE(prefix, suffix, ...) case prefix##suffix:
#define FIRSTASSERT_IS_RUNTIME_LAUNCH(...) FIRSTASSERT_IS_LAUNCH_CASE(CUPTI_RUNTIME_TRACE_CBID_, __VA_ARGS__)
#define FIRSTASSERT_IS_DRIVER_LAUNCH(...) FIRSTASSERT_IS_LAUNCH_CASE(CUPTI_DRIVER_TRACE_CBID_, __VA_ARGS__)
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_IS_RUNTIME_LAUNCH)
      return true;
      default:
        return false;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_IS_DRIVER_LAUNCH)
      return true;
      default:
        return false;
    }
  }
  return false;
}

bool describe_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, LaunchEvent& launch) {
  if (params == nullptr) return false;
#define FIRSTASSERT_LAUNCH_CASE(prefix, suffix, type, launch_api, per_thread, reader) \
  case prefix##suffix:                                                                \
    launch.api = LaunchApi::launch_api;                                               \
    launch.per_thread_default_stream = per_thread;                                    \
    reader(as<type>(params), launch);                                                 \
    return true;
#define FIRSTASSERT_RUNTIME_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(CUPTI_RUNTIME_TRACE_CBID_, __VA_ARGS__)
#define FIRSTASSERT_DRIVER_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(CUPTI_DRIVER_TRACE_CBID_, __VA_ARGS__)
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) { FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_RUNTIME_LAUNCH_CASE) default: return false; }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) { FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_DRIVER_LAUNCH_CASE) default: return false; }
  }
  return false;
}

bool describe_stream_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, ApiCall& call) {
#define FIRSTASSERT_STREAM_CALL_CASE(prefix, suffix, type, call_kind, per_thread, reader)              \
  case prefix##suffix:                                                                                \
    call.kind = CallKind::call_kind;                                                                  \
    call.per_thread_default_stream = per_thread;                                                      \
    if (params != nullptr) reader(as<type>(params), call);                                            \
    return true;
#define FIRSTASSERT_RUNTIME_STREAM_CALL_CASE(...) FIRSTASSERT_STREAM_CALL_CASE(CUPTI_RUNTIME_TRACE_CBID_, __VA_ARGS__)
#define FIRSTASSERT_DRIVER_STREAM_CALL_CASE(...) FIRSTASSERT_STREAM_CALL_CASE(CUPTI_DRIVER_TRACE_CBID_, __VA_ARGS__)
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) { FIRSTASSERT_RUNTIME_STREAM_CALLS(FIRSTASSERT_RUNTIME_STREAM_CALL_CASE) default: return false; }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) { FIRSTASSERT_DRIVER_STREAM_CALLS(FIRSTASSERT_DRIVER_STREAM_CALL_CASE) default: return false; }
  }
  return false;
}

}  // namespace firstassert::source
