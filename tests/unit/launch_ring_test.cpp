// LaunchRing: sequence numbers, wrap-around, find() of overwritten records, and the seqlock's promise that no reader
// ever gets a torn record, checked with records whose every field is derived from (seq, writer).
#include "core/launch_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace firstassert {
namespace {

uintptr_t fill_stack_frame(uint64_t s, uint32_t writer, unsigned i) { return static_cast<uintptr_t>(s * 131 + i + writer); }

// Every field a function of (seq, writer): a record mixing two launches cannot pass check().
void fill_as(LaunchRecord& r, uint64_t s, uint32_t writer) {
  r.thread = static_cast<int32_t>(writer);
  r.device = static_cast<int32_t>(writer * 7 + 1);
  r.context = static_cast<uintptr_t>(s * 0x9E3779B97F4A7C15ull ^ writer);
  r.stream = static_cast<uintptr_t>(s + 1000u * writer);
  r.grid = {static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32), writer};
  r.block = {static_cast<uint32_t>(s * 3), writer + 1, static_cast<uint32_t>(s ^ writer)};
  r.shared_mem = static_cast<uint32_t>(s * 5 + writer);
  r.correlation_id = static_cast<uint32_t>(s) ^ 0xA5A5A5A5u;
  r.mono_ns = static_cast<int64_t>(s * 11 + writer);
  r.stack_depth = static_cast<uint8_t>(s % kMaxStackFrames);
  for (unsigned i = 0; i < kMaxStackFrames; ++i) r.stack[i] = fill_stack_frame(s, writer, i);
  r.python_depth = static_cast<uint8_t>((s * 7 + writer) % (kMaxPythonFrames + 1));
  for (unsigned i = 0; i < kMaxPythonFrames; ++i)
    r.python[i] = {reinterpret_cast<const char*>(s * 17 + i), reinterpret_cast<const char*>(writer + i), static_cast<int32_t>(s + i)};
}

void fill(LaunchRecord& r, uint32_t writer) { fill_as(r, r.seq, writer); }

// Empty when the record is what one fill() wrote; else what is wrong.
std::string check(const LaunchRecord& r) {
  uint64_t s = r.seq;
  auto writer = static_cast<uint32_t>(r.thread);
  LaunchRecord expected;
  expected.seq = s;
  fill(expected, writer);
  if (r.device != expected.device) return "device";
  if (r.context != expected.context) return "context";
  if (r.stream != expected.stream) return "stream";
  if (r.grid.x != expected.grid.x || r.grid.y != expected.grid.y || r.grid.z != expected.grid.z) return "grid";
  if (r.block.x != expected.block.x || r.block.y != expected.block.y || r.block.z != expected.block.z) return "block";
  if (r.shared_mem != expected.shared_mem) return "shared_mem";
  if (r.correlation_id != expected.correlation_id) return "correlation_id";
  if (r.mono_ns != expected.mono_ns) return "mono_ns";
  if (r.wall_ns != 0) return "wall_ns (the ring keeps only the monotonic time)";
  if (r.stack_depth != expected.stack_depth) return "stack_depth";
  // Only the frames in use are part of a record.
  for (unsigned i = 0; i < r.stack_depth; ++i) {
    if (r.stack[i] != expected.stack[i]) return "stack";
  }
  if (r.python_depth != expected.python_depth) return "python_depth";
  for (unsigned i = 0; i < r.python_depth; ++i) {
    if (r.python[i].file != expected.python[i].file || r.python[i].function != expected.python[i].function ||
        r.python[i].line != expected.python[i].line)
      return "python";
  }
  return {};
}

TEST(LaunchRing, EmptyRing) {
  LaunchRing ring(16);
  EXPECT_EQ(ring.total(), 0u);
  EXPECT_EQ(ring.capacity(), 16u);
  EXPECT_TRUE(ring.snapshot().empty());
  LaunchRecord r;
  EXPECT_FALSE(ring.find(0, r));
}

