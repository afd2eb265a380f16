// Lines of a log, streamed: a log may be several GB, so it is read in fixed chunks and never held whole; a line
// longer than the bound (a progress bar without newlines, a binary dump) is cut, its rest skipped, and reading goes on.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace firstassert::cli::triage {

inline constexpr size_t kMaxLineBytes = size_t{1} << 20;  // 1 MiB

class LineReader {
 public:
  explicit LineReader(std::istream& in, size_t max_line = kMaxLineBytes, size_t chunk = size_t{1} << 18);

  // The next line without its '\n' (valid until the next call); false at the end of the input or on a read error.
  bool next(std::string_view& line);
  // About the line next() returned last: longer than the bound (cut to it), or the last one with no '\n'.
  bool cut() const { return cut_; }
  bool unterminated() const { return unterminated_; }
  // The input failed (an I/O error, not its end).
  bool failed() const { return in_.bad(); }

 private:
  bool refill();
  void append(std::string_view piece);

  std::istream& in_;
  size_t max_line_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  std::string line_;  // a line spanning chunks, assembled here
  bool cut_ = false, unterminated_ = false;
};

}  // namespace firstassert::cli::triage
