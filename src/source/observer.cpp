#include "observer.h"

#include <cstdlib>
#include <cstring>

#include <atomic>
#include <mutex>

#include "api_table.h"
#include "launch_reader.h"
#include "core/clock.h"
#include "core/fast_tls.h"
#include "core/log.h"
#include "core/stream_key.h"
#include "device/driver_calls.h"
#include "stack/native_stack.h"
#include "stack/python_frames.h"

namespace firstassert::source {
namespace {

Recording recording;  // set once before recording starts; what it points to is never freed
// CUDA_LAUNCH_BLOCKING=1 (read at start), and how many launches returned a sticky error after the first error.
bool launch_blocking = false;
std::atomic<unsigned> blocking_returns_after{0};
// Python frames per launch: as deep as the native stacks, or all a record holds; 0: none.
size_t python_depth = 0;

}  // namespace

namespace detail {
bool launches_need_entering = true;
RoutineCalls routine_calls{};
}  // namespace detail

void start(const Recording& r) {
  recording = r;
  python_depth = !r.python           ? 0
                 : r.stack_depth > 0 ? std::min<size_t>(r.stack_depth, kMaxPythonFrames)
                                     : kMaxPythonFrames;
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

void stop_in_this_process() { detail::stopped_here.store(true, std::memory_order_release); }

namespace detail {
constinit FIRSTASSERT_FAST_TLS thread_local bool inside_firstassert = false;
std::atomic<bool> stopped_here{false};
constinit FIRSTASSERT_FAST_TLS thread_local int hooked_depth = 0;
std::atomic<unsigned> cupti_subscription{1};
std::atomic<unsigned> no_cupti_call{0};
constinit FIRSTASSERT_FAST_TLS thread_local std::atomic<unsigned>* cupti_call_mark = &no_cupti_call;
}  // namespace detail

namespace {

// Lent and given back without a lock: a forked child may exit while its parent's other threads held one.
constexpr size_t kMarkSlots = 1024;
struct MarkSlot {
  std::atomic<bool> lent{false};
  std::atomic<unsigned> mark{0};
};
MarkSlot mark_slots[kMarkSlots];
// A thread beyond the table keeps its mark here, where only it reads it.
constinit FIRSTASSERT_FAST_TLS thread_local std::atomic<unsigned> own_cupti_call_mark{0};

// Gives the thread's slot back when it exits: a thread_local with a destructor, touched only when the slot is lent.
struct MarkSlotReturn {
  MarkSlot* slot = nullptr;
  ~MarkSlotReturn() {
    if (slot == nullptr) return;
    detail::cupti_call_mark = &own_cupti_call_mark;  // a call made by a later destructor of this thread
    slot->mark.store(0, std::memory_order_release);
    slot->lent.store(false, std::memory_order_release);
  }
};

}  // namespace

void lend_cupti_call_mark() {
  using detail::cupti_call_mark;
  cupti_call_mark = &own_cupti_call_mark;
  for (MarkSlot& slot : mark_slots) {
    bool lent = false;
    if (slot.lent.load(std::memory_order_relaxed) || !slot.lent.compare_exchange_strong(lent, true)) continue;
    slot.mark.store(0, std::memory_order_relaxed);
    static thread_local MarkSlotReturn give_back_at_exit;
    give_back_at_exit.slot = &slot;
    cupti_call_mark = &slot.mark;
    return;
  }
}

size_t open_cupti_calls(unsigned subscription) {
  size_t open = 0;
  for (const MarkSlot& slot : mark_slots) {
    if (slot.lent.load(std::memory_order_acquire) && slot.mark.load(std::memory_order_acquire) == subscription) ++open;
  }
  return open;
}
void cupti_subscription_ended() { detail::cupti_subscription.fetch_add(1, std::memory_order_relaxed); }

namespace {

// Contexts seen so far and their device ordinals: found once per context (warm-up), then a lock-free lookup.
constexpr int kMaxContexts = 64;
struct ContextDevice {
  std::atomic<uintptr_t> context{0};
  std::atomic<int32_t> device{-1};
};
ContextDevice context_devices[kMaxContexts];
std::mutex context_mutex;

// The thread's last context and its device: a thread mostly launches on one.
struct LastContext {
  uintptr_t context;
  int32_t device;
};
constinit FIRSTASSERT_FAST_TLS thread_local LastContext last_context{0, -1};

int32_t find_device_of(uintptr_t context);

inline int32_t device_of(uintptr_t context) {
  if (context == last_context.context) return last_context.device;
  int32_t device = find_device_of(context);
  last_context = {context, device};
  return device;
}

int32_t find_device_of(uintptr_t context) {
  if (context == 0) return -1;
  for (const ContextDevice& c : context_devices) {
    uintptr_t seen = c.context.load(std::memory_order_acquire);
    if (seen == context) return c.device.load(std::memory_order_relaxed);
    if (seen == 0) break;
  }
  std::lock_guard lock(context_mutex);
  int32_t device = -1;
  const DriverCalls* calls = driver_calls();
  if (calls != nullptr && calls->ctx_get_device != nullptr) {
    OurCall guard;
    CUdevice d = 0;
    // During a launch callback the launch's context is current on this thread.
    if (calls->ctx_get_device(&d) == CUDA_SUCCESS) device = static_cast<int32_t>(d);
  }
  for (ContextDevice& c : context_devices) {
    if (c.context.load() == context) return c.device.load();
    if (c.context.load() == 0) {
      c.device.store(device, std::memory_order_relaxed);
      c.context.store(context, std::memory_order_release);
      break;
    }
  }
  return device;
}

std::atomic<bool> said_capture_skip{false};

// The shim's, CUPTI's and CUDA's own frames, cut from the top of every stack; collected at the first launch, when
// the CUDA libraries in use are loaded.
MachineryRanges machinery;
std::once_flag machinery_once;
std::atomic<bool> machinery_known{false};  // checked first: std::call_once costs a TLS lookup even once done

// Host stacks of the launching thread, into the caller's buffers (the program's frames only).
struct Stacks {
  uintptr_t native[kMaxStackFrames + 32];
  PythonFrame python[kMaxPythonFrames];
};

void capture_stacks(LaunchEvent& launch, Stacks& stacks) {
  if (recording.stack_depth > 0) {
    if (!machinery_known.load(std::memory_order_acquire)) {
      std::call_once(machinery_once, [] { machinery.collect(reinterpret_cast<const void*>(&capture_stacks)); });
      machinery_known.store(true, std::memory_order_release);
    }
    size_t skip = 0;
    size_t n = capture_native_stack(stacks.native, recording.stack_depth + 32, 0, &machinery, &skip);
    launch.native_stack = stacks.native + skip;
    launch.stack_depth = static_cast<uint8_t>(std::min<size_t>(n - skip, recording.stack_depth));
  }
  if (python_depth != 0) {
    // The frames may be the thread's copy of a stack walked before (valid until its next capture, after this call),
    // or one kept for good, which the record then points to.
    PythonStack python = capture_python_stack(stacks.python, python_depth);
    launch.python_stack = python.frames;
    launch.python_depth = static_cast<uint8_t>(python.count);
    launch.python_lasting = python.lasting ? python.frames : nullptr;
  }
}

// A kernel node being made: what the launch (or the node's parameters) and the stacks say of it.
GraphNodeEvent node_event(const LaunchEvent& launch) {
  GraphNodeEvent node;
  node.kernel = launch.kernel != nullptr ? recording.tracker->intern(launch.kernel) : nullptr;
  node.grid = launch.grid;
  node.block = launch.block;
  node.shared_mem = launch.shared_mem;
  node.native_stack = launch.native_stack;
  node.native_depth = launch.stack_depth;
  node.python_stack = launch.python_stack;
  node.python_depth = launch.python_depth;
  return node;
}

const char* intern_name(const char* name) { return recording.tracker->intern(name); }

// A graph call that succeeded: the records of graphs, executable graphs and kernel nodes follow it.
void after_graph_call(const GraphCall& call) {
  GraphTable* table = recording.graphs != nullptr ? &recording.graphs->table() : nullptr;
  if (table == nullptr) return;
  switch (call.kind) {
    case GraphCallKind::instantiate:
    case GraphCallKind::update: {
      std::optional<size_t> kernels;
      {
        OurCall guard;
        kernels = recording.graphs->kernel_nodes_of(reinterpret_cast<CUgraph>(call.graph));
      }
      table->instantiated(call.exec, call.graph, kernels);
      break;
    }
    case GraphCallKind::clone:
      table->cloned(call.clone, call.graph);
      break;
    case GraphCallKind::destroy_graph:
      table->graph_destroyed(call.graph);
      break;
    case GraphCallKind::destroy_exec:
      table->exec_destroyed(call.exec);
      break;
    case GraphCallKind::add_kernel_node: {
      LaunchEvent at;  // only its stacks: where the program added the node
      Stacks stacks;
      capture_stacks(at, stacks);
      OurCall guard;
      recording.graphs->added_kernel_node(reinterpret_cast<CUgraph>(call.graph), reinterpret_cast<CUgraphNode>(call.node),
                                          call.deps, call.dep_count, node_event(at), intern_name);
      break;
    }
  }
}

// After a launch the program made: the forced synchronization FIRSTASSERT_SYNC asks for, else the breadcrumb.
// The launch's kernel is the interned name once recorded.
void after_launch(const LaunchEvent& launch, uint64_t seq) {
  uintptr_t handle = explicit_stream_handle(launch.stream, launch.per_thread_default_stream);
  if (seq == Tracker::kNotRecorded) {
    // A launch into a capturing stream made a kernel node of the graph being captured.
    if (recording.graphs != nullptr) {
      OurCall guard;
      recording.graphs->captured_launch(reinterpret_cast<CUstream>(handle),
                                        stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id()),
                                        node_event(launch));
    }
    // A launch into a capturing stream: nothing runs, and a write or a sync would break the capture.
    // Info, not a warning: a healthy job that captures graphs under FIRSTASSERT_SYNC=all prints nothing of ours.
    if (recording.sync != nullptr && recording.sync->active() && !said_capture_skip.exchange(true))
      info("FIRSTASSERT_SYNC: no forced synchronization while a stream is capturing a CUDA graph");
    return;
  }
  bool forced = recording.sync != nullptr && recording.sync->active() && recording.sync->sync_after(seq, launch.kernel);
  // A launch synchronized right away needs no breadcrumb: the sync's own result says whether it completed (and the
  // write would be one more operation on the stream for every launch).
  if (recording.breadcrumbs != nullptr) {
    OurCall guard;
    int32_t thread = current_thread_id();
    uint64_t key = stream_key(launch.stream, launch.per_thread_default_stream, thread);
    recording.breadcrumbs->after_launch(key, thread, reinterpret_cast<CUstream>(handle), seq, !forced);
  }
  if (!forced) return;
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->stream_synchronize == nullptr) return;
  CUresult r;
  {
    OurCall guard;
    r = calls->stream_synchronize(reinterpret_cast<CUstream>(handle));
  }
  ApiCall sync;
  sync.domain = ApiDomain::driver;
  sync.api = "cuStreamSynchronize (forced by firstassert after the launch)";
  sync.code = r;
  sync.kind = CallKind::sync_stream;
  sync.stream = launch.stream;
  sync.per_thread_default_stream = launch.per_thread_default_stream;
  sync.context = launch.context;
  sync.launches_at_entry = seq + 1;
  recording.tracker->record_call(sync);
}

ApiDomain api_domain_of(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::runtime : ApiDomain::driver;
}

}  // namespace

