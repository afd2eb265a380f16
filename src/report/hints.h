// What to check, for the asserts and launch failures the field knows: a table in hints.json (one entry per failure,
// easy to extend), compiled into the library and matched when a report or a triage summary is written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/device_assert_line.h"

namespace firstassert {

struct Hint {
  std::string id;
  std::string title;
  std::string text;
};

struct HintQuery {
  std::string_view condition;  // the device's assertion condition; empty when the device's line was not read
  std::string_view function;   // the function the device's line names, else the kernel's (demangled) name
  std::string_view file;       // the device's source file, when known
  int code = 0;                // the CUDA error
};

// A known condition decides alone: the first entry with an "asserts" alternative whose condition is the same
// (blanks aside) or starts with one of its prefixes, and whose "functions" and "files" (when it has them) are in the
// query's function and file. A condition no entry knows gets no hint: a wrong hint is worse than none. Without a
// condition, for a device-side assert (710, or no code), the first entry whose "kernels" is in the function; then
// the first whose "codes" has the code.
std::optional<Hint> find_hint(const HintQuery& query);

// The hint for a launch the shim recorded: by the device's line that matched it (message, or nullptr), else by the
// kernel's demangled name, else by the error's code. A condition cut off is not a condition.
std::optional<Hint> hint_for_launch(const DeviceMessage* message, std::string_view kernel, int code);

}  // namespace firstassert
