// The device-message parser against arbitrary bytes, as the stderr tap feeds it: any split of any bytes, never a
// crash, never a message with an unterminated field.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/device_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static firstassert::DeviceMessageLog* log = new firstassert::DeviceMessageLog;  // bounded: 64 messages
  const char* bytes = reinterpret_cast<const char*>(data);
  size_t split = size > 0 ? data[0] % (size + 1) : 0;
  log->feed(bytes, split);
  log->feed(bytes + split, size - split);
  for (const firstassert::DeviceMessage& m : log->messages()) {
    if (std::memchr(m.file, '\0', sizeof m.file) == nullptr || std::memchr(m.function, '\0', sizeof m.function) == nullptr ||
        std::memchr(m.condition, '\0', sizeof m.condition) == nullptr)
      __builtin_trap();
  }
  firstassert::DeviceMessage m;
  (void)firstassert::parse_device_assert(std::string_view(bytes, size), m);
  return 0;
}
