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
constexpr size_t kMaxStreamEnds = 8192;

// Whether a launch is of the failing context (a launch or an error whose context is not known is).
bool of_context(const LaunchFields& r, uintptr_t context) {
  return context == 0 || r.context == 0 || r.context == context;
}

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

void Tracker::raise_mark(std::vector<StreamMark>& marks, uint64_t key, uintptr_t context, uint64_t upto) {
  for (StreamMark& m : marks) {
    if (m.key == key && m.context == context && m.until == StreamProgress::kLive) {
      m.completed_before = std::max(m.completed_before, upto);
      return;
    }
  }
  if (marks.size() >= kMaxStreamMarks) marks.erase(marks.begin());
  marks.push_back({key, context, &marks == &stream_marks_ ? generation_start_locked(key) : 0, StreamProgress::kLive,
                   upto});
}

// A stream sync proves its own stream complete; the context's mark (every launch of it numbered below this completed)
// then moves on past each launch of the context the ring shows proven, in launch order, up to the first that is not.
// Where every launch is followed by a sync of its stream (FIRSTASSERT_SYNC=all, or a job that syncs each stream it
// uses), the mark keeps up with the launches, and launches the ring later drops stay known complete: a fault's
// first unfinished launch is then never "dropped" for want of what happened between its stream's launches. Each launch
// is passed once, so the work is bounded by the launches made; a mark held back costs one look per sync.
void Tracker::advance_context_mark_locked(uintptr_t context, uint64_t upto) {
  uint64_t from = 0;
  for (const StreamMark& m : context_marks_) {
    if (m.key == context) from = std::max(from, m.completed_before);
  }
  uint64_t seq = from;
  LaunchFields r;  // the fields alone: a sync may walk thousands of launches
  for (; seq < upto; ++seq) {
    // A launch the ring no longer holds (or another thread still writes) cannot be shown proven.
    if (!ring_.find_fields(seq, r) || (of_context(r, context) && !proven_locked(r))) break;
  }
  if (seq > from) raise_mark(context_marks_, context, 0, seq);
}

// A stream mark of a default stream proves only launches of the same context.
bool Tracker::proven_complete(const std::vector<StreamMark>& marks, const LaunchFields& r) {
  uint64_t key = stream_key(r.stream, r.per_thread_default_stream, r.thread, r.device);
  bool by_context = is_default_stream_key(key);
  return std::any_of(marks.begin(), marks.end(), [&](const StreamMark& m) {
    return m.key == key && (!by_context || m.context == r.context) && r.seq >= m.since &&
           r.seq < m.until && r.seq < m.completed_before;
  });
}

bool Tracker::proven_by_context(const std::vector<StreamMark>& marks, const LaunchFields& r) {
  return std::any_of(marks.begin(), marks.end(),
                     [&](const StreamMark& m) { return m.key == r.context && r.seq < m.completed_before; });
}

bool Tracker::proven_locked(const LaunchFields& r) const {
  return proven_by_context(context_marks_, r) || proven_complete(stream_marks_, r);
}

// The first launch number the stream's current generation can hold: after its handle's last end, or after any end
// that may have been forgotten.
uint64_t Tracker::generation_start_locked(uint64_t key) const {
  uint64_t start = stream_ends_forgotten_below_;
  for (const StreamEnd& end : stream_ends_) {
    if (end.stream_key == key) start = std::max(start, end.at);
  }
  return start;
}

// Events and stream waits order streams: a wait whose event stands for launches that never completed holds back the
// waiting stream's later launches. Events recorded into a capturing stream are graph nodes, not stream work.
void Tracker::record_event_locked(const ApiCall& call, uint64_t key, uint64_t upto) {
  if (call.event == 0 || capturing(key)) return;
  EventRecord& slot = event_slot(call.event);
  slot.event = call.event;
  slot.upstream = {key, current_thread_id(), upto, call.context, call.marks_at_entry};
}

