// The culprit decision: from what is known when the first sticky error was seen (the launches recorded, the syncs
// that succeeded, the stream breadcrumbs, the device's assertion lines) to the launches that can have failed, and to
// a claim about one of them that the evidence bears out.
//
// The rules, per stream (each generation of a stream handle apart):
// - A launch is complete when a sync that succeeded was entered after it was recorded, or when a breadcrumb written
//   after it ran (any breadcrumb on its stream with a higher number: that launch had been queued before it).
// - With breadcrumbs, a launching thread's launches onto a stream reach it in the order they were numbered, and each
//   is followed by its breadcrumb; so of one thread's launches onto a stream only the first one not known complete can
//   have run, and it is that (stream, thread)'s only candidate. Across threads, launch calls that did not overlap in
//   time are in stream order too: a launch whose call began after an unfinished launch on its stream had been queued
//   with its breadcrumb (LaunchFields::queue_mark) is behind that breadcrumb and never started; only launches whose
//   calls overlapped stay unordered. Without breadcrumbs, every launch not known complete is a candidate.
// - The set is complete only when every launch that can be a candidate is still in the launch ring; otherwise the
//   answer is unknown.
// - The device's assertion lines narrow the set: a launch fits a line when it runs the function the line names (or
//   the line names none: operator(), a lambda) and the line's block and thread lie within its grid and block.
//
// Confidence: exact when one launch remains; likely when, of several, exactly one fits the device's lines; window
// when several remain and the lines do not tell them apart; unknown when the set is incomplete or empty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device_messages.h"
#include "launch_record.h"
#include "stream_progress.h"

namespace firstassert {

// The generations of stream handles: a handle destroyed (or a thread's own stream, when its thread ended) and made
// again is another stream. Each boundary is the launch count when the old one ended.
struct StreamEnd {
  uint64_t stream_key = 0;
  uint64_t at = 0;
};

// A stream wait on an event: the launches onto `stream_key` whose call began after the wait's had returned (their
// marks_at_entry at least `mark`) wait until the work the event stood for completed: what was queued on the upstream
// stream before the record, among it the launches whose queue mark is at most the record's `marks_at_entry`.
struct StreamWait {
  uint64_t stream_key = 0;
  int32_t thread = 0;
  uint64_t from = 0;  // launches recorded when the wait returned
  uint64_t mark = 0;  // the wait's own queue mark, taken once it was queued (Tracker::queue_marks); 0: none
  struct Upstream {
    uint64_t stream_key = 0;
    int32_t thread = 0;  // the thread that recorded the event
    uint64_t before = 0;  // launches recorded when the record returned
    uintptr_t context = 0;
    uint64_t marks_at_entry = 0;  // the queue marks when the record call began; 0: not known
  } upstream;
};

struct Evidence {
  std::vector<LaunchRecord> pending;  // launches of the failing context not proven complete by a sync, oldest first
  uint64_t launches = 0;              // launches recorded when the error was seen
  uint64_t ring_capacity = 0;
  uint64_t horizon = 0;               // the ring held every launch numbered from here on...
  std::vector<uint64_t> missing;      // ...except these (sorted): dropped, or not yet complete when it was read
  uint64_t synced_before = 0;         // a device sync proved every launch numbered below this complete
  uint64_t generations_known_from = 0;  // stream ends before this may have been forgotten
  std::vector<StreamEnd> stream_ends;
  std::vector<StreamWait> waits;               // stream waits on events
  // Default streams (stream_key.h) the ring shows launches onto from more than one context (device): their key is
  // not one stream, so their breadcrumbs prove nothing.
  std::vector<uint64_t> shared_default_streams;
  // CUDA_LAUNCH_BLOCKING=1: a launch call returns once its kernel ran, so one that returned the sticky error may have
  // run to the fault. Otherwise such a launch never ran: it only learned of an earlier fault.
  bool launch_blocking = false;
  std::optional<StreamProgressView> progress;  // the stream breadcrumbs; nullopt when off
  std::vector<DeviceMessage> messages;         // the device's assertion lines (only for a device assert)
  std::string api;                             // the call that reported the error
  std::string error;                           // its name
  // A graph launch's kernel nodes as its replay ran them (graph_open: the node can have failed); empty: unknown.
  std::function<std::vector<LaunchRecord>(const LaunchRecord&)> replayed_nodes;
};

struct Decision {
  // The launches that can have failed, newest first; in a window the device's line narrowed, the first `fitting` are
  // those that fit it (the window proper), the others after them.
  std::vector<LaunchRecord> candidates;
  size_t fitting = 0;
  std::optional<LaunchRecord> culprit;   // named: the claim (exact, likely) or the one shown (window)
  const char* confidence = "unknown";    // exact, likely, window or unknown
  std::string reason;
};

Decision decide_culprit(Evidence evidence);

// The candidates cut to `most`: the oldest of those that fit the device's line first (the oldest launches are those
// most likely to have run), then the oldest of the others, in the decision's order; the one shown always among them.
void cut_candidates(Decision& d, size_t most);

// Whether the device's assertion line can have come from this launch: the function it names (none for operator()
// and lambdas) and its block and thread within the launch's grid and block (not checked for a graph's kernel node,
// whose configuration may have been changed in the executable graph since).
bool fits_message(const LaunchRecord& launch, const DeviceMessage& message);

}  // namespace firstassert
