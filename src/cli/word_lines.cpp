#include "word_lines.h"

namespace firstassert::cli {

std::vector<std::string> word_lines(std::string_view text, size_t width) {
  constexpr std::string_view kSpaces = " \t\n\r";
  std::vector<std::string> lines;
  std::string line;
  size_t start = text.find_first_not_of(kSpaces);
  while (start != std::string_view::npos) {
    size_t end = text.find_first_of(kSpaces, start);
    std::string_view word = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line.append(word);
    start = end == std::string_view::npos ? end : text.find_first_not_of(kSpaces, end);
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

}  // namespace firstassert::cli
