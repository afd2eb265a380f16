// The core of firstassert. Both event sources (the CUPTI subscriber, cupti/subscriber.cpp, and the interposition
// hooks, src/recorder/interpose.cpp) hand each call to src/source/observer, which feeds the tracker: a launch that was
// queued (record_launch), the result of an API call (record_call), a launch the API refused (record_launch_error), a
// stream destroyed (stream_ended; the breadcrumbs call it too, when a thread's own stream ends with its thread). It
// keeps the launch ring, tells the primary error (the first sticky one) from the secondary ones, keeps what the syncs
// proved, and hands the evidence to the culprit decision (culprit_decision.h). It knows nothing of CUPTI or dlsym.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clock.h"
#include "cuda_errors.h"
#include "culprit_decision.h"
#include "device_messages.h"
#include "device_use.h"
#include "launch_record.h"
#include "launch_ring.h"
#include "name_table.h"
#include "stream_key.h"

namespace firstassert {

// What an API call means for the culprit window when it succeeds.
enum class CallKind : uint8_t {
  other,
  launch,
  sync_device,    // all earlier work of the context completed
  sync_stream,    // all earlier work of `stream` completed
  query_stream,   // as sync_stream when it returns success
  sync_event,     // completion of an unknown stream: narrows nothing
  blocking_copy,  // completes earlier work of the default stream (`stream`)
  begin_capture,  // launches into `stream` become graph nodes until end_capture
  end_capture,
  destroy_stream,  // `stream` ends: a handle made again later is another stream
  record_event,    // `event` now stands for the work queued so far on `stream`
  wait_event,      // work queued on `stream` from now on waits for what `event` stands for
  destroy_event,   // `event` ends: a handle made again later is another event
  reset_context,   // the context (and the memory breadcrumbs live in) is destroyed or reset
};

struct ApiCall {
  ApiDomain domain = ApiDomain::runtime;
  const char* api = nullptr;  // the function's name
  int code = 0;
  CallKind kind = CallKind::other;
  uintptr_t stream = 0;
  uintptr_t event = 0;  // record_event, wait_event
  bool per_thread_default_stream = false;
  uintptr_t context = 0;
  int32_t device = -1;  // the context's device (a default stream's key holds it); -1: not known
  // launch_count() when the call was entered: what a successful sync proves complete. kUnknown: count at exit.
  uint64_t launches_at_entry = kUnknown;
  // record_event: queue_marks() when the call was entered (the launches queued before the record); 0: not known.
  uint64_t marks_at_entry = 0;
  static constexpr uint64_t kUnknown = ~uint64_t{0};
};

struct PrimaryError {
  ApiDomain domain = ApiDomain::runtime;
  std::string api;
  int code = 0;
  int64_t wall_ns = 0;
  int64_t mono_ns = 0;
  int32_t thread = 0;
  uintptr_t context = 0;
  uint64_t launches_before = 0;  // launches recorded when it was seen
};

struct ErrorSite {
  ApiDomain domain = ApiDomain::runtime;
  std::string api;
  int code = 0;
  uint64_t count = 0;
  int64_t first_wall_ns = 0;
  int64_t last_wall_ns = 0;
};

// A launch the API refused (invalid configuration, out of resources, no kernel image...): known exactly at once.
struct LaunchError {
  LaunchRecord launch;
  ApiDomain domain = ApiDomain::runtime;
  int code = 0;
};

struct Findings {
  bool has_primary = false;              // a sticky error was seen
  PrimaryError primary;
  std::vector<LaunchRecord> candidates;  // the launches that can have failed (at most kMaxCandidates: cut_candidates)
  size_t candidates_total = 0;           // how many there are
  size_t candidates_fitting = 0;         // of them, how many fit the device's line (listed first; 0: none told apart)
  std::optional<LaunchRecord> culprit;   // the one named, with how sure we are and why
  const char* confidence = "unknown";    // exact, likely, window or unknown (culprit_decision.h)
  std::string reason;
  std::optional<DeviceMessage> culprit_message;  // the device's assertion line that matches the culprit
  std::vector<DeviceMessage> device_messages;
  std::vector<LaunchError> launch_errors;  // the first kMaxLaunchErrors, in order
  uint64_t secondary_count = 0;
  std::vector<ErrorSite> secondary;      // errors after the primary one on its context, by (API, code)
  std::vector<ErrorSite> other_errors;   // non-sticky errors, which never become primary
  std::vector<LaunchRecord> recent;      // the last launches, newest first
  // When the culprit is a kernel node of a CUDA graph: every kernel node of its graph, as the replay ran them, in
  // the order they were made (GraphTable::nodes_of).
  std::vector<LaunchRecord> culprit_graph;
  uint64_t launches_recorded = 0;
  // The GPUs the job used (each context seen), the failing one first; sticky errors from the others' contexts are
  // theirs (DeviceUse::after), not counted as secondary errors of the first.
  std::vector<DeviceUse> devices;
};

// What the breadcrumbs (progress) show of the other contexts after the primary error: their launches numbered from
// `from` on that completed, counted into after (bounded as Tracker's table of them).
void count_completed_after(const std::vector<LaunchRecord>& all, uint64_t from, uintptr_t failing,
                           const StreamProgressView& progress, std::map<uintptr_t, AfterFirstError>& after);
// "cuda:1", or words saying the device is not known.
std::string device_words(const DeviceIdentity& d);
// The decision's words when the job used several contexts (devices, the failing one first): only the failing one's
// launches were candidates.
std::string failing_context_clause(const std::vector<DeviceUse>& devices);

class Tracker {
 public:
  static constexpr size_t kMaxSites = 64;
  static constexpr size_t kMaxCandidates = 64;
  static constexpr size_t kRecentLaunches = 32;
  static constexpr size_t kMaxLaunchErrors = 64;

