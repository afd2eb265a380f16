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

template <typename T>
uintptr_t handle(T h) {
  return reinterpret_cast<uintptr_t>(h);
}
template <typename T>
uintptr_t handle_at(T* out) {
  return out != nullptr ? reinterpret_cast<uintptr_t>(*out) : 0;
}

// The runtime names the stream `stream`, the driver `hStream`.
template <typename P>
void read_graph_launch(const P& p, LaunchEvent& e) {
  e.graph = true;
  // The executable graph: graphExec (runtime), hGraphExec (cuGraphLaunch_ptsz), hGraph (cuGraphLaunch's params).
  if constexpr (requires { p.graphExec; }) e.graph_exec = handle(p.graphExec);
  else if constexpr (requires { p.hGraphExec; }) e.graph_exec = handle(p.hGraphExec);
  else e.graph_exec = handle(p.hGraph);
  if constexpr (requires { p.stream; }) e.stream = reinterpret_cast<uintptr_t>(p.stream);
  else e.stream = reinterpret_cast<uintptr_t>(p.hStream);
}

// The graph calls' fields, by the names the runtime and the driver give them.
template <typename P>
void read_graph_call(const P& p, GraphCall& c) {
  if constexpr (requires { p.pGraphExec; }) c.exec = handle_at(p.pGraphExec);
  if constexpr (requires { p.phGraphExec; }) c.exec = handle_at(p.phGraphExec);
  if constexpr (requires { p.hGraphExec; }) c.exec = handle(p.hGraphExec);
  if constexpr (requires { p.graphExec; }) c.exec = handle(p.graphExec);
  if constexpr (requires { p.graph; }) c.graph = handle(p.graph);
  if constexpr (requires { p.hGraph; }) c.graph = handle(p.hGraph);
  if constexpr (requires { p.originalGraph; }) c.graph = handle(p.originalGraph);
  if constexpr (requires { p.pGraphClone; }) c.clone = handle_at(p.pGraphClone);
  if constexpr (requires { p.phGraphClone; }) c.clone = handle_at(p.phGraphClone);
  if constexpr (requires { p.pGraphNode; }) c.node = handle_at(p.pGraphNode);
  if constexpr (requires { p.phGraphNode; }) c.node = handle_at(p.phGraphNode);
  if constexpr (requires { p.pDependencies; }) c.deps = reinterpret_cast<const CUgraphNode*>(p.pDependencies);
  if constexpr (requires { p.dependencies; }) c.deps = p.dependencies;
  if constexpr (requires { p.numDependencies; }) c.dep_count = p.numDependencies;
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

namespace detail {
namespace {

constexpr bool graph_launch(LaunchApi api) { return api == LaunchApi::cudaGraphLaunch || api == LaunchApi::cuGraphLaunch; }

constexpr LaunchNumbers number_launches() {
  LaunchNumbers n{};
#define FIRSTASSERT_NUMBER_RUNTIME(suffix, type, launch_api, ...)            \
  n.runtime[CUPTI_RUNTIME_TRACE_CBID_##suffix] =                              \
      runtime_##suffix | (graph_launch(LaunchApi::launch_api) ? kGraphLaunchBit : 0);
#define FIRSTASSERT_NUMBER_DRIVER(suffix, type, launch_api, ...)             \
  n.driver[CUPTI_DRIVER_TRACE_CBID_##suffix] =                                \
      driver_##suffix | (graph_launch(LaunchApi::launch_api) ? kGraphLaunchBit : 0);
  FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_NUMBER_RUNTIME)
  FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_NUMBER_DRIVER)
  return n;
}

}  // namespace

constinit const LaunchNumbers launch_numbers = number_launches();

}  // namespace detail

bool describe_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, LaunchEvent& launch) {
  uint8_t entry = detail::launch_entry(domain, cbid);
  if (entry == 0 || params == nullptr) return false;
  unsigned number = entry & ~detail::kGraphLaunchBit;
#define FIRSTASSERT_LAUNCH_CASE(prefix, suffix, type, launch_api, per_thread, reader) \
  case detail::prefix##suffix:                                                        \
    launch.api = LaunchApi::launch_api;                                               \
    launch.per_thread_default_stream = per_thread;                                    \
    reader(as<type>(params), launch);                                                 \
    return true;
#define FIRSTASSERT_RUNTIME_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(runtime_, __VA_ARGS__)
#define FIRSTASSERT_DRIVER_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(driver_, __VA_ARGS__)
  // Numbered densely: each switch is one indexed jump.
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (number) { FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_RUNTIME_LAUNCH_CASE) default: return false; }
  }
  switch (number) { FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_DRIVER_LAUNCH_CASE) default: return false; }
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

bool describe_graph_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, GraphCall& call) {
#define FIRSTASSERT_GRAPH_CALL_CASE(prefix, suffix, type, graph_kind) \
  case prefix##suffix:                                               \
    call.kind = GraphCallKind::graph_kind;                           \
    if (params != nullptr) read_graph_call(as<type>(params), call);  \
    return true;
#define FIRSTASSERT_RUNTIME_GRAPH_CALL_CASE(...) FIRSTASSERT_GRAPH_CALL_CASE(CUPTI_RUNTIME_TRACE_CBID_, __VA_ARGS__)
#define FIRSTASSERT_DRIVER_GRAPH_CALL_CASE(...) FIRSTASSERT_GRAPH_CALL_CASE(CUPTI_DRIVER_TRACE_CBID_, __VA_ARGS__)
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) { FIRSTASSERT_RUNTIME_GRAPH_CALLS(FIRSTASSERT_RUNTIME_GRAPH_CALL_CASE) default: return false; }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) { FIRSTASSERT_DRIVER_GRAPH_CALLS(FIRSTASSERT_DRIVER_GRAPH_CALL_CASE) default: return false; }
  }
  return false;
}

}  // namespace firstassert::source
