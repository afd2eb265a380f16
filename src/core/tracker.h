// The core of firstassert, fed by the event sources (CUPTI today, interposition later) through two calls: a launch
// that was queued, and the result of an API call. It keeps the launch ring, tells the primary error (the first
// sticky one) from the secondary ones, and names the candidate launches. It knows nothing of CUPTI or dlsym.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_errors.h"
#include "launch_record.h"
#include "launch_ring.h"
#include "name_table.h"

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
};

struct ApiCall {
  ApiDomain domain = ApiDomain::runtime;
  const char* api = nullptr;  // the function's name
  int code = 0;
  CallKind kind = CallKind::other;
  uintptr_t stream = 0;
  bool per_thread_default_stream = false;
  uintptr_t context = 0;
  // launch_count() when the call was entered: what a successful sync proves complete. kUnknown: count at exit.
  uint64_t launches_at_entry = kUnknown;
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

struct Findings {
  bool has_primary = false;
  PrimaryError primary;
  std::vector<LaunchRecord> candidates;  // most likely first
  const char* confidence = "window";
  std::string reason;
  uint64_t secondary_count = 0;
  std::vector<ErrorSite> secondary;      // errors after the primary one, by (API, code)
  std::vector<ErrorSite> other_errors;   // non-sticky errors, which never become primary
  std::vector<LaunchRecord> recent;      // the last launches, newest first
  uint64_t launches_recorded = 0;
};

class Tracker {
 public:
  static constexpr size_t kMaxSites = 64;
  static constexpr size_t kMaxCandidates = 64;
  static constexpr size_t kRecentLaunches = 32;

  using PrimaryHook = std::function<void(const Findings&)>;

  explicit Tracker(size_t ring_capacity);

  // Called once, on the thread that saw the primary error, outside the tracker's locks.
  void on_primary(PrimaryHook hook) { on_primary_ = std::move(hook); }

  // A launch that the API accepted. No allocation or lock after the kernel's first launch. A launch into a
  // capturing stream only adds a node to a graph: it is not recorded, and kNotRecorded is returned.
  uint64_t record_launch(const LaunchEvent& launch);
  static constexpr uint64_t kNotRecorded = ~uint64_t{0};
  // The result of any API call (launches included): sync marks on success, errors otherwise.
  void record_call(const ApiCall& call);

  bool has_primary() const { return primary_seen_.load(std::memory_order_acquire); }
  uint64_t launch_count() const { return ring_.total(); }
  Findings findings() const;
  const LaunchRing& ring() const { return ring_; }

 private:
  struct StreamMark {
    uint64_t key;
    uint64_t completed_before;  // launches on the stream with seq below this have completed
  };
  static uint64_t stream_key(uintptr_t stream, bool per_thread_default_stream, int32_t thread);
  static void raise_mark(std::vector<StreamMark>& marks, uint64_t key, uint64_t upto);
  static bool proven_complete(const std::vector<StreamMark>& marks, uint64_t key, uint64_t seq);
  void count_error(std::vector<ErrorSite>& sites, const ApiCall& call, int64_t now);
  std::vector<LaunchRecord> candidates_locked(uintptr_t context) const;

  LaunchRing ring_;
  NameTable names_;
  PrimaryHook on_primary_;

  bool capturing(uint64_t key) const;
  void set_capturing_locked(uint64_t key, bool on);

  // Streams being captured: a count read on every launch (almost always 0), and the keys, changed under mutex_.
  static constexpr size_t kMaxCapturing = 32;
  std::atomic<uint32_t> capturing_count_{0};
  std::atomic<uint64_t> capturing_[kMaxCapturing] = {};

  std::atomic<bool> primary_claimed_{false};
  std::atomic<bool> primary_seen_{false};

  mutable std::mutex mutex_;  // the error and sync paths only, never a launch
  std::vector<StreamMark> stream_marks_;  // streams proven complete up to a seq
  std::vector<StreamMark> context_marks_;  // whole contexts (device syncs), keyed by context
  PrimaryError primary_;
  std::vector<LaunchRecord> candidates_;
  uint64_t secondary_count_ = 0;
  std::vector<ErrorSite> secondary_;
  std::vector<ErrorSite> other_errors_;
};

}  // namespace firstassert