void call_exited(const CallSite& site, int code, const char* kernel, uintptr_t context, uint32_t correlation_id,
                 const uint64_t* entered) {
  CUpti_CallbackDomain domain = site.domain;
  CUpti_CallbackId cbid = site.cbid;
  LaunchEvent launch;
  if (describe_launch(domain, cbid, site.params, launch)) {
    launch.kernel = kernel;
    launch.context = context;
    launch.device = device_of(context);
    launch.correlation_id = correlation_id;
    Stacks stacks;
    if (code == 0) {  // every launch, first and alone
      if (recording.stack_depth > 0 || recording.python) capture_stacks(launch, stacks);
      uint64_t seq = recording.tracker->record_launch(launch);
      after_launch(launch, seq);
      return;
    }
    // The first sticky error returned by a launch: either the launch ran to the fault before returning
    // (CUDA_LAUNCH_BLOCKING=1) or it only learned of an earlier fault. It is recorded as a candidate, marked, and
    // the tracker's evidence decides which (later ones are only the aftermath).
    // Under CUDA_LAUNCH_BLOCKING=1 a launch on another thread may have run to the fault too, and return just after
    // the first error was seen: a few are kept.
    bool may_have_faulted =
        is_sticky_error(code) && (!recording.tracker->has_primary() ||
                                  (launch_blocking && blocking_returns_after.fetch_add(1, std::memory_order_relaxed) < 8));
    bool refused = !is_sticky_error(code) && !is_status_not_error(code);
    if (may_have_faulted || refused) capture_stacks(launch, stacks);
    if (may_have_faulted) {
      launch.returned = code;
      recording.tracker->record_launch(launch);  // no breadcrumb or sync: the context is lost
    }
    if (refused) recording.tracker->record_launch_error(launch, api_domain_of(domain), code);
  } else {
    if (!returns_error_code(domain, cbid)) return;
    if (code == 0) {
      GraphCall graph_call;
      if (describe_graph_call(domain, cbid, site.params, graph_call)) after_graph_call(graph_call);
    }
  }
  ApiCall call;
  call.domain = api_domain_of(domain);
  call.api = site.function;
  call.code = code;
  call.context = context;
  if (describe_stream_call(domain, cbid, site.params, call)) call.launches_at_entry = entered != nullptr ? *entered : 0;
  bool proves_nothing_new = code == 0 && routine_call(domain, cbid);
  if ((code != 0 || call.kind != CallKind::other) && !proves_nothing_new) recording.tracker->record_call(call);
}