  using PrimaryHook = std::function<void(const Findings&)>;
  // A secondary error was counted; count is how many there are now.
  using SecondaryHook = std::function<void(uint64_t count)>;
  // A refused launch; first is true the first time this (kernel, code) pair is seen.
  using LaunchErrorHook = std::function<void(const LaunchError&, bool first)>;
  // What the stream breadcrumbs say now; nullopt when they are off.
  using ProgressProbe = std::function<std::optional<StreamProgressView>()>;
  // The kernel nodes of an executable graph, with what their graph breadcrumbs say (GraphTable::nodes_of); empty
  // when it is not known.
  using GraphProbe = std::function<std::vector<LaunchRecord>(uintptr_t exec)>;
  // The contexts seen so far and their devices, in the order they were first seen (source/context_devices).
  using DeviceProbe = std::function<std::vector<DeviceIdentity>()>;

  explicit Tracker(size_t ring_capacity);

  // Called once, on the thread that saw the primary error, outside the tracker's locks.
  void on_primary(PrimaryHook hook) { on_primary_ = std::move(hook); }
  // Called on the thread that saw each secondary error, outside the tracker's locks.
  void on_secondary(SecondaryHook hook) { on_secondary_ = std::move(hook); }
  void on_launch_error(LaunchErrorHook hook) { on_launch_error_ = std::move(hook); }
  void set_progress_probe(ProgressProbe probe) { probe_ = std::move(probe); }
  // CUDA_LAUNCH_BLOCKING=1 in the process: a launch that returns the sticky error may have run to it.
  void set_launch_blocking(bool on) { launch_blocking_ = on; }
  void set_graph_probe(GraphProbe probe) { graph_probe_ = std::move(probe); }
  void set_device_probe(DeviceProbe probe) { device_probe_ = std::move(probe); }

  // The stable copy of a kernel name, as launch records hold them.
  const char* intern(const char* name) { return names_.intern(name); }

