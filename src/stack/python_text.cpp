#include "python_text.h"

#include <cstdint>

namespace firstassert::python {
namespace {

// One code point as UTF-8 (RFC 3629's encoding).
void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

std::string text_of(const Interpreter& py, const void* object) {
  if (!is_a(object, py.str_type)) return "?";
  const PythonLayout& l = *py.layout;
  // PyASCIIObject (Include/cpython/unicodeobject.h): the length, then the state bit-field: interned (2 bits), kind
  // (3: bytes per character), compact, ascii.
  auto length = static_cast<size_t>(at<ptrdiff_t>(object, 16));
  unsigned state = at<unsigned>(object, 32);
  unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (compact == 0 || length > 4096) return "?";
  const char* data = static_cast<const char*>(object) + (ascii != 0 ? l.ascii_header : l.compact_header);
  if (ascii != 0) return std::string(data, length);
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    uint32_t c = kind == 1 ? at<uint8_t>(data, i) : kind == 2 ? at<uint16_t>(data, 2 * i) : at<uint32_t>(data, 4 * i);
    append_utf8(out, c);
  }
  return out;
}

}  // namespace firstassert::python