uint64_t call_entered(const CallSite& site) {
  if (!call_needs_entering(site.domain, site.cbid)) return 0;
  LaunchEvent launch;
  if (describe_launch(site.domain, site.cbid, site.params, launch)) {
    int32_t thread = current_thread_id();
    uint64_t key = stream_key(launch.stream, launch.per_thread_default_stream, thread);
    if (recording.breadcrumbs != nullptr) {
      OurCall guard;
      recording.breadcrumbs->before_launch(key, thread);
    }
    // A replay starts with its kernel nodes' slots cleared (not inside a capture: the clear would join the graph).
    if (launch.graph && recording.graphs != nullptr && !recording.tracker->capturing_stream(key)) {
      OurCall guard;
      recording.graphs->before_graph_launch(
          launch.graph_exec, reinterpret_cast<CUstream>(explicit_stream_handle(launch.stream, launch.per_thread_default_stream)));
    }
    return 0;
  }
  // What a successful sync proves complete is what was launched before it began (while the breadcrumbs do not
  // prove it already).
  ApiCall probe;
  if (describe_stream_call(site.domain, site.cbid, site.params, probe)) {
    if (routine_call(site.domain, site.cbid)) return 0;
    if (probe.kind == CallKind::destroy_stream) {
      // Ended at its entry: once the driver frees the handle, another thread's new stream may have it before this
      // call returns.
      int32_t thread = current_thread_id();
      uint64_t key = stream_key(probe.stream, probe.per_thread_default_stream, thread);
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
    if (probe.kind == CallKind::begin_capture && recording.graphs != nullptr) {
      OurCall guard;
      recording.graphs->prepare();
    }
    return recording.tracker->launch_count();
  }
  GraphCall graph_call;
  if (recording.graphs != nullptr && describe_graph_call(site.domain, site.cbid, nullptr, graph_call) &&
      graph_call.kind == GraphCallKind::add_kernel_node) {
    OurCall guard;
    recording.graphs->prepare();
  }
  return 0;
}


}  // namespace firstassert::source
