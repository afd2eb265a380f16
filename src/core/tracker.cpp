#include "tracker.h"

#include <algorithm>

#include "clock.h"

namespace firstassert {
namespace {

constexpr uintptr_t kLegacyStream = 0x1;     // cudaStreamLegacy / CU_STREAM_LEGACY
constexpr uintptr_t kPerThreadStream = 0x2;  // cudaStreamPerThread / CU_STREAM_PER_THREAD
constexpr size_t kMaxStreamMarks = 1024;

}  // namespace

Tracker::Tracker(size_t ring_capacity) : ring_(ring_capacity) {}

// Streams as the device sees them: handle 0 is the legacy stream, or the calling thread's own stream for the
// per-thread entry points, and CU_STREAM_PER_THREAD names a different stream on each thread.
uint64_t Tracker::stream_key(uintptr_t stream, bool per_thread_default_stream, int32_t thread) {
  if (stream == 0 && per_thread_default_stream) stream = kPerThreadStream;
  if (stream == kLegacyStream) stream = 0;
  if (stream == kPerThreadStream) return kPerThreadStream | (static_cast<uint64_t>(static_cast<uint32_t>(thread)) << 32);
  return stream;
}

bool Tracker::capturing(uint64_t key) const {
  for (const auto& slot : capturing_) {
    if (slot.load(std::memory_order_acquire) == key) return true;
  }
  return false;
}

uint64_t Tracker::record_launch(const LaunchEvent& launch) {
  if (capturing_count_.load(std::memory_order_acquire) != 0 && !launch.graph &&
      capturing(stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id())))
    return kNotRecorded;
  const char* kernel = names_.intern(launch.kernel);
  int64_t mono = monotonic_ns();
  int64_t wall = wall_ns();
  int32_t thread = current_thread_id();
  return ring_.append([&](LaunchRecord& r) {
    r.mono_ns = mono;
    r.wall_ns = wall;
    r.thread = thread;
    r.device = launch.device;
    r.context = launch.context;
    r.stream = launch.stream;
    r.kernel = kernel;
    r.grid = launch.grid;
    r.block = launch.block;
    r.shared_mem = launch.shared_mem;
    r.correlation_id = launch.correlation_id;
    r.api = launch.api;
    r.graph = launch.graph;
    r.per_thread_default_stream = launch.per_thread_default_stream;
    r.stack_depth = 0;
  });
}

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

std::vector<LaunchRecord> Tracker::candidates_locked(uintptr_t context) const {
  std::vector<LaunchRecord> all = ring_.snapshot();
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
    std::lock_guard lock(mutex_);
    ++secondary_count_;
    count_error(secondary_, call, now);
    return;
  }
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
  }
  primary_seen_.store(true, std::memory_order_release);
  if (on_primary_) on_primary_(findings());
}

Findings Tracker::findings() const {
  Findings f;
  f.launches_recorded = ring_.total();
  std::vector<LaunchRecord> all = ring_.snapshot();
  for (auto it = all.rbegin(); it != all.rend() && f.recent.size() < kRecentLaunches; ++it) f.recent.push_back(*it);
  std::lock_guard lock(mutex_);
  f.has_primary = primary_seen_.load(std::memory_order_acquire);
  if (f.has_primary) {
    f.primary = primary_;
    f.candidates = candidates_;
    f.confidence = "window";
    f.reason = std::to_string(candidates_.size()) + " launch" + (candidates_.size() == 1 ? "" : "es") +
               " had not been seen to complete when " + primary_.api +
               " reported the error; the failing kernel is among them";
  }
  f.secondary_count = secondary_count_;
  f.secondary = secondary_;
  f.other_errors = other_errors_;
  return f;
}

}  // namespace firstassert
