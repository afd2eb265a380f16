// How an event source feeds a Tracker, for the tests that drive one: a launch the API accepted (its record, then
// its call's success) and a call's result.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/tracker.h"

namespace firstassert::test {

// kernel launched on stream <<<(4,1,1), (128,1,1)>>> on device 0.
inline LaunchEvent kernel_launch(const char* kernel, uintptr_t stream) {
  LaunchEvent e;
  e.kernel = kernel;
  e.stream = stream;
  e.grid = {4, 1, 1};
  e.block = {128, 1, 1};
  e.device = 0;
  return e;
}

// A launch's call (api) seen returning success.
inline void launch_call_succeeded(Tracker& t, const LaunchEvent& e, const char* api) {
  ApiCall ok;
  ok.api = api;
  ok.kind = CallKind::launch;
  ok.stream = e.stream;
  ok.context = e.context;
  t.record_call(ok);
}

// The launch recorded, then its call (api) seen returning success; returns the launch's seq.
inline uint64_t accepted(Tracker& t, LaunchEvent e, const char* api) {  // a copy: each launch is described afresh
  uint64_t seq = t.record_launch(e);
  launch_call_succeeded(t, e, api);
  return seq;
}

// A launch call as the event sources make one with the stream breadcrumbs on: begun (the queue marks read when it
// began), then ended on the launching thread (numbered, its breadcrumb queued, stored with its queue mark, its
// success seen). Calls begun before others ended overlapped in time: their order on a shared stream is unknown.
class LaunchCall {
 public:
  LaunchCall(Tracker& t, LaunchEvent e) : t_(t), e_(e) { e_.marks_at_entry = t.queue_marks(); }
  // breadcrumb: whether a breadcrumb was queued after it (none for a launch synchronized at once instead).
  uint64_t end(bool breadcrumb = true) {
    uint64_t seq = t_.number_launch(e_);
    t_.store_launch(e_, breadcrumb);
    launch_call_succeeded(t_, e_, "cudaLaunchKernel");
    return seq;
  }

 private:
  Tracker& t_;
  LaunchEvent e_;
};

// One launch call, begun and ended before any other begins.
inline uint64_t queued(Tracker& t, const LaunchEvent& e) { return LaunchCall(t, e).end(); }

inline ApiCall call_of(const char* api, int code, CallKind kind, uintptr_t stream) {
  ApiCall c;
  c.api = api;
  c.code = code;
  c.kind = kind;
  c.stream = stream;
  return c;
}

// Stream breadcrumbs as the tracker reads them: completed_before per stream key, for every thread that launched onto
// that stream (each thread's last launch there read from the ring when the probe is asked). Streams absent from the
// map have no breadcrumb.
inline void breadcrumbs(Tracker& t, std::map<uint64_t, uint64_t> completed_before) {
  t.set_progress_probe([&t, marks = std::move(completed_before)]() -> std::optional<StreamProgressView> {
    std::map<std::pair<uint64_t, int32_t>, uint64_t> launched_before;
    for (const LaunchRecord& r : t.ring().snapshot()) {
      uint64_t key = stream_key(r.stream, r.per_thread_default_stream, r.thread, r.device);
      if (marks.count(key) != 0) launched_before[{key, r.thread}] = r.seq + 1;
    }
    StreamProgressView view;
    for (const auto& [pair, launched] : launched_before)
      view.pairs.push_back({pair.first, pair.second, marks.at(pair.first), launched, 0, StreamProgress::kLive});
    return view;
  });
}

}  // namespace firstassert::test