  // A launch that the API accepted, described in place by the event source: record_launch completes its fields
  // (seq, time, thread; kernel becomes the interned name) and stores them in the ring as they are. No allocation or
  // lock after the kernel's first launch. A launch into a capturing stream only adds a node to a graph: it is not
  // recorded (and left as it was), and kNotRecorded is returned.
  // Inline: every launch is recorded here.
  __attribute__((always_inline)) uint64_t record_launch(LaunchEvent& launch) {
    uint64_t seq = number_launch(launch);
    if (seq != kNotRecorded) store_launch(launch, false);
    return seq;
  }
  uint64_t record_launch(LaunchEvent&& launch) { return record_launch(launch); }
  static constexpr uint64_t kNotRecorded = ~uint64_t{0};
  // record_launch in two steps, for the launch path, which queues the launch's breadcrumb under its number before
  // the record is stored: number_launch completes the fields and numbers the launch (kNotRecorded, leaving it as it
  // was, for a launch into a capturing stream); store_launch stores it, with its queue mark when whatever is queued
  // after its call returns lies behind it on its stream (holds_back_later: its breadcrumb was queued, or the context
  // was lost before the write: Breadcrumbs::after_launch).
  __attribute__((always_inline)) uint64_t number_launch(LaunchEvent& launch) {
    if (capturing_count_.load(std::memory_order_acquire) != 0 && !launch.graph &&
        capturing(stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id(), launch.device)))
      return kNotRecorded;
    complete_fields(launch, names_.intern(launch.kernel));
    return ring_.number(launch);
  }
  __attribute__((always_inline)) void store_launch(LaunchEvent& launch, bool holds_back_later) {
    // Release: a launch call that reads this mark at its entry (queue_marks, acquire) began after this one's kernel
    // and breadcrumb were queued, so on a shared stream it lies behind that breadcrumb.
    if (holds_back_later) launch.queue_mark = queue_marks_.fetch_add(1, std::memory_order_acq_rel) + 1;
    // The fields go to the ring's slot from where the event source described them, the frames from its buffers.
    ring_.publish(launch, {launch.python_stack, launch.native_stack});
  }
  // How many queue marks were taken: by launch calls once their kernel and breadcrumb were queued, and by stream waits
  // once queued. Read when a launch call or an event's record begins (LaunchFields::marks_at_entry): what took a mark
  // at most that had been queued before.
  uint64_t queue_marks() const { return queue_marks_.load(std::memory_order_acquire); }
  // The result of any API call (launches included): sync marks on success, errors otherwise.
  void record_call(const ApiCall& call);
  // A launch the API refused at once (its call is recorded by record_call as well).
  void record_launch_error(const LaunchEvent& launch, ApiDomain domain, int code);
  // A stream ended when `at` launches had been recorded (destroyed, or a thread's own stream with its thread): a
  // handle made again later is another stream.
  void stream_ended(uint64_t key, uint64_t at);

  // Whether the stream (stream_key) is being captured into a graph. Lock-free.
  bool capturing_stream(uint64_t key) const {
    return capturing_count_.load(std::memory_order_acquire) != 0 && capturing(key);
  }
  bool has_primary() const { return primary_seen_.load(std::memory_order_acquire); }
  // Whether findings() would hold anything to report (a sticky error or a refused launch), without reading the ring.
  bool has_findings() const;
  uint64_t launch_count() const { return ring_.total(); }
  Findings findings() const;
  const LaunchRing& ring() const { return ring_; }
  // What the tracker adds to the fields an event source described: the time, the thread, the interned name, and the
  // depths cut to a record's room.
  static void complete_fields(LaunchFields& f, const char* kernel) {
    f.mono_ns = monotonic_ns();  // one clock on the launch path: the wall time is worked out when it is read
    f.thread = current_thread_id();
    f.kernel = kernel;
    if (f.python_depth > kMaxPythonFrames) f.python_depth = kMaxPythonFrames;
    if (f.stack_depth > kMaxStackFrames) f.stack_depth = kMaxStackFrames;
  }
  // A record read from the ring gets its wall time here (the launch path keeps only the monotonic one).
  static void with_wall_time(LaunchRecord& r) {
    if (r.wall_ns == 0) r.wall_ns = wall_from_monotonic(r.mono_ns);
  }

 private:
  std::vector<LaunchRecord> records() const;  // the ring's complete records, oldest first, with wall times
  struct StreamMark {
    uint64_t key;
    uintptr_t context;          // a default stream's device (context): each has its own under one key
    uint64_t since;             // the stream's generation began with this launch number...
    uint64_t until;             // ...and ended before this one (StreamProgress::kLive: it lives)
    uint64_t completed_before;  // launches on the stream with seq below this have completed
  };
  void raise_mark(std::vector<StreamMark>& marks, uint64_t key, uintptr_t context, uint64_t upto);
  void advance_context_mark_locked(uintptr_t context, uint64_t upto);
  static bool proven_complete(const std::vector<StreamMark>& marks, const LaunchFields& r);
  static bool proven_by_context(const std::vector<StreamMark>& marks, const LaunchFields& r);
  bool proven_locked(const LaunchFields& r) const;
  uint64_t generation_start_locked(uint64_t key) const;
  void count_error(std::vector<ErrorSite>& sites, const ApiCall& call, int64_t now);
  // record_call's steps, in tracker.cpp (record_success is on the hot path: inline there).
  void end_capture(const ApiCall& call);
  void record_success(const ApiCall& call);
  void record_secondary(const ApiCall& call, int64_t now);
  bool record_after_primary(const ApiCall& call);
  std::vector<DeviceUse> devices_used(uintptr_t failing, const std::vector<LaunchRecord>& all) const;
  void record_primary(const ApiCall& call, int64_t now);
  std::vector<uintptr_t> keep_primary(const ApiCall& call, int64_t now);
  void keep_graph_nodes(const std::vector<uintptr_t>& graph_execs);
  void keep_evidence_locked(uintptr_t context);
  Evidence evidence() const;
  // A graph launch's kernel nodes as that replay ran them (seen when the primary error was); empty: unknown.
  std::vector<LaunchRecord> replayed_nodes(const LaunchRecord& graph_launch) const;

