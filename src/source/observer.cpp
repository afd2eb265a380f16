// What a call of the program means, at its entry and at its return: the launch path, in one translation unit so
// that its steps inline into call_entered and call_exited. The jobs it hands on live apart: the device of a context
// (context_devices), the host stacks (launch_stacks), the graph records (graph_calls), FIRSTASSERT_SYNC's forced
// syncs (forced_sync).
#include "observer.h"

#include <cstdlib>
#include <cstring>

#include <atomic>

#include "api_table.h"
#include "context_devices.h"
#include "forced_sync.h"
#include "graph_calls.h"
#include "launch_reader.h"
#include "launch_stacks.h"
#include "core/stream_key.h"

namespace firstassert::source {
namespace {

Recording recording;  // set once before recording starts; what it points to is never freed
// CUDA_LAUNCH_BLOCKING=1 (read at start), and how many launches returned a sticky error after the first error.
bool launch_blocking = false;
std::atomic<unsigned> blocking_returns_after{0};

}  // namespace

namespace detail {
bool launches_need_entering = true;
RoutineCalls routine_calls{};
}  // namespace detail

void start(const Recording& r) {
  recording = r;
  set_launch_stack_depths(r.stack_depth, r.python);
  detail::launches_need_entering = r.breadcrumbs != nullptr;
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  launch_blocking = blocking != nullptr && std::strcmp(blocking, "1") == 0;
  if (r.tracker != nullptr) r.tracker->set_launch_blocking(launch_blocking);
  auto routine = [&](CallMeaning m) {
    return m == kErrorOnly || m == kNoErrorCode || (m == kSyncOnly && r.breadcrumbs != nullptr);
  };
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid)
    detail::routine_calls.runtime[cbid] = routine(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, cbid));
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid)
    detail::routine_calls.driver[cbid] = routine(call_meaning(CUPTI_CB_DOMAIN_DRIVER_API, cbid));
}
const Recording& current_recording() { return recording; }

