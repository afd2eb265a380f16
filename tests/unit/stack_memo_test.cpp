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

// Under ThreadSanitizer native stacks are walked frame by frame, without the memo: a test of it has nothing to test.
#if defined(__SANITIZE_THREAD__)
#define SKIP_WITHOUT_THE_MEMO() GTEST_SKIP() << "under ThreadSanitizer native stacks are walked frame by frame, without the memo"
#else
#define SKIP_WITHOUT_THE_MEMO() static_cast<void>(0)
#endif

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
  SKIP_WITHOUT_THE_MEMO();
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
  SKIP_WITHOUT_THE_MEMO();
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

// Against a fresh walk: a capture with the memo and one without, made one after the other through the same frames
// (fixtures below) from one call instruction, so that the two stacks differ only inside the capture itself.
using Callback = size_t (*)(void*);
using Fixture = size_t (*)(Callback, void*);  // frames between the test and fn(arg)
using Capture = size_t (*)(uintptr_t*, size_t, size_t, const MachineryRanges*, size_t*);

extern "C" {
// tests/unit/stack_memo_fixtures.S: a frame of one kind under two callers whose frames differ in size.
size_t stack_memo_fp_small(Callback fn, void* arg);
size_t stack_memo_fp_large(Callback fn, void* arg);
size_t stack_memo_rbp32_small(Callback fn, void* arg);
size_t stack_memo_rbp32_large(Callback fn, void* arg);
size_t stack_memo_drap_small(Callback fn, void* arg);
size_t stack_memo_drap_large(Callback fn, void* arg);
size_t stack_memo_local_in_rbp(Capture capture, uintptr_t* frames, size_t max_frames, size_t skip,
                               const MachineryRanges* machinery, size_t* cut);
}

struct Walk {
  Fixture fixture;
  size_t max_frames = 64, skip = 0;
  const MachineryRanges* machinery = nullptr;
  Capture capture = nullptr;
  uintptr_t frames[64] = {};
  size_t count = 0, cut = 0;
  std::vector<uintptr_t> got() const { return {frames, frames + count}; }
};

// The reference: libunwind's cursor from this function, less this function's frame.
__attribute__((noinline)) size_t fresh_walk(uintptr_t* frames, size_t max_frames, size_t skip,
                                            const MachineryRanges* machinery, size_t* cut) {
  size_t n = capture_native_stack_signal_safe(frames, max_frames, skip + 1);
  *cut = machinery != nullptr ? machinery->leading(frames, n) : 0;
  asm volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) size_t run_capture(void* walk) {
  auto* w = static_cast<Walk*>(walk);
  w->count = w->capture(w->frames, w->max_frames, w->skip, w->machinery, &w->cut);
  asm volatile("" ::: "memory");
  return w->count;
}

// An alloca frame: the stack below it moves by `bytes`.
__attribute__((noinline)) size_t lowered(size_t bytes, Walk* w) {
  auto* pad = static_cast<volatile char*>(alloca(bytes));
  pad[0] = 0;
  size_t n = w->fixture(run_capture, w);
  asm volatile("" ::: "memory");
  return n + pad[0];
}

// The walks one after the other, with nothing called in between: what one leaves on the stack, the next finds.
__attribute__((noinline)) void walk_all(Walk* walks, size_t count, size_t lower) {
  asm volatile("" : "+r"(count));  // a loop, never unrolled into several call sites
  for (size_t i = 0; i < count; ++i) {
    if (lower == 0) {
      walks[i].fixture(run_capture, &walks[i]);
    } else {
      lowered(lower, &walks[i]);
    }
  }
  asm volatile("" ::: "memory");
}