TEST(LaunchRing, SequenceNumbersStartAtZeroAndCount) {
  LaunchRing ring(16);
  for (uint64_t i = 0; i < 5; ++i) {
    uint64_t seq = ring.append([](LaunchRecord& r) { fill(r, 3); });
    EXPECT_EQ(seq, i);
  }
  EXPECT_EQ(ring.total(), 5u);
  std::vector<LaunchRecord> all = ring.snapshot();
  ASSERT_EQ(all.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(all[i].seq, i);
    EXPECT_EQ(check(all[i]), "");
  }
  LaunchRecord r;
  ASSERT_TRUE(ring.find(3, r));
  EXPECT_EQ(r.seq, 3u);
  EXPECT_EQ(r.thread, 3);
  EXPECT_FALSE(ring.find(5, r)) << "a seq not yet appended";
}

TEST(LaunchRing, FillSeesItsSeq) {
  LaunchRing ring(16);
  ring.append([](LaunchRecord&) {});
  uint64_t seen = 99;
  uint64_t seq = ring.append([&](LaunchRecord& r) { seen = r.seq; });
  EXPECT_EQ(seq, 1u);
  EXPECT_EQ(seen, 1u);
}

TEST(LaunchRing, WrapAroundKeepsTheLastNOldestFirst) {
  LaunchRing ring(16);
  for (int i = 0; i < 16 * 3 + 5; ++i) ring.append([](LaunchRecord& r) { fill(r, 1); });
  EXPECT_EQ(ring.total(), 53u);
  std::vector<LaunchRecord> all = ring.snapshot();
  ASSERT_EQ(all.size(), 16u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, 37u + i);
    EXPECT_EQ(check(all[i]), "");
  }
}

TEST(LaunchRing, FindOfAnOverwrittenSeqFails) {
  LaunchRing ring(16);
  for (int i = 0; i < 40; ++i) ring.append([](LaunchRecord& r) { fill(r, 2); });
  LaunchRecord r;
  EXPECT_FALSE(ring.find(0, r));
  EXPECT_FALSE(ring.find(23, r)) << "its slot now holds 39";
  EXPECT_TRUE(ring.find(24, r));
  EXPECT_EQ(r.seq, 24u);
  EXPECT_TRUE(ring.find(39, r));
  EXPECT_EQ(r.seq, 39u);
  EXPECT_FALSE(ring.find(40, r));
}

// The fields alone, as a walk over many launches reads them: the same fields find gives, and the same refusals.
TEST(LaunchRing, FindFieldsReadsTheFieldsOfTheSeqStillHeld) {
  LaunchRing ring(16);
  for (int i = 0; i < 40; ++i) ring.append([](LaunchRecord& r) { fill(r, 3); });
  LaunchFields fields;
  EXPECT_FALSE(ring.find_fields(23, fields)) << "its slot now holds 39";
  EXPECT_FALSE(ring.find_fields(40, fields)) << "not numbered yet";
  LaunchRecord whole;
  for (uint64_t seq : {24u, 31u, 39u}) {
    ASSERT_TRUE(ring.find_fields(seq, fields));
    ASSERT_TRUE(ring.find(seq, whole));
    EXPECT_EQ(fields.seq, seq);
    EXPECT_EQ(std::memcmp(&fields, static_cast<const LaunchFields*>(&whole), sizeof fields), 0);
  }
  LaunchFields numbered;
  uint64_t pending = ring.number(numbered);
  EXPECT_FALSE(ring.find_fields(pending, fields)) << "numbered, not yet published";
  ring.publish(numbered, {});
  EXPECT_TRUE(ring.find_fields(pending, fields));
}

// Only the frames in use are copied in: a slot reused by a shallower record reads back zeros past its depths, never
// the deeper frames of the record it replaced.
TEST(LaunchRing, FramesPastTheDepthReadAsZero) {
  LaunchRing ring(1);
  ring.append([](LaunchRecord& r) {
    fill(r, 3);
    r.stack_depth = kMaxStackFrames;
    r.python_depth = kMaxPythonFrames;
  });
  ring.append([](LaunchRecord& r) {
    fill(r, 3);
    r.stack_depth = 2;
    r.python_depth = 1;
  });
  LaunchRecord r;
  ASSERT_TRUE(ring.find(1, r));
  EXPECT_EQ(r.stack[1], fill_stack_frame(1, 3, 1));
  EXPECT_EQ(r.python[0].line, 1);
  for (unsigned i = 2; i < kMaxStackFrames; ++i) EXPECT_EQ(r.stack[i], 0u) << i;
  for (unsigned i = 1; i < kMaxPythonFrames; ++i) {
    EXPECT_EQ(r.python[i].file, nullptr) << i;
    EXPECT_EQ(r.python[i].function, nullptr) << i;
    EXPECT_EQ(r.python[i].line, 0) << i;
  }
}

