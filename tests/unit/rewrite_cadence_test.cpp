#include "core/rewrite_cadence.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace firstassert {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(RewriteCadence, TheFirstSecondaryErrorThenAtMostOncePerPeriod) {
  RewriteCadence cadence(2 * kSecond);
  EXPECT_TRUE(cadence.due(1, 10 * kSecond)) << "the first secondary error is counted at once";
  EXPECT_FALSE(cadence.due(2, 10 * kSecond + 1));
  EXPECT_FALSE(cadence.due(500, 11 * kSecond));
  EXPECT_TRUE(cadence.due(501, 12 * kSecond));
  EXPECT_FALSE(cadence.due(502, 13 * kSecond));
  EXPECT_TRUE(cadence.due(9000, 60 * kSecond));
}

TEST(RewriteCadence, TheFirstIsDueEvenWhenALaterOneWasCountedFirst) {
  // Another thread's error may be counted, and ask, before the first one's thread does: both rewrite.
  RewriteCadence cadence(2 * kSecond);
  EXPECT_TRUE(cadence.due(2, 5 * kSecond));
  EXPECT_TRUE(cadence.due(1, 5 * kSecond));
  EXPECT_FALSE(cadence.due(3, 5 * kSecond));
}

TEST(RewriteCadence, OfThreadsAskingAtOnceOneIsToldYes) {
  RewriteCadence cadence(2 * kSecond);
  std::atomic<int> yes{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] { yes += cadence.due(static_cast<uint64_t>(i + 2), 7 * kSecond) ? 1 : 0; });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(yes.load(), 1);
}

}  // namespace
}  // namespace firstassert
