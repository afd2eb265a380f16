#include "tracker.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "clock.h"
#include "demangle.h"

namespace firstassert {
namespace {

constexpr size_t kMaxStreamMarks = 1024;

}  // namespace

Tracker::Tracker(size_t ring_capacity) : ring_(ring_capacity) {}

bool Tracker::capturing(uint64_t key) const {
  for (const auto& slot : capturing_) {
    if (slot.load(std::memory_order_acquire) == key) return true;
  }
  return false;
}

namespace {

// A record made whole, frames included: for the records that never go through the ring.
LaunchRecord whole_record(const LaunchEvent& launch, const char* kernel) {
  LaunchRecord r(launch);
  Tracker::complete_fields(r, kernel);
  // The record holds its own copy of the frames, kept for good or not.
  r.python_lasting = nullptr;
  for (unsigned i = 0; i < r.python_depth; ++i) r.python[i] = launch.python_stack[i];
  for (unsigned i = 0; i < r.stack_depth; ++i) r.stack[i] = launch.native_stack[i];
  return r;
}

}  // namespace

void Tracker::raise_mark(std::vector<StreamMark>& marks, uint64_t key, uint64_t upto) {
  for (StreamMark& m : marks) {
    if (m.key == key) {
      m.completed_before = std::max(m.completed_before, upto);
      return;
    }
  }
  if (marks.size() >= kMaxStreamMarks) marks.erase(marks.begin());
  marks.push_back({key, upto});
}

bool Tracker::proven_complete(const std::vector<StreamMark>& marks, uint64_t key, uint64_t seq) {
  return std::any_of(marks.begin(), marks.end(),
                     [&](const StreamMark& m) { return m.key == key && seq < m.completed_before; });
}

void Tracker::count_error(std::vector<ErrorSite>& sites, const ApiCall& call, int64_t now) {
  std::string api = call.api != nullptr ? call.api : "unknown";
  for (ErrorSite& s : sites) {
    if (s.code == call.code && s.domain == call.domain && s.api == api) {
      ++s.count;
      s.last_wall_ns = now;
      return;
    }
  }
  if (sites.size() >= kMaxSites - 1) {
    // Bounded: the last site gathers every call and code that found no place of its own.
    if (sites.size() == kMaxSites - 1) sites.push_back({call.domain, "(other calls)", 0, 0, now, now});
    ErrorSite& rest = sites.back();
    ++rest.count;
    rest.last_wall_ns = now;
    return;
  }
  sites.push_back({call.domain, std::move(api), call.code, 1, now, now});
}

std::vector<LaunchRecord> Tracker::records() const {
  std::vector<LaunchRecord> all = ring_.snapshot();
  for (LaunchRecord& r : all) with_wall_time(r);
  return all;
}

std::vector<LaunchRecord> Tracker::candidates_locked(uintptr_t context) const {
  std::vector<LaunchRecord> all = records();
  std::vector<LaunchRecord> out;
  for (auto it = all.rbegin(); it != all.rend() && out.size() < kMaxCandidates; ++it) {
    const LaunchRecord& r = *it;
    if (context != 0 && r.context != 0 && r.context != context) continue;
    if (proven_complete(context_marks_, r.context, r.seq)) continue;
    if (proven_complete(stream_marks_, stream_key(r.stream, r.per_thread_default_stream, r.thread), r.seq)) continue;
    out.push_back(r);
  }
  return out;
}

void Tracker::set_capturing_locked(uint64_t key, bool on) {
  if (key == 0) return;  // the legacy stream cannot be captured; 0 marks a free slot
  uint64_t from = on ? 0 : key;
  for (auto& slot : capturing_) {
    if (slot.load(std::memory_order_relaxed) == from) {
      slot.store(on ? key : 0, std::memory_order_release);
      capturing_count_.fetch_add(on ? 1u : ~0u, std::memory_order_release);
      return;
    }
  }
}

void Tracker::record_call(const ApiCall& call) {
  if (call.kind == CallKind::end_capture) {
    // A capture ends whatever the result (an invalidated capture ends with an error).
    std::lock_guard lock(mutex_);
    set_capturing_locked(stream_key(call.stream, call.per_thread_default_stream, current_thread_id()), false);
  }
  if (call.code == 0) {
    if (has_primary()) return;  // after a fault nothing completes: marks would only mislead
    // Launches made by other threads while the call was blocked are not proven complete.
    uint64_t upto = call.launches_at_entry != ApiCall::kUnknown ? call.launches_at_entry : ring_.total();
    std::lock_guard lock(mutex_);
    switch (call.kind) {
      case CallKind::sync_device:
        // Every launch made on this context before the call has completed; other contexts (GPUs) run on.
        raise_mark(context_marks_, call.context, upto);
        break;
      case CallKind::sync_stream:
      case CallKind::query_stream:
      case CallKind::blocking_copy:
        raise_mark(stream_marks_, stream_key(call.stream, call.per_thread_default_stream, current_thread_id()), upto);
        break;
      case CallKind::begin_capture:
        set_capturing_locked(stream_key(call.stream, call.per_thread_default_stream, current_thread_id()), true);
        break;
      default:
        break;
    }
    return;
  }
  if (is_status_not_error(call.code)) return;

  int64_t now = wall_ns();
  if (!is_sticky_error(call.code)) {
    std::lock_guard lock(mutex_);
    count_error(other_errors_, call, now);
    return;
  }
  if (primary_claimed_.exchange(true, std::memory_order_acq_rel)) {
    uint64_t count = 0;
    {
      std::lock_guard lock(mutex_);
      count = ++secondary_count_;
      count_error(secondary_, call, now);
    }
    if (on_secondary_) on_secondary_(count);
    return;
  }
  std::vector<uintptr_t> graph_execs;  // the executable graphs launched among the candidates
  {
    std::lock_guard lock(mutex_);
    primary_.domain = call.domain;
    primary_.api = call.api != nullptr ? call.api : "unknown";
    primary_.code = call.code;
    primary_.wall_ns = now;
    primary_.mono_ns = monotonic_ns();
    primary_.thread = current_thread_id();
    primary_.context = call.context;
    primary_.launches_before = ring_.total();
    candidates_ = candidates_locked(call.context);
    for (const LaunchRecord& r : candidates_) {
      if (r.graph && r.graph_exec != 0) graph_execs.push_back(r.graph_exec);
    }
  }
  if (graph_probe_ && !graph_execs.empty()) {
    // Once per executable graph: its slots hold its latest replay's, whichever of its launches is pending.
    std::map<uintptr_t, std::vector<LaunchRecord>> nodes;
    for (uintptr_t exec : graph_execs) {
      if (nodes.count(exec) != 0) continue;
      std::vector<LaunchRecord> of_exec = graph_probe_(exec);
      if (!of_exec.empty()) nodes.emplace(exec, std::move(of_exec));
    }
    std::lock_guard lock(mutex_);
    graph_nodes_ = std::move(nodes);
  }
  primary_seen_.store(true, std::memory_order_release);
  if (on_primary_) on_primary_(findings());
}

void Tracker::record_launch_error(const LaunchEvent& launch, ApiDomain domain, int code) {
  LaunchError e;
  e.domain = domain;
  e.code = code;
  e.launch = whole_record(launch, names_.intern(launch.kernel));
  LaunchRecord& r = e.launch;
  r.wall_ns = wall_ns();
  r.seq = ~uint64_t{0};  // never queued: no place in the launch order
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    // Of its kind: the same kernel name (whichever buffer the driver gave it in) and the same error.
    auto same = [&](const std::pair<const char*, int>& seen) {
      return seen.second == code && (seen.first == r.kernel || (seen.first != nullptr && r.kernel != nullptr &&
                                                                std::strcmp(seen.first, r.kernel) == 0));
    };
    if (std::none_of(launch_errors_seen_.begin(), launch_errors_seen_.end(), same) &&
        launch_errors_seen_.size() < kMaxLaunchErrors) {
      launch_errors_seen_.push_back({r.kernel, code});
      first = true;
    }
    if (launch_errors_.size() < kMaxLaunchErrors) launch_errors_.push_back(e);
  }
  if (on_launch_error_) on_launch_error_(e, first);
}

