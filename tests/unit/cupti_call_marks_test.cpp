// The marks of the calls CUPTI recorded the start of (source/observer.h): each thread's mark sits in a slot lent at
// its first call, open_cupti_calls counts the marks of one subscription across threads, and a thread that exits
// gives its slot back, so that threads coming and going never run the table out.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "source/observer.h"

namespace firstassert::source {
namespace {

unsigned now() { return cupti_subscription_now(); }

TEST(CuptiCallMarks, NoMarkIsWrittenBeforeTheSlotIsLent) {
  std::thread([] {
    EXPECT_FALSE(cupti_call_mark_lent());
    EXPECT_EQ(cupti_call_began(), 0u) << "began must not write the shared no-call mark";
    EXPECT_FALSE(inside_cupti_call());
    EXPECT_EQ(detail::no_cupti_call.load(), 0u);
  }).join();
}

TEST(CuptiCallMarks, AnOpenCallOnAnotherThreadIsCountedUntilItEnds) {
  std::atomic<int> stage{0};
  size_t before = open_cupti_calls(now());
  std::thread caller([&] {
    lend_cupti_call_mark();
    ASSERT_TRUE(cupti_call_mark_lent());
    EXPECT_EQ(cupti_call_began(), now());
    EXPECT_EQ(cupti_call_began(), 0u) << "one mark per thread: the outermost call";
    EXPECT_TRUE(inside_cupti_call());
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    EXPECT_EQ(cupti_call_ended(), now());
    EXPECT_FALSE(inside_cupti_call());
    stage = 3;
  });
  while (stage.load() != 1) std::this_thread::yield();
  EXPECT_EQ(open_cupti_calls(now()), before + 1);
  EXPECT_EQ(open_cupti_calls(now() + 1), 0u) << "a mark counts for its own subscription only";
  stage = 2;
  while (stage.load() != 3) std::this_thread::yield();
  EXPECT_EQ(open_cupti_calls(now()), before);
  caller.join();
}

TEST(CuptiCallMarks, AMarkOfAnEndedSubscriptionIsNotOpenUnderTheNextOne) {
  std::thread([] {
    lend_cupti_call_mark();
    unsigned first = cupti_call_began();
    ASSERT_NE(first, 0u);
    cupti_subscription_ended();
    EXPECT_FALSE(inside_cupti_call()) << "the mark is of the subscription given up";
    EXPECT_EQ(open_cupti_calls(now()), 0u);
    EXPECT_EQ(open_cupti_calls(first), 1u);
    EXPECT_EQ(cupti_call_ended(), first);
  }).join();
}

// More threads than the table has slots, one after another: each finds a slot (and is counted) only if the threads
// before it gave theirs back when they exited.
TEST(CuptiCallMarks, ThreadsThatExitGiveTheirSlotBack) {
  for (int i = 0; i < 1500; ++i) {
    size_t counted = 0;
    std::thread([&] {
      lend_cupti_call_mark();
      cupti_call_began();
      counted = open_cupti_calls(now());
      cupti_call_ended();
    }).join();
    ASSERT_EQ(counted, 1u) << "thread " << i << " found no slot";
  }
}

}  // namespace
}  // namespace firstassert::source
