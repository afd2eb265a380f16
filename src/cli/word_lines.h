// Text broken into lines between words: the one rule of the command's text output (firstassert show, triage).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace firstassert::cli {

// The words of text (separated by spaces, tabs or newlines) on lines of at most width bytes, one space between
// words; a word longer than width gets a line of its own. Text without words gives no lines.
std::vector<std::string> word_lines(std::string_view text, size_t width);

}  // namespace firstassert::cli