TEST(LaunchRing, PythonFramesKeptForGoodAreReadFromWhereTheRecordPoints) {
  static const PythonFrame kept[2] = {{"train.py", "step", 42}, {"train.py", "<module>", 7}};
  LaunchRing ring(1);
  ring.append([](LaunchRecord& r) {
    fill(r, 3);
    r.python_depth = kMaxPythonFrames;
  });
  // The record's own frames say otherwise: the ring must take the lasting ones, and no stale frame of the slot's
  // previous record may show past them.
  ring.append([](LaunchRecord& r) {
    fill(r, 5);
    r.python_depth = 2;
    r.python_lasting = kept;
  });
  LaunchRecord r;
  ASSERT_TRUE(ring.find(1, r));
  ASSERT_EQ(r.python_depth, 2);
  EXPECT_STREQ(r.python[0].function, "step");
  EXPECT_EQ(r.python[0].line, 42);
  EXPECT_STREQ(r.python[1].function, "<module>");
  EXPECT_EQ(r.python[1].line, 7);
  EXPECT_EQ(r.python[2].file, nullptr);
  EXPECT_EQ(r.python_lasting, kept);
}

// The launch path's append: the fields are stored from where the event source described them (seq written back
// into them), the frames from its own buffers, as deep as the fields say.
TEST(LaunchRing, FieldsAppendedInPlaceTakeTheirFramesFromTheGivenBuffers) {
  LaunchRing ring(4);
  ring.append([](LaunchRecord& r) { fill(r, 1); });
  LaunchFields fields;
  fields.kernel = "k";
  fields.grid = {7, 8, 9};
  fields.stack_depth = 3;
  fields.python_depth = 1;
  const uintptr_t native[3] = {0x10, 0x20, 0x30};
  const PythonFrame python[1] = {{"train.py", "step", 12}};
  EXPECT_EQ(ring.append(fields, {python, native}), 1u);
  EXPECT_EQ(fields.seq, 1u);
  LaunchRecord r;
  ASSERT_TRUE(ring.find(1, r));
  EXPECT_STREQ(r.kernel, "k");
  EXPECT_EQ(r.grid.z, 9u);
  ASSERT_EQ(r.stack_depth, 3);
  EXPECT_EQ(r.stack[2], 0x30u);
  EXPECT_EQ(r.stack[3], 0u);
  ASSERT_EQ(r.python_depth, 1);
  EXPECT_STREQ(r.python[0].function, "step");
  EXPECT_EQ(r.python[0].line, 12);
}

// What only a report's record holds (the wall time, a graph node's place) is not the ring's: a record read back
// never shows what a reused LaunchRecord held before.
TEST(LaunchRing, WhatTheRingDoesNotKeepReadsAsZero) {
  LaunchRing ring(2);
  ring.append([](LaunchRecord& r) {
    fill(r, 1);
    r.wall_ns = 123;
    r.graph_node = 2;
    r.graph_nodes = 3;
    r.graph_state = GraphNodeState::completed;
    r.graph_open = true;
  });
  LaunchRecord r;
  r.wall_ns = 5;
  r.graph_node = 9;
  r.graph_open = true;
  ASSERT_TRUE(ring.find(0, r));
  EXPECT_EQ(r.wall_ns, 0);
  EXPECT_EQ(r.graph_node, 0u);
  EXPECT_EQ(r.graph_nodes, 0u);
  EXPECT_EQ(r.graph_state, GraphNodeState::unknown);
  EXPECT_FALSE(r.graph_open);
}

