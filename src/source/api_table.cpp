#include "api_table.h"

namespace firstassert::source {
namespace {

template <typename T>
uintptr_t handle(T h) {
  return reinterpret_cast<uintptr_t>(h);
}
template <typename T>
uintptr_t handle_at(T* out) {
  return out != nullptr ? reinterpret_cast<uintptr_t>(*out) : 0;
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

// The stream and the event of a call, under either domain's field names.
template <typename P>
void read_handles(const P& p, ApiCall& c) {
  if constexpr (requires { p.stream; }) c.stream = reinterpret_cast<uintptr_t>(p.stream);
  if constexpr (requires { p.hStream; }) c.stream = reinterpret_cast<uintptr_t>(p.hStream);
  if constexpr (requires { p.event; }) c.event = reinterpret_cast<uintptr_t>(p.event);
  if constexpr (requires { p.hEvent; }) c.event = reinterpret_cast<uintptr_t>(p.hEvent);
}
void no_stream(const NoParams&, ApiCall&) {}
// cudaMemcpy is synchronous with the host only between host and device: a device-to-device copy (or one whose
// direction the runtime infers, cudaMemcpyDefault) may return before it, and earlier work, completed (CUDA Runtime
// API, "API synchronization behavior").
template <typename P>
void read_copy_kind(const P& p, ApiCall& c) {
  if (p.kind != cudaMemcpyHostToDevice && p.kind != cudaMemcpyDeviceToHost) c.kind = CallKind::other;
}

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

namespace {

constexpr bool only_proves_completion(CallKind kind) {
  return kind == CallKind::sync_device || kind == CallKind::sync_stream || kind == CallKind::query_stream ||
         kind == CallKind::sync_event || kind == CallKind::blocking_copy;
}

constexpr CallMeanings mean_calls() {
  CallMeanings m{};
#define FIRSTASSERT_MEAN_RUNTIME_LAUNCH(suffix, ...) m.runtime[CUPTI_RUNTIME_TRACE_CBID_##suffix] = kMeaningful;
#define FIRSTASSERT_MEAN_DRIVER_LAUNCH(suffix, ...) m.driver[CUPTI_DRIVER_TRACE_CBID_##suffix] = kMeaningful;
#define FIRSTASSERT_MEAN_RUNTIME_STREAM(suffix, type, kind, ...) \
  m.runtime[CUPTI_RUNTIME_TRACE_CBID_##suffix] = only_proves_completion(CallKind::kind) ? kSyncOnly : kMeaningful;
#define FIRSTASSERT_MEAN_DRIVER_STREAM(suffix, type, kind, ...) \
  m.driver[CUPTI_DRIVER_TRACE_CBID_##suffix] = only_proves_completion(CallKind::kind) ? kSyncOnly : kMeaningful;
#define FIRSTASSERT_MEAN_RUNTIME_GRAPH(suffix, ...) m.runtime[CUPTI_RUNTIME_TRACE_CBID_##suffix] = kMeaningful;
#define FIRSTASSERT_MEAN_DRIVER_GRAPH(suffix, ...) m.driver[CUPTI_DRIVER_TRACE_CBID_##suffix] = kMeaningful;
#define FIRSTASSERT_MEAN_NON_ERROR(suffix) m.runtime[CUPTI_RUNTIME_TRACE_CBID_##suffix] = kNoErrorCode;
  FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_MEAN_RUNTIME_LAUNCH)
  FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_MEAN_DRIVER_LAUNCH)
  FIRSTASSERT_RUNTIME_STREAM_CALLS(FIRSTASSERT_MEAN_RUNTIME_STREAM)
  FIRSTASSERT_DRIVER_STREAM_CALLS(FIRSTASSERT_MEAN_DRIVER_STREAM)
  FIRSTASSERT_RUNTIME_GRAPH_CALLS(FIRSTASSERT_MEAN_RUNTIME_GRAPH)
  FIRSTASSERT_DRIVER_GRAPH_CALLS(FIRSTASSERT_MEAN_DRIVER_GRAPH)
  FIRSTASSERT_RUNTIME_NON_ERROR_RESULTS(FIRSTASSERT_MEAN_NON_ERROR)
  return m;
}

}  // namespace

constinit const CallMeanings call_meanings = mean_calls();

}  // namespace detail

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
