// Names for raw frames, when a report is written: the module and offset of each return address (what an offline
// symbolizer needs), and the function, file and line that Boost.Stacktrace's libbacktrace backend reads from the
// debug information when there is some.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace firstassert {

struct ResolvedFrame {
  uintptr_t pc = 0;       // the return address as captured
  std::string module;     // path of the object holding it
  uintptr_t offset = 0;   // pc - the object's load base
  std::string function;   // demangled; empty when unknown
  std::string file;       // empty without debug information
  unsigned line = 0;
};

std::vector<ResolvedFrame> symbolize(const uintptr_t* pcs, size_t count);

}  // namespace firstassert
