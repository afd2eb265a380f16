// The stack memo (src/stack/stack_memo.h): a capture answered from a thread's memo gives exactly the frames an
// unwind gives, and a stack that only looks the same from the inside (the same inner frames at the same addresses,
// other callers further out) is unwound again, never taken for the one before.
#include "stack/stack_memo.h"

#include <alloca.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "stack/native_stack.h"
#include "stack/symbolize.h"

namespace firstassert {
namespace {

constexpr int kRounds = 3 * stack_memo::kLearnEvery;  // enough captures for each stack to be learned and reused

std::vector<uintptr_t> frames_of(size_t (*capture)(uintptr_t*, size_t)) {
  uintptr_t frames[64];
  size_t n = capture(frames, 64);
  return {frames, frames + n};
}

std::vector<std::string> functions(const std::vector<uintptr_t>& frames) {
  std::vector<std::string> names;
  for (const ResolvedFrame& f : symbolize(frames.data(), frames.size())) names.push_back(f.function);
  return names;
}

bool names(const std::vector<uintptr_t>& frames, const std::string& part) {
  for (const std::string& f : functions(frames)) {
    if (f.find(part) != std::string::npos) return true;
  }
  return false;
}

__attribute__((noinline)) size_t shared_inner(uintptr_t* frames, size_t max) {
  size_t n = capture_native_stack(frames, max);
  asm volatile("" ::: "memory");  // a real call, not a tail call
  return n;
}

// Two callers with the same frame: the inner frames sit at the same addresses under either, only the return
// address into the caller differs.
__attribute__((noinline)) size_t via_left(uintptr_t* frames, size_t max) {
  size_t n = shared_inner(frames, max);
  asm volatile("" ::: "memory");
  return n;
}
__attribute__((noinline)) size_t via_right(uintptr_t* frames, size_t max) {
  size_t n = shared_inner(frames, max);
  asm volatile("" ::: "memory");
  return n;
}

// Every comparison below is between captures made from one call site (a capture from another line of a test is
// another stack: its return address into the test differs).

TEST(StackMemo, ARepeatedStackIsReusedWithTheSameFrames) {
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  std::vector<uintptr_t> first;
  for (int i = 0; i < kRounds; ++i) {
    std::vector<uintptr_t> got = frames_of(via_left);
    if (i == 0) first = got;
    ASSERT_EQ(got, first) << "capture " << i;
  }
  ASSERT_GE(first.size(), 3u);
  EXPECT_TRUE(names(first, "via_left"));
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before) << "the memo answered some of the captures";
}

TEST(StackMemo, SameInnerFramesUnderAnotherCallerAreNotTakenForTheOther) {
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  std::vector<uintptr_t> left, right;
  for (int i = 0; i < kRounds; ++i) {
    std::vector<uintptr_t> l = frames_of(via_left), r = frames_of(via_right);
    if (i == 0) {
      left = l;
      right = r;
    }
    ASSERT_EQ(l, left) << "capture " << i;
    ASSERT_EQ(r, right) << "capture " << i;
  }
  EXPECT_TRUE(names(left, "via_left"));
  EXPECT_FALSE(names(left, "via_right"));
  EXPECT_TRUE(names(right, "via_right"));
  EXPECT_FALSE(names(right, "via_left"));
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before);
}

// Recursion to different depths: the same functions, frames at other addresses.
__attribute__((noinline)) size_t descend(int depth, uintptr_t* frames, size_t max) {
  if (depth == 0) return shared_inner(frames, max);
  size_t n = descend(depth - 1, frames, max);
  asm volatile("" ::: "memory");
  return n;
}

TEST(StackMemo, OtherDepthsOfOneRecursionKeepTheirOwnFrames) {
  constexpr int kDepths = 6;
  std::vector<std::vector<uintptr_t>> expected(kDepths);
  for (int i = 0; i < kRounds; ++i) {
    for (int depth = 0; depth < kDepths; ++depth) {
      uintptr_t frames[64];
      size_t n = descend(depth, frames, 64);
      std::vector<uintptr_t> got(frames, frames + n);
      if (i == 0) expected[depth] = got;
      ASSERT_EQ(got, expected[depth]) << "depth " << depth << ", round " << i;
    }
  }
  for (int depth = 1; depth < kDepths; ++depth)
    EXPECT_EQ(expected[depth].size(), expected[0].size() + depth) << "one more frame per level";
}