// kRounds times, each walk captured with the memo and then afresh: the frames and the cut must be the fresh walk's,
// and the cut MachineryRanges::leading of the frames returned. The fresh walks come back.
std::vector<std::vector<uintptr_t>> expect_as_fresh(const std::vector<Walk>& walks, size_t lower = 0) {
  std::vector<Walk> both;
  for (const Walk& w : walks) {
    both.push_back(w);
    both.back().capture = capture_native_stack;
    both.push_back(w);
    both.back().capture = fresh_walk;
  }
  bool same = true;
  for (int round = 0; round < kRounds && same; ++round) {
    walk_all(both.data(), both.size(), lower);
    for (size_t i = 0; i < both.size(); i += 2) {
      const Walk& memo = both[i];
      size_t leading = memo.machinery != nullptr ? memo.machinery->leading(memo.frames, memo.count) : 0;
      EXPECT_EQ(memo.got(), both[i + 1].got()) << "walk " << i / 2 << ", round " << round;
      EXPECT_EQ(memo.cut, leading) << "walk " << i / 2 << ", round " << round;
      same = same && memo.got() == both[i + 1].got() && memo.cut == leading;
    }
  }
  std::vector<std::vector<uintptr_t>> fresh;
  for (size_t i = 1; i < both.size(); i += 2) fresh.push_back(both[i].got());
  return fresh;
}

// Two callers of one shared chain of frames: the stacks differ from frame kSharedFrames + 2 outwards only.
constexpr int kSharedFrames = 4;

__attribute__((noinline)) size_t chain(int depth, Callback fn, void* arg) {
  size_t n = depth == 0 ? fn(arg) : chain(depth - 1, fn, arg);
  asm volatile("" ::: "memory");
  return n;
}
__attribute__((noinline)) size_t far_left(Callback fn, void* arg) {
  size_t n = chain(kSharedFrames, fn, arg);
  asm volatile("" ::: "memory");
  return n;
}
__attribute__((noinline)) size_t far_right(Callback fn, void* arg) {
  size_t n = chain(kSharedFrames, fn, arg);
  asm volatile("" ::: "memory");
  return n;
}

// Ranges that hold this test binary (its frames are the "machinery"), and none. Not locals of a test: a frame that
// keeps a pointer into itself in rbp is not learned.
const MachineryRanges& this_binary() {
  static const MachineryRanges ranges = [] {
    MachineryRanges r;
    r.collect(reinterpret_cast<const void*>(&run_capture));
    return r;
  }();
  return ranges;
}
const MachineryRanges no_machinery;

__attribute__((noinline)) size_t direct(Callback fn, void* arg) {
  size_t n = fn(arg);
  asm volatile("" ::: "memory");
  return n;
}

// A frame-pointer frame's rbp tells its two callers apart where the return-address slots alone do not.
TEST(StackMemo, AFramePointerFrameUnderAnotherCallerIsWalkedAgain) {
  SKIP_WITHOUT_THE_MEMO();
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  auto fresh = expect_as_fresh({{stack_memo_fp_small}, {stack_memo_fp_large}});
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_NE(fresh[0], fresh[1]);
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before) << "the memo answered some of the captures";
}

__attribute__((noinline)) size_t through_local_in_rbp(Capture capture, uintptr_t* frames, size_t* cut) {
  size_t n = stack_memo_local_in_rbp(capture, frames, 64, 0, nullptr, cut);
  asm volatile("" ::: "memory");
  return n;
}

// The capture's caller keeps the address of a local of its own in rbp (its CFA from rsp; the rbp the capture's own
// register, or its own save): its stack is learned and found again, with the frames a fresh walk gives.
TEST(StackMemo, ACallerKeepingALocalsAddressInRbpIsFoundAgain) {
  SKIP_WITHOUT_THE_MEMO();
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  std::vector<uintptr_t> fresh;
  for (int i = 0; i < 2 * kRounds; ++i) {
    bool memo = i % 2 == 0;
    uintptr_t frames[64];
    size_t cut = 0;
    size_t n = through_local_in_rbp(memo ? capture_native_stack : fresh_walk, frames, &cut);  // one call site
    std::vector<uintptr_t> got(frames, frames + n);
    if (!memo) {
      fresh = got;
      continue;
    }
    if (!fresh.empty()) {
      ASSERT_EQ(got, fresh) << "capture " << i;
    }
  }
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before) << "the memo answered none of the captures";
}

