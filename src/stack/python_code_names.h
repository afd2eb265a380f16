// Code object -> interned (file, function) and the lines of the instructions seen: a hash table found lock-free,
// filled under a lock at a code object's first capture. Code objects are not kept alive (that would need the GIL):
// an entry also holds what it was read from (the name objects, the line table object, the first line), so a code
// object later made at a freed one's address gets an entry of its own unless all of those are the same too.
// The lookups are inline, for the walk's step that resolves a frame anew; adding an entry or a line is not.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "python_interpreter.h"

namespace firstassert::python {

constexpr size_t kCodes = 8192;
// A code object is looked for, and placed, within this many slots of its hash: once generated code (exec, notebooks,
// torch.compile) has filled the neighbourhood, a new code object costs a bounded search, not the whole table, and
// its frames are left out.
constexpr size_t kProbes = 32;
constexpr size_t kLinesPerCode = 8;

// What a code object's names and lines were read from: a code object at the same address with all of these the same
// is taken for the same one.
struct CodeIdentity {
  const void* file_object = nullptr;
  const void* name_object = nullptr;
  const void* line_table = nullptr;
  int first_line = 0;
  bool operator==(const CodeIdentity&) const = default;
};

// Inline: the walk's copy for one layout reads these at constant offsets.
inline CodeIdentity identity_of(const PythonLayout& l, const void* code) {
  return {at<const void*>(code, l.code_filename), at<const void*>(code, l.code_name),
          at<const void*>(code, l.code_line_table), at<int>(code, l.code_first_line)};
}

struct CodeNames {
  std::atomic<const void*> code{nullptr};
  CodeIdentity identity;
  const char* file = nullptr;
  const char* function = nullptr;
  // (instruction offset + 1) << 32 | line: PyCode_Addr2Line scans the line table, and a loop launches from the same
  // few instructions over and over. 0: empty.
  mutable std::atomic<uint64_t> lines[kLinesPerCode] = {};
};

namespace detail {
extern CodeNames code_names[kCodes];
// The code object's entry made in the kProbes slots from start (nullptr: they were taken meanwhile), under the lock.
const CodeNames* add_code_names(const Interpreter& py, const void* code, const CodeIdentity& identity, size_t start);
// The line of the instruction at offset, asked of the interpreter and remembered in names.
int add_line(const Interpreter& py, const CodeNames& names, const void* code, int offset);
}  // namespace detail

// The code object's entry, made at its first capture; nullptr when its neighbourhood of the table is full (no lock
// is taken then, and the frame is left out).
inline const CodeNames* names_of(const Interpreter& py, const void* code) {
  const CodeIdentity identity = identity_of(*py.layout, code);
  // Objects are 16-byte aligned: the low bits say nothing, and a multiplicative hash (Fibonacci hashing) spreads
  // the rest.
  static_assert(kCodes == 1u << 13);
  size_t start = static_cast<size_t>((reinterpret_cast<uintptr_t>(code) >> 4) * 0x9E3779B97F4A7C15ull >> (64 - 13));
  bool free_slot = false;
  for (size_t i = 0; i < kProbes && !free_slot; ++i) {
    const CodeNames& c = detail::code_names[(start + i) % kCodes];
    const void* seen = c.code.load(std::memory_order_acquire);
    free_slot = seen == nullptr;
    if (seen == code && c.identity == identity) return &c;
  }
  if (!free_slot) return nullptr;
  return detail::add_code_names(py, code, identity, start);
}

// The line of the code object's instruction at byte offset (negative: not started), remembered per code object.
inline int line_of(const Interpreter& py, const CodeNames& names, const void* code, int offset) {
  if (offset < 0) return py.address_to_line(const_cast<void*>(code), offset);
  uint64_t tag = static_cast<uint64_t>(offset) + 1;
  for (const auto& slot : names.lines) {
    uint64_t seen = slot.load(std::memory_order_relaxed);
    if (seen >> 32 == tag) return static_cast<int32_t>(static_cast<uint32_t>(seen));
    if (seen == 0) break;
  }
  return detail::add_line(py, names, code, offset);
}

}  // namespace firstassert::python
