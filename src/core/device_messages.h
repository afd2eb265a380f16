// The driver's device-side assertion lines (device_assert_line.h), as they reach stderr. Fed with whatever bytes
// reach it (feed() must stay cheap: it runs inside the program's writes), parsed into fixed-size records without
// allocating, and kept (the first kMaxMessages) for the report and the culprit choice.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "device_assert_line.h"

namespace firstassert {

class DeviceMessageLog {
 public:
  constexpr DeviceMessageLog() = default;
  static constexpr size_t kMaxMessages = 64;

  // Bytes written to stderr, in order; lines may be split across calls. Never blocks: when two threads write at once
  // the second one's bytes are not parsed (the first assertion lines are what matters, and they are not lost to the
  // user, who sees every byte as written).
  void feed(const char* data, size_t size);
  std::vector<DeviceMessage> messages() const;
  size_t count() const { return std::min(count_.load(std::memory_order_acquire), kMaxMessages); }

 private:
  void take_line(std::string_view line);

  std::atomic_flag feeding_ = ATOMIC_FLAG_INIT;
  char partial_[2048] = {};
  size_t partial_size_ = 0;
  std::atomic<size_t> count_{0};
  std::atomic<bool> ready_[kMaxMessages] = {};
  DeviceMessage slots_[kMaxMessages];
};

// The process's log, fed by the stderr tap; it exists before activation and costs nothing until fed.
DeviceMessageLog& device_message_log();

}  // namespace firstassert