// A frame-pointer frame (alloca forces one) of varying size between the capture and the test: the frames inside it
// move, and those outside it must still be right.
__attribute__((noinline)) size_t through_alloca(size_t bytes, uintptr_t* frames, size_t max) {
  auto* pad = static_cast<volatile char*>(alloca(bytes));
  pad[0] = 1;
  size_t n = shared_inner(frames, max);
  asm volatile("" ::: "memory");
  return n + pad[0] - 1;
}

TEST(StackMemo, AFramePointerFrameOfChangingSizeIsFollowed) {
  std::vector<uintptr_t> expected;
  for (int i = 0; i < kRounds; ++i) {
    uintptr_t frames[64];
    size_t n = through_alloca(i % 2 == 0 ? 16 : 4096 + 16 * (i % 5), frames, 64);
    std::vector<uintptr_t> got(frames, frames + n);
    if (i == 0) expected = got;
    ASSERT_EQ(got, expected) << "round " << i;
  }
  EXPECT_TRUE(names(expected, "through_alloca"));
}

TEST(StackMemo, SkipAndDepthApplyToAReusedStack) {
  std::vector<uintptr_t> all;
  for (int i = 0; i < kRounds; ++i) {
    uintptr_t full[64], two[2], skipped[64];
    size_t n = shared_inner(full, 64);
    ASSERT_EQ(shared_inner(two, 2), 2u) << "round " << i;
    size_t m = capture_native_stack(skipped, 64, 1);
    ASSERT_GE(n, 3u);
    ASSERT_GE(m, 1u);
    EXPECT_EQ(two[0], full[0]);
    // full: shared_inner, this test, its callers; skipped: from this test, less one frame (this test).
    EXPECT_EQ(std::vector<uintptr_t>(skipped, skipped + m), std::vector<uintptr_t>(full + 2, full + n))
        << "skip drops the innermost frames, the callers further out line up; round " << i;
    if (i == 0) all.assign(full, full + n);
    ASSERT_EQ(std::vector<uintptr_t>(full, full + n), all) << "round " << i;
  }
}

TEST(StackMemo, MachineryCutIsKeptWithTheStack) {
  MachineryRanges ranges;
  ranges.collect(reinterpret_cast<const void*>(&shared_inner));  // this test binary is the "machinery"
  for (int i = 0; i < kRounds; ++i) {
    uintptr_t frames[64];
    size_t cut = 0;
    size_t n = capture_native_stack(frames, 64, 0, &ranges, &cut);
    ASSERT_GE(n, 2u);
    ASSERT_EQ(cut, ranges.leading(frames, n)) << "round " << i;
  }
}

// Each thread has its own memo: threads capturing from their own functions at once get their own frames.
__attribute__((noinline)) void capture_on_thread_a(std::vector<uintptr_t>* out, bool* right) {
  for (int i = 0; i < kRounds; ++i) {
    uintptr_t frames[64];
    size_t n = shared_inner(frames, 64);
    std::vector<uintptr_t> got(frames, frames + n);
    if (i == 0) *out = got;
    if (got != *out) *right = false;
  }
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void capture_on_thread_b(std::vector<uintptr_t>* out, bool* right) {
  for (int i = 0; i < kRounds; ++i) {
    uintptr_t frames[64];
    size_t n = shared_inner(frames, 64);
    std::vector<uintptr_t> got(frames, frames + n);
    if (i == 0) *out = got;
    if (got != *out) *right = false;
  }
  asm volatile("" ::: "memory");
}

TEST(StackMemo, ThreadsKeepTheirOwnStacks) {
  std::vector<uintptr_t> a, b;
  bool a_right = true, b_right = true;
  std::thread ta(capture_on_thread_a, &a, &a_right), tb(capture_on_thread_b, &b, &b_right);
  ta.join();
  tb.join();
  EXPECT_TRUE(a_right);
  EXPECT_TRUE(b_right);
  EXPECT_TRUE(names(a, "capture_on_thread_a"));
  EXPECT_TRUE(names(b, "capture_on_thread_b"));
}

}  // namespace
}  // namespace firstassert
