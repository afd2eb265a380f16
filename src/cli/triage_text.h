// Text helpers for `firstassert triage`: logs are arbitrary bytes (other encodings, binary junk, colour codes, a
// line cut by a crash), the summary must be valid UTF-8 plain text that golden files can compare exactly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace firstassert::cli::triage {

// The text with every byte that is not part of valid UTF-8, and every control character but tab, replaced by
// U+FFFD, cut (on a character boundary, marked with "...") after max_bytes of input.
std::string printable(std::string_view text, size_t max_bytes = 1000);

// The text without the blanks and tabs it starts with.
inline std::string_view trim_left(std::string_view s) {
  size_t start = s.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view() : s.substr(start);
}

// The line without ANSI escape sequences (a coloured logger's "\x1b[31m"). scratch holds the copy when one is needed;
// the result views either the line or scratch.
std::string_view strip_ansi(std::string_view line, std::string& scratch);

// The line with the HTML character references a web page's copy leaves in a log (&lt; &gt; &amp; &quot; &#39;,
// numeric ones such as &#96; for a backtick) turned back into their characters. scratch holds the copy when one is
// needed; the result views either the line or scratch; `undone` says whether any was.
std::string_view unescape_html(std::string_view line, std::string& scratch, bool& undone);

// A device assertion line without the markdown emphasis a page rendered into it ("Assertion **`cond` failed**"):
// every "**" of a line that holds an assertion's words (no condition PyTorch asserts holds one). Same contract.
std::string_view strip_emphasis(std::string_view line, std::string& scratch, bool& undone);

// word_lines(text) on lines of at most width bytes counting indent, each prefixed by indent and ended by '\n'.
std::string wrap(std::string_view text, size_t width, std::string_view indent);

}  // namespace firstassert::cli::triage