  LaunchRing ring_;
  NameTable names_{65536};  // distinct kernel (and API) names; beyond, new names read as NameTable::kTableFull
  PrimaryHook on_primary_;
  SecondaryHook on_secondary_;
  LaunchErrorHook on_launch_error_;
  ProgressProbe probe_;
  GraphProbe graph_probe_;
  DeviceProbe device_probe_;

  bool capturing(uint64_t key) const;
  void set_capturing_locked(uint64_t key, bool on);

  // Streams being captured: a count read on every launch (almost always 0), and the keys, changed under mutex_.
  static constexpr size_t kMaxCapturing = 32;
  std::atomic<uint32_t> capturing_count_{0};
  std::atomic<uint64_t> capturing_[kMaxCapturing] = {};

  std::atomic<uint64_t> queue_marks_{0};  // taken by store_launch and wait_event_locked

  std::atomic<bool> primary_claimed_{false};
  std::atomic<bool> primary_seen_{false};

  mutable std::mutex mutex_;  // the error and sync paths only, never a launch
  std::vector<StreamMark> stream_marks_;  // streams proven complete up to a seq
  std::vector<StreamMark> context_marks_;  // whole contexts (device syncs), keyed by context
  // The latest record of each event (the stream and thread that recorded it, and the launches it stands for), in a
  // table of fixed size where an event may push out another (then its waits are not known: nothing is set aside).
  struct EventRecord {
    uintptr_t event = 0;
    StreamWait::Upstream upstream;
  };
  static constexpr size_t kEventSlots = 1024;
  std::vector<EventRecord> events_ = std::vector<EventRecord>(kEventSlots);
  EventRecord& event_slot(uintptr_t event) { return events_[std::hash<uintptr_t>{}(event) % kEventSlots]; }
  static constexpr size_t kMaxWaits = 4096;
  std::vector<StreamWait> waits_;  // the latest kMaxWaits, a ring from waits_next_
  size_t waits_next_ = 0;
  void record_event_locked(const ApiCall& call, uint64_t key, uint64_t upto);
  void wait_event_locked(const ApiCall& call, uint64_t key);
  void destroy_event_locked(const ApiCall& call);
  bool launch_blocking_ = false;
  std::vector<StreamEnd> stream_ends_;     // the latest ends, bounded
  uint64_t stream_ends_forgotten_below_ = 0;  // ends before this may have been dropped from stream_ends_
  PrimaryError primary_;
  // What the ring and the syncs said when the primary error was seen (Evidence's fields of the same names).
  std::vector<LaunchRecord> pending_;
  uint64_t horizon_ = 0;
  std::vector<uint64_t> missing_;
  uint64_t synced_before_ = 0;
  std::vector<uint64_t> shared_defaults_;  // default streams launched onto from several contexts
  // The kernel nodes of the executable graphs launched among the candidates, read when the primary error was seen
  // (the slots are final then, and the executable graph may be destroyed later), keyed by the executable graph.
  std::map<uintptr_t, std::vector<LaunchRecord>> graph_nodes_;
  uint64_t secondary_count_ = 0;
  // What calls on each context showed after the primary error, by context (bounded: kMaxSites contexts).
  std::map<uintptr_t, AfterFirstError> after_primary_;
  std::vector<ErrorSite> secondary_;
  std::vector<ErrorSite> other_errors_;
  std::vector<LaunchError> launch_errors_;
  std::vector<std::pair<const char*, int>> launch_errors_seen_;  // (interned kernel, code), bounded
};

}  // namespace firstassert
