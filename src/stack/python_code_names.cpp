#include "python_code_names.h"

#include <cstring>
#include <mutex>
#include <string>

#include "python_text.h"

namespace firstassert::python {
namespace {

std::mutex code_names_mutex;

const char* interned(const std::string& text) {
  const char* copy = strdup(text.c_str());
  return copy != nullptr ? copy : "?";
}

}  // namespace

namespace detail {

CodeNames code_names[kCodes];

const CodeNames* add_code_names(const Interpreter& py, const void* code, const CodeIdentity& identity, size_t start) {
  std::lock_guard lock(code_names_mutex);
  for (size_t i = 0; i < kProbes; ++i) {
    CodeNames& c = code_names[(start + i) % kCodes];
    const void* seen = c.code.load(std::memory_order_relaxed);
    if (seen == code && c.identity == identity) return &c;
    if (seen != nullptr) continue;
    c.identity = identity;
    c.file = interned(text_of(py, identity.file_object));
    c.function = interned(text_of(py, identity.name_object));
    c.code.store(code, std::memory_order_release);
    return &c;
  }
  return nullptr;
}

int add_line(const Interpreter& py, const CodeNames& names, const void* code, int offset) {
  uint64_t tag = static_cast<uint64_t>(offset) + 1;
  int line = py.address_to_line(const_cast<void*>(code), offset);
  uint64_t entry = tag << 32 | static_cast<uint32_t>(line);
  for (auto& slot : names.lines) {
    uint64_t empty = 0;
    if (slot.compare_exchange_strong(empty, entry, std::memory_order_relaxed)) return line;
  }
  names.lines[static_cast<size_t>(offset) % kLinesPerCode].store(entry, std::memory_order_relaxed);  // all taken
  return line;
}

}  // namespace detail

}  // namespace firstassert::python