TEST(LaunchRing, ZeroCapacityStillWorks) {
  LaunchRing ring(0);
  ring.append([](LaunchRecord& r) { fill(r, 0); });
  ring.append([](LaunchRecord& r) { fill(r, 0); });
  std::vector<LaunchRecord> all = ring.snapshot();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].seq, 1u);
}

// A writer descheduled in the middle of its record while the others go once round the ring (what a preempted
// launching thread sees when threads outnumber cores). Its late stores must not end up in the newer record that now
// owns the slot, or at least that record must no longer be handed out as complete. The pause is injected through
// fill(), so the interleaving is exact, not timed.
TEST(LaunchRing, WriterLappedWhileFillingDoesNotTearTheNewerRecord) {
  LaunchRing ring(16);
  std::atomic<int> stage{0};
  std::thread slow([&] {
    ring.append([&](LaunchRecord& r) {
      uint64_t mine = r.seq;
      stage = 1;
      while (stage.load() != 2) std::this_thread::yield();
      fill_as(r, mine, 7);
    });
  });
  while (stage.load() != 1) std::this_thread::yield();
  for (int i = 0; i < 16; ++i) ring.append([](LaunchRecord& r) { fill(r, 1); });  // seq 16 takes the slow one's slot
  stage = 2;
  slow.join();

  EXPECT_EQ(ring.total(), 17u);
  for (const LaunchRecord& r : ring.snapshot()) EXPECT_EQ(check(r), "") << "record " << r.seq << " is torn";
  LaunchRecord r;
  if (ring.find(16, r)) {
    EXPECT_EQ(check(r), "") << "find(16) returned a torn record";
  }
}

constexpr int kWriters = 8;
constexpr int kPerWriter = 20000;
constexpr size_t kCapacity = 1024;

// A writer never waits, so one preempted in the middle of its copy while the whole ring wraps leaves its slot to its
// older record and the newer lap's writer drops its own (launch_ring.h). At the end, only a writer whose copy began
// before the last lap and ended in it can leave a slot stale: at most one per writer thread, and never a torn record.
TEST(LaunchRing, ConcurrentWritersTearNothingAndDropOnlyWhenLappedMidCopy) {
  LaunchRing ring(kCapacity);
  std::atomic<bool> go{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kPerWriter; ++i) ring.append([w](LaunchRecord& r) { fill(r, static_cast<uint32_t>(w)); });
    });
  }
  go = true;
  for (std::thread& t : writers) t.join();

  EXPECT_EQ(ring.total(), uint64_t{kWriters} * kPerWriter);
  std::vector<LaunchRecord> all = ring.snapshot();
  ASSERT_LE(all.size(), kCapacity);
  ASSERT_GE(all.size(), kCapacity - kWriters) << "more slots stale than writers that could have been lapped mid-copy";
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_GE(all[i].seq, ring.total() - kCapacity) << "only the last lap is in the ring";
    if (i > 0) {
      EXPECT_GT(all[i].seq, all[i - 1].seq) << "oldest first";
    }
    EXPECT_EQ(check(all[i]), "") << "record " << all[i].seq << " is torn";
  }
}

// Snapshots taken while the writers run: whatever they return must be complete records, in seq order.
TEST(LaunchRing, ReadersDuringWritesNeverSeeATornRecord) {
  LaunchRing ring(kCapacity);
  std::atomic<int> running{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) ring.append([w](LaunchRecord& r) { fill(r, static_cast<uint32_t>(w)); });
      running.fetch_sub(1);
    });
  }
  uint64_t torn = 0, disordered = 0, snapshots = 0;
  while (running.load() > 0) {
    std::vector<LaunchRecord> all = ring.snapshot();
    ++snapshots;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!check(all[i]).empty()) ++torn;
      if (i > 0 && all[i].seq <= all[i - 1].seq) ++disordered;
    }
    LaunchRecord r;
    uint64_t total = ring.total();
    if (total > 0 && ring.find(total - 1, r)) {
      if (r.seq != total - 1 || !check(r).empty()) ++torn;
    }
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(torn, 0u) << "over " << snapshots << " snapshots";
  EXPECT_EQ(disordered, 0u);
}

}  // namespace
}  // namespace firstassert