void Tracker::wait_event_locked(const ApiCall& call, uint64_t key) {
  if (call.event == 0 || capturing(key)) return;
  const EventRecord& slot = event_slot(call.event);
  if (slot.event != call.event) return;  // never recorded, or pushed out: nothing known
  // The wait is queued (this is its call's return): launch calls that begin after this mark are behind it.
  StreamWait wait{key, current_thread_id(), ring_.total(), queue_marks_.fetch_add(1, std::memory_order_acq_rel) + 1,
                  slot.upstream};
  if (waits_.size() < kMaxWaits) {
    waits_.push_back(wait);
  } else {
    waits_[waits_next_] = wait;
    waits_next_ = (waits_next_ + 1) % kMaxWaits;
  }
}

void Tracker::destroy_event_locked(const ApiCall& call) {
  EventRecord& slot = event_slot(call.event);
  if (slot.event == call.event) slot = EventRecord{};
}

void Tracker::stream_ended(uint64_t key, uint64_t at) {
  std::lock_guard lock(mutex_);
  // A sync of the old stream proves nothing of the new one, nor one of the new one anything of the old.
  for (StreamMark& m : stream_marks_) {
    if (m.key == key && m.until == StreamProgress::kLive) m.until = at;
  }
  if (stream_ends_.size() >= kMaxStreamEnds) {
    // Ends older than every launch the ring holds tell nothing about a launch any more; else the oldest goes.
    uint64_t total = ring_.total();
    uint64_t oldest_held = total > ring_.capacity() ? total - ring_.capacity() : 0;
    std::erase_if(stream_ends_, [&](const StreamEnd& e) { return e.at <= oldest_held; });
    if (stream_ends_.size() >= kMaxStreamEnds) {
      stream_ends_forgotten_below_ = std::max(stream_ends_forgotten_below_, stream_ends_.front().at);
      stream_ends_.erase(stream_ends_.begin());
    }
  }
  stream_ends_.push_back({key, at});
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

// What the ring and the syncs say when the primary error is seen: the launches of its context no sync proved
// complete, and which launch numbers the ring no longer holds.
void Tracker::keep_evidence_locked(uintptr_t context) {
  std::vector<LaunchRecord> all = ring_.snapshot();
  uint64_t total = primary_.launches_before;
  horizon_ = all.empty() ? total : all.front().seq;
  missing_.clear();
  pending_.clear();
  uint64_t expected = horizon_;
  for (LaunchRecord& r : all) {
    for (; expected < r.seq && expected < total; ++expected) missing_.push_back(expected);
    expected = r.seq + 1;
    if (!of_context(r, context) || proven_locked(r)) continue;
    with_wall_time(r);
    pending_.push_back(r);
  }
  for (; expected < total; ++expected) missing_.push_back(expected);
  std::map<uint64_t, uintptr_t> default_context;
  shared_defaults_.clear();
  for (const LaunchRecord& r : all) {
    uint64_t key = stream_key(r.stream, r.per_thread_default_stream, r.thread, r.device);
    if (!is_default_stream_key(key) || r.context == 0) continue;
    auto [it, added] = default_context.emplace(key, r.context);
    if (!added && it->second != r.context &&
        std::find(shared_defaults_.begin(), shared_defaults_.end(), key) == shared_defaults_.end())
      shared_defaults_.push_back(key);
  }
  synced_before_ = 0;
  for (const StreamMark& m : context_marks_) {
    if (m.key == context) synced_before_ = std::max(synced_before_, m.completed_before);
  }
}

Evidence Tracker::evidence() const {
  Evidence e;
  {
    std::lock_guard lock(mutex_);
    e.pending = pending_;
    e.launches = primary_.launches_before;
    e.horizon = horizon_;
    e.synced_before = synced_before_;
    e.generations_known_from = stream_ends_forgotten_below_;
    e.stream_ends = stream_ends_;
    e.waits = waits_;
    e.shared_default_streams = shared_defaults_;
    e.launch_blocking = launch_blocking_;
    e.api = primary_.api;
    e.error = error_name(primary_.domain, primary_.code);
    // A launch number the ring did not hold complete when the error was seen (still being written then, or numbered
    // only after): a candidate like the others if the ring holds it now, else missing.
    auto read_again = [&](uint64_t seq) {
      LaunchRecord r;
      if (!ring_.find(seq, r)) {
        e.missing.push_back(seq);
        return;
      }
      if (!of_context(r, primary_.context) || proven_locked(r)) return;
      with_wall_time(r);
      e.pending.insert(std::upper_bound(e.pending.begin(), e.pending.end(), r,
                                        [](const LaunchRecord& a, const LaunchRecord& b) { return a.seq < b.seq; }),
                       r);
    };
    for (uint64_t seq : missing_) read_again(seq);
    // Launches numbered after the error was seen: another thread's launch queued before the fault may have taken its
    // number only then (a launch is numbered after its call returned).
    uint64_t now = ring_.total();
    uint64_t from = std::max(primary_.launches_before, now > ring_.capacity() ? now - ring_.capacity() : 0);
    if (from - primary_.launches_before > ring_.capacity()) {
      e.horizon = from;  // so many dropped since (other devices' launches): treated as nothing held before
    } else {
      for (uint64_t seq = primary_.launches_before; seq < from; ++seq) e.missing.push_back(seq);
    }
    for (uint64_t seq = from; seq < now; ++seq) read_again(seq);
    e.launches = std::max(e.launches, now);
  }
  e.ring_capacity = ring_.capacity();
  e.replayed_nodes = [this](const LaunchRecord& r) { return replayed_nodes(r); };
  // Outside the lock: the breadcrumbs take their own, and tell the tracker of streams that end under it.
  if (probe_) e.progress = probe_();
  if (primary_.code == 710) e.messages = device_message_log().messages();
  return e;
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

// A capture ends whatever the call's result (an invalidated capture ends with an error).
void Tracker::end_capture(const ApiCall& call) {
  std::lock_guard lock(mutex_);
  set_capturing_locked(stream_key(call.stream, call.per_thread_default_stream, current_thread_id(), call.device), false);
}

// What a call that succeeded proves: syncs mark launches complete; captures, events and stream waits are followed.
// Inline: most calls record_call sees end here.
__attribute__((always_inline)) inline void Tracker::record_success(const ApiCall& call) {
  if (call.kind == CallKind::destroy_stream) return;  // ended at its entry (stream_ended)
  if (has_primary()) {  // after a fault nothing completes on its context: marks would only mislead
    record_after_primary(call);
    return;
  }
  // Launches made by other threads while the call was blocked are not proven complete.
  uint64_t upto = call.launches_at_entry != ApiCall::kUnknown ? call.launches_at_entry : ring_.total();
  uint64_t key = stream_key(call.stream, call.per_thread_default_stream, current_thread_id(), call.device);
  std::lock_guard lock(mutex_);
  switch (call.kind) {
    case CallKind::sync_device:
      // Every launch made on this context before the call has completed; other contexts (GPUs) run on.
      raise_mark(context_marks_, call.context, 0, upto);
      break;
    case CallKind::sync_stream:
    case CallKind::query_stream:
    case CallKind::blocking_copy:
      raise_mark(stream_marks_, key, call.context, upto);
      advance_context_mark_locked(call.context, upto);
      break;
    case CallKind::begin_capture:
      set_capturing_locked(key, true);
      break;
    case CallKind::record_event:
      record_event_locked(call, key, upto);
      break;
    case CallKind::wait_event:
      wait_event_locked(call, key);
      break;
    case CallKind::destroy_event:
      destroy_event_locked(call);
      break;
    default:
      break;
  }
}

// What a call on another context than the primary error's shows of that device, after the primary error: a
// synchronizing call that succeeded (its work still completes), or a sticky error of its own. Calls on the failing
// context, and calls whose context is not known, tell nothing apart from the primary error. Returns whether the call
// was another context's.
bool Tracker::record_after_primary(const ApiCall& call) {
  bool sync = call.kind == CallKind::sync_device || call.kind == CallKind::sync_stream ||
              call.kind == CallKind::query_stream || call.kind == CallKind::blocking_copy;
  if (call.code == 0 && !sync) return false;
  std::lock_guard lock(mutex_);
  if (call.context == 0 || primary_.context == 0 || call.context == primary_.context) return false;
  auto it = after_primary_.find(call.context);
  if (it == after_primary_.end()) {
    if (after_primary_.size() >= kMaxSites) return true;
    it = after_primary_.emplace(call.context, AfterFirstError{}).first;
  }
  AfterFirstError& after = it->second;
  if (call.code == 0) {
    ++after.syncs_succeeded;
  } else if (after.sticky_errors++ == 0) {
    after.first_code = call.code;
    after.first_domain = call.domain;
    after.first_api = call.api != nullptr ? call.api : "unknown";
  }
  return true;
}

// A sticky error after the primary one: on its context, counted by call and code, and told to on_secondary; on
// another context (another GPU), that device's own (record_after_primary).
void Tracker::record_secondary(const ApiCall& call, int64_t now) {
  if (record_after_primary(call)) return;
  uint64_t count = 0;
  {
    std::lock_guard lock(mutex_);
    count = ++secondary_count_;
    count_error(secondary_, call, now);
  }
  if (on_secondary_) on_secondary_(count);
}

// The first sticky error: what it is, and the evidence as it stands now (keep_evidence_locked). Returns the
// executable graphs launched among the launches that can have failed.
std::vector<uintptr_t> Tracker::keep_primary(const ApiCall& call, int64_t now) {
  std::vector<uintptr_t> graph_execs;
  std::lock_guard lock(mutex_);
  primary_.domain = call.domain;
  primary_.api = call.api != nullptr ? call.api : "unknown";
  primary_.code = call.code;
  primary_.wall_ns = now;
  primary_.mono_ns = monotonic_ns();
  primary_.thread = current_thread_id();
  primary_.context = call.context;
  primary_.launches_before = ring_.total();
  keep_evidence_locked(call.context);
  for (const LaunchRecord& r : pending_) {
    if (r.graph && r.graph_exec != 0) graph_execs.push_back(r.graph_exec);
  }
  return graph_execs;
}

// The kernel nodes of those executable graphs, read once each and outside the lock: their slots hold their latest
// replay's, whichever of their launches is pending, and are final now.
void Tracker::keep_graph_nodes(const std::vector<uintptr_t>& graph_execs) {
  if (!graph_probe_ || graph_execs.empty()) return;
  std::map<uintptr_t, std::vector<LaunchRecord>> nodes;
  for (uintptr_t exec : graph_execs) {
    if (nodes.count(exec) != 0) continue;
    std::vector<LaunchRecord> of_exec = graph_probe_(exec);
    if (!of_exec.empty()) nodes.emplace(exec, std::move(of_exec));
  }
  std::lock_guard lock(mutex_);
  graph_nodes_ = std::move(nodes);
}

// The first sticky error: kept with its evidence, then published (has_primary) and handed to on_primary.
void Tracker::record_primary(const ApiCall& call, int64_t now) {
  keep_graph_nodes(keep_primary(call, now));
  primary_seen_.store(true, std::memory_order_release);
  if (on_primary_) on_primary_(findings());
}

// In steps: a capture ends, whatever the result; a success marks what it proves; an error is counted apart when it
// is not sticky, is secondary after the first sticky one, or is that first one, the primary error.
void Tracker::record_call(const ApiCall& call) {
  if (call.kind == CallKind::end_capture) end_capture(call);
  if (call.code == 0) {
    record_success(call);
    return;
  }
  if (is_status_not_error(call.code)) return;
  int64_t now = wall_ns();
  if (!is_sticky_error(call.code)) {
    std::lock_guard lock(mutex_);
    count_error(other_errors_, call, now);
  } else if (primary_claimed_.exchange(true, std::memory_order_acq_rel)) {
    record_secondary(call, now);
  } else {
    record_primary(call, now);
  }
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
    if (f.has_primary) f.primary = primary_;
    f.secondary_count = secondary_count_;
    f.secondary = secondary_;
    f.other_errors = other_errors_;
    f.launch_errors = launch_errors_;
  }
  if (f.has_primary) {
    Decision d = decide_culprit(evidence());
    f.candidates_total = d.candidates.size();
    f.candidates_fitting = d.fitting;
    cut_candidates(d, kMaxCandidates);
    f.candidates = std::move(d.candidates);
    f.culprit = std::move(d.culprit);
    f.confidence = d.confidence;
    f.reason = std::move(d.reason);
    if (f.culprit) {
      if (f.primary.code == 710) {
        for (const DeviceMessage& m : f.device_messages) {
          if (fits_message(*f.culprit, m)) {
            f.culprit_message = m;
            break;
          }
        }
      }
      if (f.culprit->graph_node != 0) f.culprit_graph = replayed_nodes(*f.culprit);
    }
  } else if (!f.launch_errors.empty()) {
    // No sticky error, but a launch the API refused: that launch is the first error, known exactly.
    const LaunchError& e = f.launch_errors.front();
    f.culprit = e.launch;
    f.confidence = "exact";
    f.reason = std::string(launch_api_name(e.launch.api)) + " refused this launch with " +
               error_name(e.domain, e.code) + "; it never ran";
  }
  f.devices = devices_used(f.has_primary ? f.primary.context : 0, all);
  if (f.has_primary && f.primary.context != 0 && f.devices.size() > 1)
    f.reason += "; " + failing_context_clause(f.devices);
  return f;
}

// Each context seen (device_probe_, else those the calls after the error came from), with what its calls showed
// after the primary error; the failing one first.
std::vector<DeviceUse> Tracker::devices_used(uintptr_t failing, const std::vector<LaunchRecord>& all) const {
  std::vector<DeviceIdentity> seen = device_probe_ ? device_probe_() : std::vector<DeviceIdentity>{};
  std::map<uintptr_t, AfterFirstError> after;
  uint64_t from = 0;
  {
    std::lock_guard lock(mutex_);
    after = after_primary_;
    from = primary_.launches_before;
  }
  if (failing != 0 && probe_) {
    if (std::optional<StreamProgressView> progress = probe_())
      count_completed_after(all, from, failing, *progress, after);
  }
  std::vector<DeviceUse> used;
  for (const DeviceIdentity& identity : seen) used.push_back({identity, false, {}});
  for (const auto& entry : after) {
    const uintptr_t context = entry.first;  // a plain variable: a lambda may not capture a structured binding (C++17)
    auto named = [&](const DeviceUse& u) { return u.identity.context == context; };
    if (std::any_of(used.begin(), used.end(), named)) continue;
    DeviceIdentity unnamed;
    unnamed.context = context;
    used.push_back({unnamed, false, {}});
  }
  for (DeviceUse& u : used) {
    u.failed_first = failing != 0 && u.identity.context == failing;
    if (auto it = after.find(u.identity.context); it != after.end()) u.after = it->second;
  }
  std::stable_partition(used.begin(), used.end(), [](const DeviceUse& u) { return u.failed_first; });
  return used;
}

// The launches of other contexts than the failing one, numbered after the primary error (from), that the breadcrumbs
// prove complete: any write that ran proves every launch of its stream's generation numbered below it complete.
void count_completed_after(const std::vector<LaunchRecord>& all, uint64_t from, uintptr_t failing,
                           const StreamProgressView& progress, std::map<uintptr_t, AfterFirstError>& after) {
  std::multimap<uint64_t, const StreamProgress*> by_key;
  for (const StreamProgress& p : progress.pairs) by_key.emplace(p.stream_key, &p);
  for (const LaunchRecord& r : all) {
    if (r.seq < from || r.context == 0 || r.context == failing || r.graph_node != 0) continue;
    auto [begin, end] = by_key.equal_range(stream_key(r.stream, r.per_thread_default_stream, r.thread, r.device));
    bool completed = std::any_of(begin, end, [&](const auto& entry) {
      const StreamProgress& p = *entry.second;
      return p.born_at <= r.seq && r.seq < p.ended_at && r.seq < p.completed_before;
    });
    if (completed && (after.count(r.context) != 0 || after.size() < Tracker::kMaxSites)) ++after[r.context].launches_completed;
  }
}

std::string device_words(const DeviceIdentity& d) {
  return d.ordinal >= 0 ? "cuda:" + std::to_string(d.ordinal) : std::string("a device firstassert could not name");
}

std::string failing_context_clause(const std::vector<DeviceUse>& devices) {
  const DeviceUse& failing = devices.front();
  std::string where = failing.failed_first ? " (" + device_words(failing.identity) + ")" : std::string();
  return "only launches made in the context that returned the error" + where +
         " were considered: each GPU's context has its own error, and the job used " +
         std::to_string(devices.size()) + " contexts";
}

}  // namespace firstassert
