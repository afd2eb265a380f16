// Native stack capture: frames fall inside the functions that were on the stack, from ordinary code and from a
// signal handler (the crash-handler path), and the machinery ranges cut only the leading frames of the shim.
#include "stack/native_stack.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "stack/symbolize.h"

namespace firstassert {
namespace {

std::vector<std::string> functions_of(const uintptr_t* frames, size_t count) {
  std::vector<std::string> names;
  for (const ResolvedFrame& f : symbolize(frames, count)) names.push_back(f.function);
  return names;
}

bool any_contains(const std::vector<std::string>& names, const std::string& part) {
  for (const std::string& n : names) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

__attribute__((noinline)) size_t capture_in_inner(uintptr_t* frames, size_t max) {
  size_t n = capture_native_stack(frames, max);
  asm volatile("" ::: "memory");  // keeps the call a real call, not a tail call
  return n;
}

__attribute__((noinline)) size_t capture_in_outer(uintptr_t* frames, size_t max) {
  size_t n = capture_in_inner(frames, max);
  asm volatile("" ::: "memory");
  return n;
}

TEST(NativeStack, FramesNameTheCallersInnermostFirst) {
  uintptr_t frames[32];
  size_t n = capture_in_outer(frames, 32);
  ASSERT_GE(n, 3u);
  std::vector<std::string> names = functions_of(frames, n);
  EXPECT_NE(names[0].find("capture_in_inner"), std::string::npos) << names[0];
  EXPECT_NE(names[1].find("capture_in_outer"), std::string::npos) << names[1];
}

TEST(NativeStack, DepthAndSkipAreHonoured) {
  uintptr_t frames[32];
  EXPECT_EQ(capture_native_stack(frames, 2), 2u);
  uintptr_t all[32], skipped[32];
  size_t n = capture_native_stack(all, 8);
  size_t m = capture_native_stack(skipped, 8, 1);
  ASSERT_GE(n, 3u);
  ASSERT_GE(m, 2u);
  EXPECT_EQ(skipped[1], all[2]) << "skip drops the innermost frames, the rest line up";
}

volatile sig_atomic_t handled = 0;
uintptr_t handler_frames[64];
size_t handler_count = 0;

void on_signal(int) {
  handler_count = capture_native_stack_signal_safe(handler_frames, 64);
  handled = 1;
}

__attribute__((noinline)) void raise_from_here() {
  raise(SIGUSR1);
  asm volatile("" ::: "memory");
}

TEST(NativeStack, CaptureFromASignalHandlerReachesTheInterruptedCode) {
  struct sigaction action {}, previous{};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  raise_from_here();
  sigaction(SIGUSR1, &previous, nullptr);
  ASSERT_EQ(handled, 1);
  ASSERT_GE(handler_count, 2u);
  std::vector<std::string> names = functions_of(handler_frames, handler_count);
  EXPECT_TRUE(any_contains(names, "raise_from_here")) << "through the signal frame into the code that raised it";
  EXPECT_TRUE(any_contains(names, "CaptureFromASignalHandlerReachesTheInterruptedCode"));
}

TEST(NativeStack, MachineryRangesCutOnlyTheLeadingFramesOfTheirObject) {
  // This test binary holds both the capture and its callers: as "machinery", every frame of it is cut, up to the
  // first frame of another object (libgtest or libc).
  MachineryRanges ranges;
  ranges.collect(reinterpret_cast<const void*>(&capture_in_inner));
  uintptr_t frames[32];
  size_t n = capture_in_outer(frames, 32);
  ASSERT_GE(n, 3u);
  EXPECT_TRUE(ranges.contains(frames[0]));
  size_t leading = ranges.leading(frames, n);
  EXPECT_GE(leading, 2u);
  EXPECT_LT(leading, n);
  EXPECT_FALSE(ranges.contains(frames[leading]));
}

}  // namespace
}  // namespace firstassert
