#include "device_messages.h"

#include <algorithm>
#include <cstring>

#include "clock.h"

namespace firstassert {
namespace {

void copy_field(std::string_view from, char* to, size_t capacity) {
  size_t n = std::min(from.size(), capacity - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

bool parse_uint(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return false;
  out = static_cast<uint32_t>(value);
  return true;
}

// "x,y,z" into three numbers.
bool parse_triple(std::string_view text, uint32_t (&out)[3]) {
  for (int i = 0; i < 3; ++i) {
    size_t comma = i < 2 ? text.find(',') : text.size();
    if (comma == std::string_view::npos || !parse_uint(text.substr(0, comma), out[i])) return false;
    text.remove_prefix(i < 2 ? comma + 1 : comma);
  }
  return text.empty();
}

}  // namespace

bool parse_device_assert(std::string_view line, DeviceMessage& out) {
  constexpr std::string_view kBlock = ": block: [";
  constexpr std::string_view kThread = "], thread: [";
  constexpr std::string_view kAssertion = "] Assertion `";
  constexpr std::string_view kFailed = "` failed.";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (!line.ends_with(kFailed)) return false;
  size_t block = line.rfind(kBlock);
  if (block == std::string_view::npos) return false;
  size_t thread = line.find(kThread, block);
  size_t assertion = line.find(kAssertion, block);
  if (thread == std::string_view::npos || assertion == std::string_view::npos || assertion < thread) return false;

  // "<file>:<line>: <function>" before the block; the file may itself hold colons, the function may not.
  std::string_view head = line.substr(0, block);
  size_t function_start = head.rfind(": ");
  if (function_start == std::string_view::npos) return false;
  std::string_view location = head.substr(0, function_start);
  size_t colon = location.rfind(':');
  if (colon == std::string_view::npos) return false;

  DeviceMessage m;
  if (!parse_uint(location.substr(colon + 1), m.line)) return false;
  if (!parse_triple(line.substr(block + kBlock.size(), thread - block - kBlock.size()), m.block)) return false;
  if (!parse_triple(line.substr(thread + kThread.size(), assertion - thread - kThread.size()), m.thread)) return false;
  copy_field(location.substr(0, colon), m.file, sizeof m.file);
  copy_field(head.substr(function_start + 2), m.function, sizeof m.function);
  size_t condition = assertion + kAssertion.size();
  copy_field(line.substr(condition, line.size() - kFailed.size() - condition), m.condition, sizeof m.condition);
  out = m;
  return true;
}

void DeviceMessageLog::take_line(std::string_view line) {
  if (line.find("Assertion `") == std::string_view::npos) return;
  size_t index = count_.load(std::memory_order_relaxed);
  if (index >= kMaxMessages) return;
  DeviceMessage m;
  if (!parse_device_assert(line, m)) return;
  m.wall_ns = wall_ns();
  index = count_.fetch_add(1, std::memory_order_acq_rel);
  if (index >= kMaxMessages) return;
  slots_[index] = m;
  ready_[index].store(true, std::memory_order_release);
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