namespace {

ApiDomain api_domain_of(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::runtime : ApiDomain::driver;
}

// ---- At a call's entry ----

// What call_entered hands a launch's exit: the queue marks when its call began (Tracker::queue_marks), tagged, since
// a source may hand back a word call_entered never wrote (CUPTI's correlationData of a call entered before recording
// began).
constexpr uint64_t kMarksTag = uint64_t{1} << 63;

// The queue marks now, tagged, for a call about to be made.
uint64_t marks_entering() { return recording.tracker->queue_marks() | kMarksTag; }

uint64_t marks_at_entry(const uint64_t* entered) {
  if (entered == nullptr || (*entered & kMarksTag) == 0) return 0;
  uint64_t marks = *entered & ~kMarksTag;
  return marks <= recording.tracker->queue_marks() ? marks : 0;  // never more than there are
}

// A launch about to be made: its breadcrumb slot taken; for a graph's launch, its kernel nodes' slots cleared (not
// inside a capture: the clear would join the graph). Returns the tagged queue marks.
uint64_t launch_entering(const LaunchEvent& launch) {
  int32_t thread = current_thread_id();
  uint64_t key = stream_key(launch.stream, launch.per_thread_default_stream, thread, launch.device);
  if (recording.breadcrumbs != nullptr) {
    OurCall guard;
    recording.breadcrumbs->before_launch(key, thread);
  }
  if (launch.graph && recording.graphs != nullptr && !recording.tracker->capturing_stream(key)) {
    OurCall guard;
    recording.graphs->before_graph_launch(
        launch.graph_exec, reinterpret_cast<CUstream>(explicit_stream_handle(launch.stream, launch.per_thread_default_stream)));
  }
  // Last: whatever the calls above queued is before this launch anyway.
  return marks_entering();
}

// A stream or device call about to be made (a sync, a query, a stream's destruction, a capture's beginning, an event's
// record): returns the launch count a successful sync proves complete, which is what was launched before it began (0
// when the breadcrumbs prove it already, or the call proves nothing); for an event's record, the tagged queue marks.
uint64_t stream_call_entering(const CallSite& site, const ApiCall& probe) {
  if (routine_call(site.domain, site.cbid)) return 0;
  if (probe.kind == CallKind::destroy_stream) {
    // Ended at its entry: once the driver frees the handle, another thread's new stream may have it before this
    // call returns.
    int32_t thread = current_thread_id();
    uint64_t key = stream_key(probe.stream, probe.per_thread_default_stream, thread, probe.device);
    uint64_t launches = recording.tracker->launch_count();
    recording.tracker->stream_ended(key, launches);
    if (recording.breadcrumbs != nullptr) recording.breadcrumbs->stream_destroyed(key, launches);
    return launches;
  }
  if (probe.kind == CallKind::reset_context) {
    // The breadcrumbs' pinned memory goes with the context: nothing may write or read it after.
    if (recording.breadcrumbs != nullptr) recording.breadcrumbs->disable("the CUDA context was destroyed or reset");
    if (recording.graphs != nullptr) recording.graphs->disable("the CUDA context was destroyed or reset");
    return 0;
  }
  // An event's record: the queue marks (the launches queued before it, whatever their thread), not the launch count.
  if (probe.kind == CallKind::record_event) return marks_entering();
  if (probe.kind == CallKind::begin_capture && recording.graphs != nullptr) {
    OurCall guard;
    recording.graphs->prepare();
  }
  return recording.tracker->launch_count();
}

// Any other call: a kernel node about to be added needs the graph records prepared first.
void other_call_entering(const CallSite& site) {
  GraphCall graph_call;
  if (recording.graphs != nullptr && describe_graph_call(site.domain, site.cbid, nullptr, graph_call) &&
      graph_call.kind == GraphCallKind::add_kernel_node) {
    OurCall guard;
    recording.graphs->prepare();
  }
}

// ---- At a call's return ----

// After a launch the program made and firstassert numbered: the breadcrumb, then the record (stored once the
// breadcrumb is queued, with its queue mark: launch calls that begin later are behind it on the stream), then the
// forced synchronization FIRSTASSERT_SYNC asks for, which needs the record. The launch's kernel is the interned name.
void after_launch(LaunchEvent& launch, uint64_t seq) {
  uintptr_t handle = explicit_stream_handle(launch.stream, launch.per_thread_default_stream);
  if (seq == Tracker::kNotRecorded) {
    // A launch into a capturing stream made a kernel node of the graph being captured; nothing runs, and a write or
    // a sync would break the capture.
    if (recording.graphs != nullptr) launch_captured(*recording.graphs, *recording.tracker, launch, handle);
    if (recording.sync != nullptr && recording.sync->active()) no_sync_while_capturing();
    return;
  }
  bool forced = recording.sync != nullptr && recording.sync->active() && recording.sync->sync_after(seq, launch.kernel);
  // A launch synchronized right away needs no breadcrumb: the sync's own result says whether it completed (and the
  // write would be one more operation on the stream for every launch).
  bool holds_back_later = false;
  if (recording.breadcrumbs != nullptr) {
    OurCall guard;
    int32_t thread = current_thread_id();
    uint64_t key = stream_key(launch.stream, launch.per_thread_default_stream, thread, launch.device);
    holds_back_later =
        recording.breadcrumbs->after_launch(key, thread, reinterpret_cast<CUstream>(handle), seq, !forced);
  }
  recording.tracker->store_launch(launch, holds_back_later);
  if (forced) synchronize_after_launch(*recording.tracker, launch, seq, handle);
}

// A launch that returned success: its stacks, its number, then what follows it.
void launch_succeeded(LaunchEvent& launch) {
  LaunchStacks stacks;
  if (recording.stack_depth > 0 || recording.python) capture_stacks(launch, stacks);
  uint64_t seq = recording.tracker->number_launch(launch);
  after_launch(launch, seq);
}

// A launch that returned an error. The first sticky error returned by a launch: either the launch ran to the fault
// before returning (CUDA_LAUNCH_BLOCKING=1) or it only learned of an earlier fault. It is recorded as a candidate,
// marked, and the tracker's evidence decides which (later ones are only the aftermath). Under CUDA_LAUNCH_BLOCKING=1
// a launch on another thread may have run to the fault too, and return just after the first error was seen: a few
// are kept. A launch refused (a non-sticky error) is recorded as refused, with its stacks.
void launch_failed(LaunchEvent& launch, CUpti_CallbackDomain domain, int code) {
  bool may_have_faulted =
      is_sticky_error(code) && (!recording.tracker->has_primary() ||
                                (launch_blocking && blocking_returns_after.fetch_add(1, std::memory_order_relaxed) < 8));
  bool refused = !is_sticky_error(code) && !is_status_not_error(code);
  LaunchStacks stacks;
  if (may_have_faulted || refused) capture_stacks(launch, stacks);
  if (may_have_faulted) {
    launch.returned = code;
    recording.tracker->record_launch(launch);  // no breadcrumb or sync: the context is lost
  }
  if (refused) recording.tracker->record_launch_error(launch, api_domain_of(domain), code);
}

// Any call's result, a failed launch's too, for the tracker: an error, or what a stream or device call that
// succeeded proves (launches_at_entry: what call_entered returned for it). A routine call's success proves nothing
// new and is not recorded.
void call_returned(const CallSite& site, int code, uintptr_t context, const uint64_t* entered) {
  ApiCall call;
  call.domain = api_domain_of(site.domain);
  call.api = site.function;
  call.code = code;
  call.context = context;
  call.device = device_of(context);
  if (describe_stream_call(site.domain, site.cbid, site.params, call)) {
    call.launches_at_entry = entered != nullptr ? *entered : 0;
    if (call.kind == CallKind::record_event) {
      call.marks_at_entry = marks_at_entry(entered);
      call.launches_at_entry = ApiCall::kUnknown;  // the count at its return
    }
  }
  bool proves_nothing_new = code == 0 && routine_call(site.domain, site.cbid);
  if ((code != 0 || call.kind != CallKind::other) && !proves_nothing_new) recording.tracker->record_call(call);
}

}  // namespace

