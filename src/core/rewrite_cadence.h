#pragma once
// When the report is rewritten while secondary errors keep coming: at the first one, then at most once per period.
// A notebook kernel that lost its CUDA context is often restarted or killed, never exiting normally, so waiting for
// the exit handler would leave its report saying "0 secondary errors"; rewriting on every error would cost a report's
// worth of work on each of the thousands of failing calls that follow.
#include <atomic>
#include <cstdint>
#include <limits>

namespace firstassert {

class RewriteCadence {
 public:
  static constexpr int64_t kDefaultPeriodNs = 2'000'000'000;

  explicit RewriteCadence(int64_t period_ns = kDefaultPeriodNs) : period_ns_(period_ns) {}

  // Whether the caller, which just saw secondary error number secondary_count at now_ns, should rewrite the report.
  // Of threads asking at once, one is told yes.
  bool due(uint64_t secondary_count, int64_t now_ns) {
    int64_t last = last_ns_.load(std::memory_order_relaxed);
    if (secondary_count != 1 && last != kNever && now_ns - last < period_ns_) return false;
    return last_ns_.compare_exchange_strong(last, now_ns, std::memory_order_relaxed);
  }

 private:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
  const int64_t period_ns_;
  std::atomic<int64_t> last_ns_{kNever};
};

}  // namespace firstassert
