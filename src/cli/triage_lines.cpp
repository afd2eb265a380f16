#include "triage_lines.h"

#include <algorithm>
#include <cstring>

namespace firstassert::cli::triage {

LineReader::LineReader(std::istream& in, size_t max_line, size_t chunk)
    : in_(in), max_line_(max_line), buffer_(std::max<size_t>(chunk, 1)) {}

bool LineReader::refill() {
  if (!in_.good()) return false;
  in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  begin_ = 0;
  end_ = static_cast<size_t>(in_.gcount());
  return end_ > 0;
}

// Keeps at most max_line_ bytes of a line; the rest is dropped, not buffered, so memory stays bounded.
void LineReader::append(std::string_view piece) {
  size_t room = max_line_ - std::min(line_.size(), max_line_);
  if (piece.size() > room) cut_ = true;
  line_.append(piece.substr(0, room));
}

bool LineReader::next(std::string_view& line) {
  line_.clear();
  cut_ = unterminated_ = false;
  bool started = false;
  while (true) {
    if (begin_ == end_ && !refill()) {
      // The end: a last line without '\n' (a log cut by a crash or a kill) is still a line.
      if (!started) return false;
      unterminated_ = true;
      line = line_;
      return true;
    }
    started = true;
    const char* data = buffer_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(data, '\n', end_ - begin_));
    size_t length = newline != nullptr ? static_cast<size_t>(newline - data) : end_ - begin_;
    if (newline != nullptr && line_.empty() && !cut_) {
      // The common case, a whole line in the buffer: no copy.
      begin_ += length + 1;
      cut_ = length > max_line_;
      line = std::string_view(data, std::min(length, max_line_));
      return true;
    }
    append(std::string_view(data, length));
    begin_ += length + (newline != nullptr ? 1 : 0);
    if (newline != nullptr) {
      line = line_;
      return true;
    }
  }
}

}  // namespace firstassert::cli::triage
