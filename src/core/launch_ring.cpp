#include "launch_ring.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace firstassert {

LaunchRing::LaunchRing(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity), slots_(new Slot[capacity_]) {}

void LaunchRing::store_words(std::atomic<uint64_t>* to, const void* from, size_t words) {
  const auto* bytes = static_cast<const unsigned char*>(from);
  // Unrolled: a stack's frames are tens of words, and the loop's own count and compare cost as much as the copy.
#pragma GCC unroll 8
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, bytes + i * sizeof(uint64_t), sizeof word);
    to[i].store(word, std::memory_order_release);
  }
}

void LaunchRing::load_words(const std::atomic<uint64_t>* from, void* to, size_t words) {
  auto* bytes = static_cast<unsigned char*>(to);
  for (size_t i = 0; i < words; ++i) {
    uint64_t word = from[i].load(std::memory_order_acquire);
    std::memcpy(bytes + i * sizeof(uint64_t), &word, sizeof word);
  }
}

bool LaunchRing::read(const Slot& slot, LaunchRecord& out) const {
  uint64_t before = slot.version.load(std::memory_order_acquire);
  if (before == 0 || (before & 1) != 0) return false;
  // A word written by a newer writer synchronizes with that writer's claim, so the second version load sees it.
  LaunchFields& fields = out;
  load_words(slot.fields, reinterpret_cast<unsigned char*>(&fields) + sizeof fields.seq, kFieldWords);
  if (out.stack_depth > kMaxStackFrames || out.python_depth > kMaxPythonFrames) return false;
  // The frames in use only: the rest of the slot may hold an older record's.
  if (out.python_lasting == nullptr) load_words(slot.python, out.python, out.python_depth * kPythonWords);
  load_words(slot.native, out.stack, out.stack_depth);
  uint64_t after = slot.version.load(std::memory_order_relaxed);
  if (before != after) return false;
  out.seq = before / 2 - 1;
  // Kept for good, never changed: read from where the record points.
  if (out.python_lasting != nullptr) std::copy_n(out.python_lasting, out.python_depth, out.python);
  // Never copied in: not this record's (nor the fields the launch path never sets).
  out.wall_ns = 0;
  out.graph_node = out.graph_nodes = 0;
  out.graph_state = GraphNodeState::unknown;
  out.graph_open = false;
  std::fill(out.python + out.python_depth, out.python + kMaxPythonFrames, PythonFrame{});
  std::fill(out.stack + out.stack_depth, out.stack + kMaxStackFrames, uintptr_t{0});
  return true;
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

bool LaunchRing::find_fields(uint64_t seq, LaunchFields& out) const {
  if (seq >= total()) return false;
  const Slot& slot = slots_[seq % capacity_];
  uint64_t before = slot.version.load(std::memory_order_acquire);
  if (before != 2 * seq + 2) return false;  // empty, being written, or another launch's
  load_words(slot.fields, reinterpret_cast<unsigned char*>(&out) + sizeof out.seq, kFieldWords);
  if (slot.version.load(std::memory_order_relaxed) != before) return false;
  out.seq = seq;
  return true;
}

}  // namespace firstassert
