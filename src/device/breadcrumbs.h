// Stream breadcrumbs: after each recorded launch, the driver is asked to write the launch's sequence number into a
// host-mapped slot of that stream, ordered after the launch (cuStreamWriteValue64). A slot's value is therefore the
// last launch on its stream that completed, readable by the CPU after the device has faulted, when nothing else can
// be asked of the GPU. Slots come from pinned pages allocated on first use of a stream (warm-up); after that a
// launch costs one lock-free lookup and one driver call.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include "driver_calls.h"

namespace firstassert {

class Breadcrumbs {
 public:
  static constexpr size_t kMaxStreams = 4096;

  // Before a launch is queued: the stream's slot exists (its first launch allocates it, while the context is still
  // healthy even if that very kernel is about to fault).
  void before_launch(uint64_t stream_key) {
    if (enabled()) (void)slot_for(stream_key);
  }
  // After a launch was recorded (not while its stream is capturing). Turns itself off, with one line, when the
  // driver cannot do it.
  void after_launch(uint64_t stream_key, CUstream stream, uint64_t seq);
  // Launches on the stream with a seq below the result have completed (0: none yet); nullopt when the stream has
  // no breadcrumb slot (no launch of it was followed).
  std::optional<uint64_t> completed_before(uint64_t stream_key) const;
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void disable(const char* why);

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};  // stream key + 1 (0: free)
    volatile uint64_t* host = nullptr;
    CUdeviceptr device = 0;
  };
  Slot* slot_for(uint64_t stream_key);
  Slot* find(uint64_t stream_key) const;

  std::atomic<bool> enabled_{true};
  std::mutex grow_mutex_;  // first use of a stream only
  Slot slots_[kMaxStreams];
  volatile uint64_t* page_ = nullptr;  // current pinned page and its device address
  CUdeviceptr page_device_ = 0;
  size_t page_used_ = 0;
};

}  // namespace firstassert
