// The last N launches, written by any number of launching threads without a lock or an allocation: a launch takes
// the next sequence number with one atomic increment, fills its record on its own stack, then claims the slot
// under the slot's version (a seqlock) and copies the record in. Readers copying the ring while launches continue get
// only complete records. Nothing ever waits: a writer that finds its slot taken by a newer lap (it was overtaken) or
// still being copied into by another writer (the whole ring wrapped during one copy) drops its record. A thread
// stopped anywhere (preempted, in a signal handler, or gone in a forked child) can hold a slot, never the ring.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "launch_record.h"

namespace firstassert {

class LaunchRing {
 public:
  explicit LaunchRing(size_t capacity);

  // The frames of a record where the launch path keeps them: copied from there into the slot, not through the record.
  struct Frames {
    const PythonFrame* python = nullptr;
    const uintptr_t* native = nullptr;
  };

  // Reserves the next sequence number and slot; fill() writes the record (seq already set). Returns the seq.
  template <typename Fill>
  uint64_t append(Fill&& fill) {
    return append_filled(fill, [](const LaunchRecord& record) { return Frames{record.python, record.stack}; });
  }
  // The same, fill() writing the fields only: the record's python_depth and stack_depth frames are taken from frames.
  template <typename Fill>
  uint64_t append(Fill&& fill, Frames frames) {
    return append_filled(fill, [frames](const LaunchRecord&) { return frames; });
  }

  // Complete records still in the ring, oldest first.
  std::vector<LaunchRecord> snapshot() const;
  // The record with this seq, if it is still in the ring and complete.
  bool find(uint64_t seq, LaunchRecord& out) const;

  uint64_t total() const { return next_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }
  size_t bytes() const { return capacity_ * sizeof(Slot); }

 private:
  // The record is held as atomic words: a reader may copy a slot while a writer that lapped it is copying in, and
  // the version check then discards what it read. With release stores and acquire loads of each word that race is
  // defined behaviour (and visible to ThreadSanitizer, which does not model fences), and on x86 each is a plain move.
  static constexpr size_t kRecordWords = sizeof(LaunchRecord) / sizeof(uint64_t);
  static_assert(sizeof(LaunchRecord) % sizeof(uint64_t) == 0, "a record is copied in whole words");
  static_assert(offsetof(LaunchRecord, python) % sizeof(uint64_t) == 0 && offsetof(LaunchRecord, stack) % sizeof(uint64_t) == 0,
                "the frames in use are copied as whole words");
  // publish copies the fields before the Python frames, then the frames: a field placed after them would be lost.
  static_assert(offsetof(LaunchRecord, stack) == offsetof(LaunchRecord, python) + sizeof(LaunchRecord::python) &&
                    sizeof(LaunchRecord) == offsetof(LaunchRecord, stack) + sizeof(LaunchRecord::stack),
                "the frames end the record");
  struct Slot {
    std::atomic<uint64_t> version{0};  // 0 empty, 2*seq+1 while seq is being written, 2*seq+2 once complete
    std::atomic<uint64_t> words[kRecordWords] = {};
  };
  static constexpr size_t kFieldWords = offsetof(LaunchRecord, python) / sizeof(uint64_t);
  template <typename Fill, typename FramesOf>
  uint64_t append_filled(Fill& fill, FramesOf&& frames_of) {
    uint64_t seq = next_.fetch_add(1, std::memory_order_relaxed);
    LaunchRecord record{LaunchRecord::FramesUnset{}};
    record.seq = seq;
    fill(record);
    publish(record, frames_of(record));
    return seq;
  }
  bool read(const Slot& slot, LaunchRecord& out) const;
  static void store_words(Slot& slot, size_t first, const void* from, size_t words);
  template <size_t... I>
  static void store_fields(Slot& slot, const LaunchRecord& record, std::index_sequence<I...>);
  void publish(const LaunchRecord& record, const Frames& frames);

  size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace firstassert
