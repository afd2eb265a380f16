// The last N launches, written by any number of launching threads without a lock or an allocation: a launch takes
// the next sequence number with one atomic increment, fills its record on its own stack, then claims the slot
// under the slot's version (a seqlock) and copies the record in. Readers copying the ring while launches continue get
// only complete records. Nothing ever waits: a writer that finds its slot taken by a newer lap (it was overtaken) or
// still being copied into by another writer (the whole ring wrapped during one copy) drops its record. A thread
// stopped anywhere (preempted, in a signal handler, or gone in a forked child) can hold a slot, never the ring.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "launch_record.h"

namespace firstassert {

class LaunchRing {
 public:
  explicit LaunchRing(size_t capacity);

  // The frames of a record where the launch path keeps them: copied from there into the slot, not through a record.
  struct Frames {
    const PythonFrame* python = nullptr;
    const uintptr_t* native = nullptr;
  };

  // The launch path's: takes the next sequence number into fields.seq and stores the fields where they are, with
  // their python_depth frames of frames.python (none when python_lasting points to them) and stack_depth of
  // frames.native (depths within the record's room: kMaxPythonFrames, kMaxStackFrames). Returns the seq.
  __attribute__((always_inline)) uint64_t append(LaunchFields& fields, Frames frames) {
    number(fields);
    publish(fields, frames);
    return fields.seq;
  }
  // append's two halves, for a launch path that queues more work under the number before the record is whole (its
  // breadcrumb): until publish, readers find the number missing, as they find any record still being written.
  __attribute__((always_inline)) uint64_t number(LaunchFields& fields) {
    fields.seq = next_.fetch_add(1, std::memory_order_relaxed);
    return fields.seq;
  }
  void publish(const LaunchFields& fields, const Frames& frames);
  // A whole record: fill() writes it (seq already set), frames included; depths beyond the room are cut.
  template <typename Fill>
  uint64_t append(Fill&& fill) {
    LaunchRecord record;
    record.seq = next_.fetch_add(1, std::memory_order_relaxed);
    fill(record);
    record.python_depth = std::min<uint8_t>(record.python_depth, kMaxPythonFrames);
    record.stack_depth = std::min<uint8_t>(record.stack_depth, kMaxStackFrames);
    publish(record, {record.python, record.stack});
    return record.seq;
  }

  // Complete records still in the ring, oldest first.
  std::vector<LaunchRecord> snapshot() const;
  // The record with this seq, if it is still in the ring and complete.
  bool find(uint64_t seq, LaunchRecord& out) const;
  // Its fields alone (no frames): for a walk over many launches, at a fraction of find's copying.
  bool find_fields(uint64_t seq, LaunchFields& out) const;

  uint64_t total() const { return next_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }
  size_t bytes() const { return capacity_ * sizeof(Slot); }

 private:
  // The record is held as atomic words: a reader may copy a slot while a writer that lapped it is copying in, and
  // the version check then discards what it read. With release stores and acquire loads of each word that race is
  // defined behaviour (and visible to ThreadSanitizer, which does not model fences), and on x86 each is a plain move.
  static_assert(sizeof(LaunchFields) % sizeof(uint64_t) == 0, "the fields are copied in whole words");
  static_assert(sizeof(PythonFrame) % sizeof(uint64_t) == 0, "Python frames are copied in whole words");
  // The slot's version says the seq (2*seq+2): the fields are stored from the word after it.
  static_assert(offsetof(LaunchFields, seq) == 0 && sizeof(LaunchFields::seq) == sizeof(uint64_t), "seq leads");
  static constexpr size_t kFieldWords = sizeof(LaunchFields) / sizeof(uint64_t) - 1;
  static constexpr size_t kPythonWords = sizeof(PythonFrame) / sizeof(uint64_t);
  struct Slot {
    std::atomic<uint64_t> version{0};  // 0 empty, 2*seq+1 while seq is being written, 2*seq+2 once complete
    std::atomic<uint64_t> fields[kFieldWords] = {};
    std::atomic<uint64_t> python[kMaxPythonFrames * kPythonWords] = {};
    std::atomic<uint64_t> native[kMaxStackFrames] = {};
  };
  bool read(const Slot& slot, LaunchRecord& out) const;
  static void store_words(std::atomic<uint64_t>* to, const void* from, size_t words);
  template <size_t... I>
  static void store_fields(Slot& slot, const LaunchFields& fields, std::index_sequence<I...>);
  static void load_words(const std::atomic<uint64_t>* from, void* to, size_t words);

  size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};
};

// The fields, every launch: a fixed count, copied without a loop.
template <size_t... I>
__attribute__((always_inline)) inline void LaunchRing::store_fields(Slot& slot, const LaunchFields& fields, std::index_sequence<I...>) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&fields);
  auto store = [&](size_t i) {
    uint64_t word;
    std::memcpy(&word, bytes + (i + 1) * sizeof(uint64_t), sizeof word);
    slot.fields[i].store(word, std::memory_order_release);
  };
  (store(I), ...);
}

// Inline: every launch publishes.
__attribute__((always_inline)) inline void LaunchRing::publish(const LaunchFields& fields, const Frames& frames) {
  Slot& slot = slots_.get()[fields.seq % capacity_];
  const uint64_t writing = 2 * fields.seq + 1;
  uint64_t seen = slot.version.load(std::memory_order_acquire);
  if (seen >= writing || (seen & 1) != 0) return;
  // Acquire: none of the word stores below can be seen before the slot is marked as being written.
  if (!slot.version.compare_exchange_strong(seen, writing, std::memory_order_acquire, std::memory_order_relaxed))
    return;
  // Only the frames in use (the rest of the slot is never read): the fields, the Python frames unless the record
  // points to a lasting copy of them, the native ones. The depths are within the record's room (the callers' part).
  store_fields(slot, fields, std::make_index_sequence<kFieldWords>{});
  if (fields.python_lasting == nullptr && fields.python_depth > 0)
    store_words(slot.python, frames.python, fields.python_depth * kPythonWords);
  if (fields.stack_depth > 0) store_words(slot.native, frames.native, fields.stack_depth);
  slot.version.store(writing + 1, std::memory_order_release);
}

}  // namespace firstassert
