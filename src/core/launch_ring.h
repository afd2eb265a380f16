// The last N launches, written by any number of launching threads without a lock or an allocation: a launch takes
// the next sequence number with one atomic increment and fills its slot under a per-slot version (a seqlock), so a
// reader copying the ring while launches continue gets only complete records. A slot can only be torn if N other
// launches happen while one record is being filled, which the minimum ring size (16) makes unreachable in practice.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "launch_record.h"

namespace firstassert {

class LaunchRing {
 public:
  explicit LaunchRing(size_t capacity);

  // Reserves the next sequence number and slot; fill() writes the record (seq already set). Returns the seq.
  template <typename Fill>
  uint64_t append(Fill&& fill) {
    uint64_t seq = next_.fetch_add(1, std::memory_order_relaxed);
    Slot& slot = slots_[seq % capacity_];
    slot.version.store(2 * seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    slot.record.seq = seq;
    fill(slot.record);
    uint64_t writing = 2 * seq + 1;
    // Fails only if a later lap took the slot meanwhile; that writer publishes it.
    slot.version.compare_exchange_strong(writing, 2 * seq + 2, std::memory_order_release, std::memory_order_relaxed);
    return seq;
  }

  // Complete records still in the ring, oldest first.
  std::vector<LaunchRecord> snapshot() const;
  // The record with this seq, if it is still in the ring and complete.
  bool find(uint64_t seq, LaunchRecord& out) const;

  uint64_t total() const { return next_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }
  size_t bytes() const { return capacity_ * sizeof(Slot); }

 private:
  struct Slot {
    std::atomic<uint64_t> version{0};  // 2*seq+1 while writing seq, 2*seq+2 once complete
    LaunchRecord record;
  };
  bool read(const Slot& slot, LaunchRecord& out) const;

  size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace firstassert
