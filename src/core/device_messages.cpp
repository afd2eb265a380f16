#include "device_messages.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "clock.h"

namespace firstassert {

void DeviceMessageLog::take_line(std::string_view line) {
  if (line.find("Assertion `") == std::string_view::npos) return;
  size_t index = count_.load(std::memory_order_relaxed);
  if (index >= kMaxMessages) return;
  DeviceMessage found[4];  // a line the driver prints holds one; a few glued together are still kept
  size_t n = std::min(parse_device_asserts(line, found, std::size(found)), std::size(found));
  int64_t now = wall_ns();
  for (size_t i = 0; i < n; ++i) {
    index = count_.fetch_add(1, std::memory_order_acq_rel);
    if (index >= kMaxMessages) return;
    found[i].wall_ns = now;
    slots_[index] = found[i];
    ready_[index].store(true, std::memory_order_release);
  }
}

void DeviceMessageLog::feed(const char* data, size_t size) {
  if (data == nullptr || size == 0) return;
  if (feeding_.test_and_set(std::memory_order_acquire)) return;
  std::string_view bytes(data, size);
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    std::string_view piece = bytes.substr(0, newline);
    if (partial_size_ + piece.size() <= sizeof partial_) {
      std::memcpy(partial_ + partial_size_, piece.data(), piece.size());
      partial_size_ += piece.size();
    } else {
      partial_size_ = sizeof partial_ + 1;  // too long for an assertion line: dropped at its newline
    }
    if (newline == std::string_view::npos) break;
    if (partial_size_ <= sizeof partial_) take_line(std::string_view(partial_, partial_size_));
    partial_size_ = 0;
    bytes.remove_prefix(newline + 1);
  }
  feeding_.clear(std::memory_order_release);
}

std::vector<DeviceMessage> DeviceMessageLog::messages() const {
  std::vector<DeviceMessage> out;
  for (size_t i = 0; i < count(); ++i) {
    if (ready_[i].load(std::memory_order_acquire)) out.push_back(slots_[i]);
  }
  return out;
}

namespace {
// Constant-initialized and trivially destructible: usable from any write, before constructors and after exit
// handlers, with no guard variable on the way.
constinit DeviceMessageLog the_log;
}  // namespace

DeviceMessageLog& device_message_log() { return the_log; }

}  // namespace firstassert
