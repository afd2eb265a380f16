// The device's assertion records, read out of a line of text: the one parser behind the live shim's stderr tap and
// `firstassert triage`. What it accepts:
//   NVIDIA's driver   <file>:<line>: <function>: block: [x,y,z], thread: [x,y,z] Assertion `<condition>` failed.
//                     (Triton and inductor print it too, with file "unknown", line 0, function "unknown"; old THC
//                     and THCUNN with a whole signature as the function)
//   Intel's SYCL      <file>:<line>: <function>: global id: [x,y,z], local id: [x,y,z] Assertion `<condition>` failed.
//   AMD's HIP         <file>:<line>: <function>: Device-side assertion `<condition>' failed.
//                     (ROCm's __assert_fail, hip_assert.h: no block or thread; PyTorch's ROCm builds print it from
//                     1.9 to 2.1, and later when built with USE_ROCM_KERNEL_ASSERT)
//   Triton on AMD     device assertion failed: '<message>', in <function> at <file>:<line>
// and those lines as logs deliver them: without the final period, without a function (Windows builds), with Windows
// paths, glued after other output (a progress bar, "Epoch 3:"), several on one line, rendered by a notebook or
// markdown (a leading backtick, [path](target) links), cut off inside the condition, or with another thread's output
// spliced in, or copied from a page that dropped the condition's backticks (or made them quotes). The signature
// "block: [..], thread: [..] Assertion " (or SYCL's, or HIP's "Device-side assertion `") is what makes a record; the
// text around it is trusted only where it is intact: a field that is not is left empty and the record marked garbled.
// Never allocates: the live shim parses inside the program's writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace firstassert {

enum class DeviceDialect : uint8_t { cuda, sycl, hip };

// What a record lacks or could not be trusted with (DeviceMessage::flags).
enum DeviceMessageFlag : uint8_t {
  kMessageNoFunction = 1 << 0,    // no function before the block (Windows builds print none)
  kMessageNoLocation = 1 << 1,    // no file:line could be read
  kMessageConditionCut = 1 << 2,  // the record ends inside its condition (a log cut, a line cut short)
  kMessageGarbled = 1 << 3,       // other output was spliced in: only the intact fields were kept
  kMessageNoPosition = 1 << 4,    // the dialect prints no block and thread (HIP, Triton on AMD): they read 0
  kMessageUnquoted = 1 << 5,      // the condition's backticks were missing or other quotes (a page's rendering)
};

struct DeviceMessage {
  char file[256] = {};
  uint32_t line = 0;
  char function[256] = {};
  uint32_t block[3] = {};   // SYCL: the global id; HIP: none (kMessageNoPosition)
  uint32_t thread[3] = {};  // SYCL: the local id; HIP: none
  char condition[512] = {};
  int64_t wall_ns = 0;
  DeviceDialect dialect = DeviceDialect::cuda;
  uint8_t flags = 0;

  bool has(DeviceMessageFlag flag) const { return (flags & flag) != 0; }
};

// Every record in the line, in order; writes at most capacity of them and returns how many there are.
size_t parse_device_asserts(std::string_view line, DeviceMessage* out, size_t capacity);

// The line's first record. False, with out untouched, when the line holds none.
bool parse_device_assert(std::string_view line, DeviceMessage& out);

// Where a record's text would begin in the line: the first byte of its signature ("block: [" or "global id: [")
// when it has one after `from`, else npos. For a reader that joins a record wrapped onto several lines.
size_t find_device_assert_signature(std::string_view line, size_t from = 0);
// The last one in the line, or npos.
size_t find_last_device_assert_signature(std::string_view line);

// For a reader that joins a record wrapped onto several lines: whether text ends before its record does (a signature
// without its "Assertion `", or a condition without its "` failed"), and whether text ends with what only begins a
// record ("<path>:<line>" and maybe part of a function, with no signature after it).
bool device_assert_incomplete(std::string_view text);
bool ends_like_device_assert_head(std::string_view text);

}  // namespace firstassert
