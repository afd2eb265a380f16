// An address or handle as people and reports read it: "0x7f3a2c000000", the form CUDA's own tools print streams in.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace firstassert {

inline std::string hex(uintptr_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace firstassert