uint64_t call_entered(const CallSite& site) {
  if (!call_needs_entering(site.domain, site.cbid)) return 0;
  LaunchEvent launch;
  if (describe_launch(site.domain, site.cbid, site.params, launch)) {
    launch.device = device_of(site.context);  // the context current when the call began
    return launch_entering(launch);
  }
  ApiCall probe;
  if (describe_stream_call(site.domain, site.cbid, site.params, probe)) {
    probe.context = site.context;
    probe.device = device_of(site.context);
    return stream_call_entering(site, probe);
  }
  other_call_entering(site);
  return 0;
}

void call_exited(const CallSite& site, int code, const char* kernel, uintptr_t context, uint32_t correlation_id,
                 const uint64_t* entered) {
  LaunchEvent launch;
  if (describe_launch(site.domain, site.cbid, site.params, launch)) {
    launch.kernel = kernel;
    launch.context = context;
    launch.device = device_of(context);
    launch.correlation_id = correlation_id;
    launch.marks_at_entry = marks_at_entry(entered);
    if (code == 0) return launch_succeeded(launch);  // every launch, first and alone
    launch_failed(launch, site.domain, code);
  } else {
    if (!returns_error_code(site.domain, site.cbid)) return;
    GraphCall graph_call;
    if (code == 0 && recording.graphs != nullptr && describe_graph_call(site.domain, site.cbid, site.params, graph_call))
      after_graph_call(*recording.graphs, graph_call);
  }
  call_returned(site, code, context, entered);
}

}  // namespace firstassert::source
