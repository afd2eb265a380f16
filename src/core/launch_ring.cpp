#include "launch_ring.h"

#include <cstring>

namespace firstassert {

LaunchRing::LaunchRing(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity), slots_(new Slot[capacity_]) {}

bool LaunchRing::read(const Slot& slot, LaunchRecord& out) const {
  uint64_t before = slot.version.load(std::memory_order_acquire);
  if (before == 0 || (before & 1) != 0) return false;
  std::memcpy(static_cast<void*>(&out), &slot.record, sizeof out);
  std::atomic_thread_fence(std::memory_order_acquire);
  uint64_t after = slot.version.load(std::memory_order_relaxed);
  return before == after && out.seq == before / 2 - 1;
}

std::vector<LaunchRecord> LaunchRing::snapshot() const {
  uint64_t end = total();
  uint64_t begin = end > capacity_ ? end - capacity_ : 0;
  std::vector<LaunchRecord> records;
  records.reserve(static_cast<size_t>(end - begin));
  LaunchRecord record;
  for (uint64_t seq = begin; seq < end; ++seq) {
    if (read(slots_[seq % capacity_], record) && record.seq == seq) records.push_back(record);
  }
  return records;
}

bool LaunchRing::find(uint64_t seq, LaunchRecord& out) const {
  return seq < total() && read(slots_[seq % capacity_], out) && out.seq == seq;
}

}  // namespace firstassert