namespace {

std::string short_name(const LaunchRecord& r) {
  return r.kernel != nullptr ? short_kernel_name(demangle(r.kernel)) : std::string();
}

// The function a device message names, as short_name() gives kernels: PyTorch's asserts print __func__
// ("nll_loss_forward_reduce_cuda_kernel_2d"), a plain assert() prints __PRETTY_FUNCTION__ ("void k(int *)", or
// "void k<T>(T *) [with T = float]").
std::string short_name(const DeviceMessage& m) {
  std::string function = m.function;
  if (size_t with = function.find(" [with "); with != std::string::npos) function.resize(with);
  return short_kernel_name(function);
}

std::string hex(uintptr_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// Why one kernel node of a replay is the one that failed.
std::string graph_reason(const LaunchRecord& node, const std::vector<LaunchRecord>& nodes, bool stream_breadcrumbs) {
  size_t completed = std::count_if(nodes.begin(), nodes.end(), [](const LaunchRecord& n) {
    return n.graph_state == GraphNodeState::completed;
  });
  std::string reason = "graph breadcrumbs: in the replay that failed, " + std::to_string(completed) + " of the graph's " +
                       std::to_string(nodes.size()) + " kernel nodes completed, and node " +
                       std::to_string(node.graph_node) +
                       " is the only one left that did not while every kernel node it waits for did";
  reason += stream_breadcrumbs ? "; the stream breadcrumbs show every earlier launch on stream " + hex(node.stream) +
                                     " completed and no other stream had work outstanding"
                               : "; no other launch was outstanding";
  return reason;
}

}  // namespace

std::vector<LaunchRecord> Tracker::replayed_nodes(const LaunchRecord& launch) const {
  auto it = graph_nodes_.find(launch.graph_exec);
  if (launch.graph_exec == 0 || it == graph_nodes_.end()) return {};
  std::vector<LaunchRecord> nodes = it->second;
  for (LaunchRecord& n : nodes) {
    // The replay's: when, where and through which call it ran. The node's own: kernel, configuration, stacks.
    n.seq = launch.seq;
    n.mono_ns = launch.mono_ns;
    n.wall_ns = launch.wall_ns;
    n.thread = launch.thread;
    n.device = launch.device;
    n.context = launch.context;
    n.stream = launch.stream;
    n.correlation_id = launch.correlation_id;
    n.returned = launch.returned;
    n.api = launch.api;
    n.per_thread_default_stream = launch.per_thread_default_stream;
  }
  return nodes;
}

void Tracker::expand_graph_candidates(Findings& f) const {
  std::vector<LaunchRecord> candidates;
  for (const LaunchRecord& r : f.candidates) {
    std::vector<LaunchRecord> nodes = r.graph ? replayed_nodes(r) : std::vector<LaunchRecord>{};
    if (nodes.empty()) {
      candidates.push_back(r);
      continue;
    }
    // Newest first, as the candidates are: the nodes not known to have completed, the last made first.
    for (auto it = nodes.rbegin(); it != nodes.rend() && candidates.size() < kMaxCandidates; ++it) {
      if (it->graph_state != GraphNodeState::completed) candidates.push_back(*it);
    }
  }
  if (candidates.size() > kMaxCandidates) candidates.resize(kMaxCandidates);
  f.candidates = std::move(candidates);
  if (f.culprit && f.culprit->graph_node != 0) f.culprit_graph = replayed_nodes(*f.culprit);
}

// Narrows the candidates to the culprit: per stream, the breadcrumbs say which launches completed, so only the
// first launch not known complete on each stream can have failed; one such launch is exact; among several, the
// device's assertion names the function that failed (likely); otherwise the window remains.
void Tracker::decide_culprit(Findings& f) const {
  f.culprit.reset();
  f.culprit_message.reset();
  if (f.candidates.empty()) {
    f.confidence = "window";
    f.reason = "no recorded launch was pending: the failing kernel was launched before firstassert started";
    return;
  }
  std::map<uint64_t, std::vector<LaunchRecord>> by_stream;  // oldest first within a stream
  for (auto it = f.candidates.rbegin(); it != f.candidates.rend(); ++it)
    by_stream[stream_key(it->stream, it->per_thread_default_stream, it->thread)].push_back(*it);
  std::vector<LaunchRecord> open;  // launches that can have failed
  bool breadcrumbs = false;
  bool unfinished_by_breadcrumbs = false;  // a launch that did not return the error is shown unfinished
  for (const auto& [key, launches] : by_stream) {
    std::optional<uint64_t> completed_before = probe_ ? probe_(key) : std::nullopt;
    if (!completed_before) {
      open.insert(open.end(), launches.begin(), launches.end());
      continue;
    }
    breadcrumbs = true;
    auto first_open = std::find_if(launches.begin(), launches.end(),
                                   [&](const LaunchRecord& r) { return r.seq >= *completed_before; });
    if (first_open == launches.end()) continue;  // everything on this stream completed
    open.push_back(*first_open);
    unfinished_by_breadcrumbs |= first_open->returned == 0;
  }
  // A graph launch left open is the kernel nodes of its replay that can have failed, when its breadcrumbs say.
  std::vector<LaunchRecord> expanded;
  for (const LaunchRecord& r : open) {
    size_t before = expanded.size();
    if (r.graph) {
      for (const LaunchRecord& node : replayed_nodes(r)) {
        if (node.graph_open) expanded.push_back(node);
      }
    }
    if (expanded.size() == before) expanded.push_back(r);
  }
  open = std::move(expanded);
  // A launch that returned the sticky error itself ran to the fault only if nothing else was left running: had
  // it blocked until its kernel finished, every earlier launch would have finished and left its breadcrumb.
  if (unfinished_by_breadcrumbs) std::erase_if(open, [](const LaunchRecord& r) { return r.returned != 0; });
  std::set<uint64_t> streams_with_work;
  for (const LaunchRecord& r : open) streams_with_work.insert(stream_key(r.stream, r.per_thread_default_stream, r.thread));
  // Newest first; the nodes of one replay by their number, the last made first.
  std::sort(open.begin(), open.end(), [](const LaunchRecord& a, const LaunchRecord& b) {
    return a.seq != b.seq ? a.seq > b.seq : a.graph_node > b.graph_node;
  });

  // The device's own words: which open launches run the function its assertion names.
  std::vector<const LaunchRecord*> named;
  const DeviceMessage* message = nullptr;
  for (const DeviceMessage& m : f.device_messages) {
    for (const LaunchRecord& r : open) {
      if (r.kernel != nullptr && short_name(r) == short_name(m)) named.push_back(&r);
    }
    if (!named.empty()) {
      message = &m;
      break;
    }
  }

  if (open.empty()) {
    f.culprit = f.candidates.front();
    f.confidence = "window";
    f.reason = "the stream breadcrumbs show every pending launch completed; the failing work was not a recorded launch";
  } else if (open.size() == 1 && open.front().returned != 0) {
    f.culprit = open.front();
    f.confidence = "exact";
    f.reason = std::string("this launch returned ") + error_name(f.primary.domain, open.front().returned) +
               " itself: it ran to the fault before returning (as under CUDA_LAUNCH_BLOCKING=1), and " +
               (breadcrumbs ? "the stream breadcrumbs show every earlier launch completed"
                            : "no earlier launch was outstanding");
  } else if (open.size() == 1 && open.front().graph_node != 0) {
    f.culprit = open.front();
    f.confidence = "exact";
    f.reason = graph_reason(open.front(), replayed_nodes(open.front()), breadcrumbs);
  } else if (open.size() == 1) {
    f.culprit = open.front();
    f.confidence = "exact";
    f.reason = breadcrumbs
                   ? "stream breadcrumbs: every earlier launch on stream " + hex(open.front().stream) +
                         " completed and this one did not, and no other stream had work outstanding"
                   : "the only launch not yet seen to complete when " + f.primary.api + " reported the error";
  } else if (!named.empty()) {
    f.culprit = *named.back();  // the oldest open launch of the named function
    f.confidence = "likely";
    f.reason = std::to_string(open.size()) + " launches on " + std::to_string(streams_with_work.size()) +
               " streams could have failed; the device's assertion names " + short_name(*message) +
               (named.size() == 1 ? ", which only this one runs" : ", and this is the oldest of them");
  } else {
    f.culprit = open.front();
    f.confidence = "window";
    f.reason = std::to_string(open.size()) + " launches had not been seen to complete when " + f.primary.api +
               " reported the error; the failing kernel is among them (the newest is named)";
  }
  if (f.culprit) {
    for (const DeviceMessage& m : f.device_messages) {
      if (f.culprit->kernel != nullptr && short_name(*f.culprit) == short_name(m)) {
        f.culprit_message = m;
        break;
      }
    }
  }
}

bool Tracker::has_findings() const {
  if (has_primary()) return true;
  std::lock_guard lock(mutex_);
  return !launch_errors_.empty();
}

Findings Tracker::findings() const {
  Findings f;
  f.launches_recorded = ring_.total();
  std::vector<LaunchRecord> all = records();
  for (auto it = all.rbegin(); it != all.rend() && f.recent.size() < kRecentLaunches; ++it) f.recent.push_back(*it);
  f.device_messages = device_message_log().messages();
  {
    std::lock_guard lock(mutex_);
    f.has_primary = primary_seen_.load(std::memory_order_acquire);
    if (f.has_primary) {
      f.primary = primary_;
      f.candidates = candidates_;
    }
    f.secondary_count = secondary_count_;
    f.secondary = secondary_;
    f.other_errors = other_errors_;
    f.launch_errors = launch_errors_;
  }
  if (f.has_primary) {
    decide_culprit(f);
    expand_graph_candidates(f);
  } else if (!f.launch_errors.empty()) {
    // No sticky error, but a launch the API refused: that launch is the first error, known exactly.
    const LaunchError& e = f.launch_errors.front();
    f.culprit = e.launch;
    f.confidence = "exact";
    f.reason = std::string(launch_api_name(e.launch.api)) + " refused this launch with " +
               error_name(e.domain, e.code) + "; it never ran";
  }
  return f;
}

}  // namespace firstassert
