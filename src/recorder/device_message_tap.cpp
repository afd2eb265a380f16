#include "device_message_tap.h"

#include <atomic>

#include "core/device_messages.h"

namespace firstassert {
namespace {
std::atomic<bool> tap_on{false};
}  // namespace

void start_stderr_tap() { tap_on.store(true, std::memory_order_release); }

void feed_device_messages(const char* bytes, size_t size) {
  if (tap_on.load(std::memory_order_acquire)) device_message_log().feed(bytes, size);
}

}  // namespace firstassert
