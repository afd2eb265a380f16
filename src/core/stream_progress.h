// What the stream breadcrumbs say at a moment, in the core's terms (no CUDA): per (stream, launching thread) pair,
// how far the stream is known to have completed and how far the thread had launched onto it. The culprit decision
// reads it; device/breadcrumbs makes it.
#pragma once

#include <cstdint>
#include <vector>

namespace firstassert {

struct StreamProgress {
  static constexpr uint64_t kLive = ~uint64_t{0};
  uint64_t stream_key = 0;
  int32_t thread = 0;
  // Every launch on the stream (of this generation) with a seq below this completed: a write that ran proves that
  // every launch numbered below it had been queued before it. 0: none known.
  uint64_t completed_before = 0;
  // seq + 1 of this thread's last launch onto the stream that a breadcrumb follows (0: none yet).
  uint64_t launched_before = 0;
  // Launches recorded when the pair was first followed: its launches are numbered from here on.
  uint64_t born_at = 0;
  // The stream's generation ended (it was destroyed) when this many launches had been recorded: its launches are
  // those numbered below. kLive: the stream lives.
  uint64_t ended_at = kLive;
};

struct StreamProgressView {
  std::vector<StreamProgress> pairs;
  // Pairs no longer listed were given back once every launch they followed had completed, and all of those launches
  // are numbered below this.
  uint64_t unlisted_complete_before = 0;
};

}  // namespace firstassert
