#include "triage_text.h"

#include <cstdint>
#include <utility>

#include "word_lines.h"

namespace firstassert::cli::triage {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting text[0], 0 if it is not one. Overlong forms, surrogates and code
// points past U+10FFFF are invalid (RFC 3629), so the output decodes the same in every reader.
size_t utf8_sequence(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  if (length == 0 || text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  uint8_t second = byte(1);
  if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
  if (lead == 0xED && second > 0x9F) return 0;  // surrogate
  if (lead == 0xF0 && second < 0x90) return 0;  // overlong
  if (lead == 0xF4 && second > 0x8F) return 0;  // past U+10FFFF
  return length;
}

bool is_control(uint8_t c) { return (c < 0x20 && c != '\t') || c == 0x7F; }

}  // namespace

std::string printable(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) {
      out += "...";
      break;
    }
    std::string_view rest = text.substr(i);
    size_t length = utf8_sequence(rest);
    if (length == 0 || (length == 1 && is_control(static_cast<uint8_t>(rest[0])))) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(rest.substr(0, length));
    i += length;
  }
  return out;
}

std::string_view strip_ansi(std::string_view line, std::string& scratch) {
  if (line.find('\x1b') == std::string_view::npos) return line;
  scratch.clear();
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b' || i + 1 >= line.size() || line[i + 1] != '[') {
      scratch += line[i];
      continue;
    }
    // CSI: ESC [ parameters and intermediates (0x20..0x3F), then one final byte (0x40..0x7E).
    size_t j = i + 2;
    while (j < line.size() && line[j] >= 0x20 && line[j] <= 0x3F) ++j;
    i = j < line.size() && line[j] >= 0x40 && line[j] <= 0x7E ? j : j - 1;
  }
  return scratch;
}

namespace {

// The character a reference at text (after its '&', up to its ';') stands for, or 0 when it is not one we undo:
// the named ones a page escapes in code, and decimal or hex references to ASCII.
char html_character(std::string_view reference) {
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}, {"nbsp", ' '}, {"grave", '`'}};
  for (const auto& [name, c] : kNamed) {
    if (reference == name) return c;
  }
  if (reference.size() < 2 || reference.size() > 6 || reference[0] != '#') return 0;
  bool hex = reference[1] == 'x' || reference[1] == 'X';
  unsigned value = 0;
  std::string_view digits = reference.substr(hex ? 2 : 1);
  if (digits.empty()) return 0;
  for (char c : digits) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) return 0;
    value = value * (hex ? 16 : 10) + static_cast<unsigned>(d);
  }
  return value >= 0x20 && value < 0x7f ? static_cast<char>(value) : 0;
}

}  // namespace

std::string_view unescape_html(std::string_view line, std::string& scratch, bool& undone) {
  undone = false;
  size_t amp = line.find('&');
  if (amp == std::string_view::npos || line.find(';', amp) == std::string_view::npos) return line;
  scratch.clear();
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '&') {
      size_t semi = line.find(';', i + 1);
      if (semi != std::string_view::npos && semi - i <= 8) {
        if (char c = html_character(line.substr(i + 1, semi - i - 1))) {
          scratch += c;
          i = semi;
          undone = true;
          continue;
        }
      }
    }
    scratch += line[i];
  }
  return undone ? std::string_view(scratch) : line;
}

std::string_view strip_emphasis(std::string_view line, std::string& scratch, bool& undone) {
  undone = false;
  if (line.find("**") == std::string_view::npos || line.find("ssertion") == std::string_view::npos) return line;
  scratch.clear();
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '*' && i + 1 < line.size() && line[i + 1] == '*') {
      ++i;
      undone = true;
      continue;
    }
    scratch += line[i];
  }
  return scratch;
}

std::string wrap(std::string_view text, size_t width, std::string_view indent) {
  std::string out;
  for (const std::string& line : word_lines(text, width > indent.size() ? width - indent.size() : 0)) {
    out.append(indent).append(line) += '\n';
  }
  return out;
}

}  // namespace firstassert::cli::triage