// An rbp-based frame whose CFA is not rbp + 16 is never answered from the memo with another caller's frames.
TEST(StackMemo, AnRbpFrameWithAnotherCfaOffsetIsWalkedAgain) {
  SKIP_WITHOUT_THE_MEMO();
  auto fresh = expect_as_fresh({{stack_memo_rbp32_small}, {stack_memo_rbp32_large}});
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_NE(fresh[0], fresh[1]);
}

// A realigned frame (CFA read from the stack, GCC's DRAP) is never answered with another caller's frames, at every
// alignment of the stack above it.
TEST(StackMemo, ARealignedFrameIsWalkedAgain) {
  SKIP_WITHOUT_THE_MEMO();
  for (size_t lower = 16; lower <= 64; lower += 16) {
    auto fresh = expect_as_fresh({{stack_memo_drap_small}, {stack_memo_drap_large}}, lower);
    ASSERT_EQ(fresh.size(), 2u) << "lowered by " << lower;
    EXPECT_NE(fresh[0], fresh[1]);
  }
}

// Stacks alike in their first kSharedFrames + 2 frames, slots and all, keep their own callers further out.
TEST(StackMemo, StacksThatDifferOnlyFarOutKeepTheirOwnFrames) {
  SKIP_WITHOUT_THE_MEMO();
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  auto fresh = expect_as_fresh({{far_left}, {far_right}});
  ASSERT_EQ(fresh.size(), 2u);
  ASSERT_GT(fresh[0].size(), size_t{kSharedFrames + 2});
  EXPECT_EQ(std::vector<uintptr_t>(fresh[0].begin(), fresh[0].begin() + kSharedFrames + 2),
            std::vector<uintptr_t>(fresh[1].begin(), fresh[1].begin() + kSharedFrames + 2));
  EXPECT_NE(fresh[0][kSharedFrames + 2], fresh[1][kSharedFrames + 2]);
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before);
}

// At one call site, each depth and skip gets its own frames and cut, also where max_frames + skip is the same.
TEST(StackMemo, EachDepthAndSkipAtOneCallSiteGetsItsOwnFramesAndCut) {
  SKIP_WITHOUT_THE_MEMO();
  const MachineryRanges* m = &this_binary();
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  expect_as_fresh({{direct, 2, 0, m}, {direct, 64, 0, m}, {direct, 2, 1, m}, {direct, 64, 1, m}});
  expect_as_fresh({{direct, 64, 0, m}, {direct, 63, 1, m}, {direct, 2, 0, m}, {direct, 1, 1, m}});
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before);
}

// At one call site, each MachineryRanges gets its own cut.
TEST(StackMemo, EachMachineryAtOneCallSiteGetsItsOwnCut) {
  SKIP_WITHOUT_THE_MEMO();
  uint64_t reused_before = stack_memo::reused_on_this_thread();
  expect_as_fresh({{direct, 64, 0, &no_machinery}, {direct, 64, 0, &this_binary()}});
  EXPECT_GT(stack_memo::reused_on_this_thread(), reused_before);
}

// Each thread has its own memo: threads capturing from their own functions at once get their own frames.
// One function per thread (an instantiation each), so that their stacks differ.
template <char Which>
__attribute__((noinline)) void capture_on_thread(std::vector<uintptr_t>* out, bool* right) {
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
  std::thread ta(capture_on_thread<'a'>, &a, &a_right), tb(capture_on_thread<'b'>, &b, &b_right);
  ta.join();
  tb.join();
  EXPECT_TRUE(a_right);
  EXPECT_TRUE(b_right);
  EXPECT_TRUE(names(a, "capture_on_thread<(char)97>") || names(a, "capture_on_thread<'a'>")) << functions(a)[1];
  EXPECT_TRUE(names(b, "capture_on_thread<(char)98>") || names(b, "capture_on_thread<'b'>")) << functions(b)[1];
}

}  // namespace
}  // namespace firstassert
