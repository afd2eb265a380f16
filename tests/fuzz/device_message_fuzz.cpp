// The device-message parser against arbitrary bytes, as the stderr tap and triage feed it: any split of any bytes,
// never a crash, never a message with an unterminated field.
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
  // Every form the parser takes (device_assert_line.h), on the whole input as one line: the records written are
  // bounded by the room given, each field terminated, and no record claims a flag it cannot have.
  firstassert::DeviceMessage records[4];
  size_t n = firstassert::parse_device_asserts(std::string_view(bytes, size), records, 4);
  for (size_t i = 0; i < (n < 4 ? n : 4); ++i) {
    const firstassert::DeviceMessage& r = records[i];
    if (std::memchr(r.file, '\0', sizeof r.file) == nullptr || std::memchr(r.function, '\0', sizeof r.function) == nullptr ||
        std::memchr(r.condition, '\0', sizeof r.condition) == nullptr || (r.flags & ~0x3f) != 0)
      __builtin_trap();
    // Only HIP's records lack a block and thread, and all of them do.
    if (r.has(firstassert::kMessageNoPosition) != (r.dialect == firstassert::DeviceDialect::hip)) __builtin_trap();
    if (r.has(firstassert::kMessageNoLocation) && r.line != 0) __builtin_trap();  // a line number never invented
  }
  firstassert::DeviceMessage m;
  if (firstassert::parse_device_assert(std::string_view(bytes, size), m) != (n > 0)) __builtin_trap();
  return 0;
}
