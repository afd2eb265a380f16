#include "device_assert_line.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace firstassert {
namespace {

constexpr std::string_view kFailed = "` failed";
constexpr std::string_view kAssertionWord = "Assertion ";           // a page may have dropped the backtick after it
constexpr std::string_view kHipAssertion = "Device-side assertion `";  // ROCm's __assert_fail (hip_assert.h)
constexpr std::string_view kHipFailed = "' failed";
constexpr std::string_view kTritonAmd = "device assertion failed: '";  // Triton's AMD back-end (TargetInfo.cpp)
constexpr std::string_view kTritonAmdIn = "', in ";
constexpr std::string_view kAnyAssertion = "ssertion";  // in every record's words: a line without it holds none
constexpr size_t kMaxRecords = 32;      // per line: more is not a driver's output
constexpr size_t kMaxLinkedLine = 4096;  // a line with markdown links is rewritten into a buffer of this size
constexpr size_t kMaxPath = 1024;        // longer is not a source path
constexpr size_t kMaxHead = 8192;        // what a record's head is read from: the text just before its signature

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

void copy_field(std::string_view from, char* to, size_t capacity) {
  size_t n = std::min(from.size(), capacity - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

bool parse_uint(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return false;
  out = static_cast<uint32_t>(value);
  return true;
}

// "x,y,z" (spaces allowed around the numbers, as a page may reflow them) into three numbers.
bool parse_triple(std::string_view text, uint32_t (&out)[3]) {
  for (int i = 0; i < 3; ++i) {
    size_t comma = i < 2 ? text.find(',') : text.size();
    if (comma == std::string_view::npos || !parse_uint(trim(text.substr(0, comma)), out[i])) return false;
    text.remove_prefix(i < 2 ? comma + 1 : comma);
  }
  return text.empty();
}

// Backwards from end (exclusive) over blanks.
size_t skip_blanks_back(std::string_view s, size_t end) {
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t')) --end;
  return end;
}

// A "[x,y,z]" ending at end (exclusive, after blanks): its numbers and where its '[' is; npos when there is none.
size_t triple_before(std::string_view s, size_t end, uint32_t (&out)[3]) {
  end = skip_blanks_back(s, end);
  if (end == 0 || s[end - 1] != ']') return std::string_view::npos;
  size_t limit = end > 48 ? end - 48 : 0;
  for (size_t open = end - 1; open-- > limit;) {
    if (s[open] == '[') return parse_triple(s.substr(open + 1, end - open - 2), out) ? open : std::string_view::npos;
    if (s[open] == ']') return std::string_view::npos;
  }
  return std::string_view::npos;
}

// One of the words (each with its colon) ending at end, after blanks: which one, and where it starts.
int word_before(std::string_view s, size_t end, std::initializer_list<std::string_view> words, size_t& start) {
  end = skip_blanks_back(s, end);
  int index = 0;
  for (std::string_view w : words) {
    if (end >= w.size() && s.substr(end - w.size(), w.size()) == w) {
      start = end - w.size();
      return index;
    }
    ++index;
  }
  return -1;
}

struct Signature {
  size_t start = 0;  // "block" or "global"
  uint32_t block[3] = {}, thread[3] = {};
  DeviceDialect dialect = DeviceDialect::cuda;
};

// The signature that ends right before "Assertion `" at `assertion`: "block: [..], thread: [..] " or SYCL's
// "global id: [..], local id: [..] ".
bool signature_before(std::string_view s, size_t assertion, Signature& sig) {
  size_t thread_open = triple_before(s, assertion, sig.thread);
  if (thread_open == std::string_view::npos) return false;
  size_t word = 0;
  int kind = word_before(s, thread_open, {"thread:", "local id:"}, word);
  if (kind < 0) return false;
  size_t comma = skip_blanks_back(s, word);
  if (comma == 0 || s[comma - 1] != ',') return false;
  size_t block_open = triple_before(s, comma - 1, sig.block);
  if (block_open == std::string_view::npos) return false;
  size_t start = 0;
  if (word_before(s, block_open, {"block:", "global id:"}, start) != kind) return false;
  sig.start = start;
  sig.dialect = kind == 0 ? DeviceDialect::cuda : DeviceDialect::sycl;
  return true;
}

bool has_extension(std::string_view token) {
  size_t dot = token.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= token.size() || token.size() - dot - 1 > 5) return false;
  for (char c : token.substr(dot + 1)) {
    if (!is_alnum(c)) return false;
  }
  for (std::string_view known : {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".py", ".cl",
                                 ".inl", ".inc", ".sycl"}) {
    if (token.substr(dot) == known) return true;
  }
  // Another extension only in a path: "x.y" alone is as likely a number or a version.
  return token.find_first_of("/\\") != std::string_view::npos;
}

// A device source path as the compiler wrote it: one word with a source file's extension, or Triton's "unknown".
bool path_like(std::string_view token) {
  if (token.empty() || token.size() > kMaxPath) return false;
  if (token == "unknown") return true;
  for (char c : token) {
    if (c == '`' || c == '[' || c == ']' || c == '|' || c == '"' || c == '\'' || static_cast<unsigned char>(c) < 0x20)
      return false;
  }
  return has_extension(token);
}

// A Windows drive ("C:\\" or "C:/") at i, not the tail of a longer word.
bool drive_at(std::string_view s, size_t i) {
  return i + 2 < s.size() && is_alnum(s[i]) && s[i + 1] == ':' && (s[i + 2] == '\\' || s[i + 2] == '/') &&
         (i == 0 || !is_alnum(s[i - 1]));
}

// The start of the path that ends at end: back to a blank or a character no path of the driver's holds, then past
// what a log glued onto it ("2.3../aten/..." keeps "../aten/..."); a Windows path may hold blanks after its drive.
size_t path_start(std::string_view head, size_t end) {
  size_t start = end;
  size_t limit = end > kMaxPath ? end - kMaxPath : 0;  // no path is longer: the scan stays linear in the head
  while (start > limit && !is_space(head[start - 1]) &&
         std::string_view("`([{\"'<>|]").find(head[start - 1]) == std::string_view::npos)
    --start;
  // "[rank1]:/pytorch/...", grep -n's "14633:/pytorch/...": a prefix's colon glued to the path is not the path's
  // (a POSIX path holds no colon; a Windows drive's is kept).
  for (size_t i = end; i-- > start;) {
    bool glued = head[i] == ':' && i + 1 < end && (head[i + 1] == '/' || head[i + 1] == '.');
    if (glued && !(i > start && drive_at(head, i - 1))) {
      start = i + 1;
      break;
    }
  }
  std::string_view token = head.substr(start, end - start);
  size_t dots = token.find("../");
  if (dots != std::string_view::npos && dots > 0) return start + dots;
  // A drive ("C:\" or "C:/") inside the word: the path starts there.
  for (size_t i = start; i + 2 < end; ++i) {
    if (drive_at(head, i)) return i;
  }
  if (token.starts_with('/') || token.starts_with("./") || token.starts_with("../")) return start;
  // A fragment: a Windows path may hold blanks after its drive, further left.
  for (size_t i = start; i-- > 0 && start - i < 256;) {
    if (i + 2 < end && drive_at(head, i) && head.substr(i, end - i).find('`') == std::string_view::npos) return i;
  }
  // A POSIX path with blanks in it (Colab's "/content/drive/My Drive/..."): up to four words back to one that starts
  // with '/', taken only when such a start is found (so "step 5 at ext/box.cu" keeps "ext/box.cu").
  if (token.find('/') != std::string_view::npos) {
    size_t word_end = start;
    for (int words = 0; words < 4 && word_end > 1 && head[word_end - 1] == ' ' && !is_space(head[word_end - 2]);
         ++words) {
      size_t word_start = word_end - 1;
      while (word_start > 0 && !is_space(head[word_start - 1]) && start - word_start < 256) --word_start;
      std::string_view word = head.substr(word_start, word_end - 1 - word_start);
      if (word.find_first_of("`[]()|\"':") != std::string_view::npos) break;
      if (word.starts_with('/')) return word_start;
      word_end = word_start;
    }
  }
  return start;
}

// A function as nvcc prints it: a name, or a whole signature ("void k<T>(T *, int) [with T = float]").
bool function_like(std::string_view f) {
  if (f.empty() || f.size() > 4096) return false;
  if (f.find('`') != std::string_view::npos || f.find("Assertion") != std::string_view::npos ||
      f.find("block: [") != std::string_view::npos || f.find("thread: [") != std::string_view::npos ||
      f.find(": ") != std::string_view::npos)
    return false;
  for (char c : f) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return is_alnum(f.front()) || f.front() == '_' || f.front() == '~' || f.front() == '(' ||
         static_cast<unsigned char>(f.front()) >= 0x80;
}

struct Location {
  size_t file = std::string_view::npos;  // where the path starts; npos: no location whose path is a path
  size_t colon = 0, digits_end = 0;      // ":<line>" and what follows it
  uint32_t line = 0;
  size_t lookalike_end = std::string_view::npos;  // after the last ":<digits>" whose path was not one
};

// The first "<path>:<digits>" followed by ':' or the end of text.
Location find_location(std::string_view text) {
  Location at;
  for (size_t colon = text.find(':'); colon != std::string_view::npos; colon = text.find(':', colon + 1)) {
    size_t digits_end = colon + 1;
    while (digits_end < text.size() && is_digit(text[digits_end])) ++digits_end;
    if (digits_end == colon + 1 || (digits_end < text.size() && text[digits_end] != ':')) continue;
    uint32_t line = 0;
    if (!parse_uint(text.substr(colon + 1, digits_end - colon - 1), line)) continue;
    size_t start = path_start(text, colon);
    if (!path_like(text.substr(start, colon - start))) {
      at.lookalike_end = digits_end;
      continue;
    }
    at.file = start;
    at.colon = colon;
    at.digits_end = digits_end;
    at.line = line;
    return at;
  }
  return at;
}

// "<file>:<line>: <function>: " or "<file>:<line>: " before the signature.
void parse_head(std::string_view head, DeviceMessage& m) {
  if (head.size() > kMaxHead) head.remove_prefix(head.size() - kMaxHead);
  head = trim(head);
  if (head.ends_with(':')) head.remove_suffix(1);
  head = trim(head);
  if (head.empty()) {
    m.flags |= kMessageNoLocation | kMessageNoFunction;
    return;
  }
  // The location is the last "<path>:<line>" whose remainder is a function (or nothing): text a log glued before
  // the driver's line may hold a location of its own ("train.py:12: UserWarning: ...").
  Location at = find_location(head), chosen;
  for (size_t offset = 0; at.file != std::string_view::npos;) {
    std::string_view rest = trim(head.substr(std::min(offset + at.digits_end + 1, head.size())));
    if (rest.empty() || function_like(rest) || chosen.file == std::string_view::npos) {
      chosen = at;
      chosen.file += offset;
      chosen.colon += offset;
      chosen.digits_end += offset;
    }
    offset += at.digits_end;
    at = find_location(head.substr(offset));
  }
  if (chosen.file != std::string_view::npos) {
    copy_field(head.substr(chosen.file, chosen.colon - chosen.file), m.file, sizeof m.file);
    m.line = chosen.line;
    std::string_view function = trim(head.substr(std::min(chosen.digits_end + 1, head.size())));
    if (function.empty()) {
      m.flags |= kMessageNoFunction;
    } else if (function_like(function)) {
      copy_field(function, m.function, sizeof m.function);
    } else {
      m.flags |= kMessageNoFunction | kMessageGarbled;
    }
    return;
  }
  if (path_like(head)) {  // a file, its line number lost
    copy_field(head, m.file, sizeof m.file);
    m.flags |= kMessageNoLocation | kMessageNoFunction;
    return;
  }
  m.flags |= kMessageNoLocation;
  // No trustworthy location: what follows a "file:line" lookalike (or the whole head, when there is none) may still be
  // the function, if it looks like one; a spliced path is never taken for a file.
  std::string_view function = at.lookalike_end != std::string_view::npos
                                  ? trim(head.substr(std::min(at.lookalike_end + 1, head.size())))
                                  : head;
  if (at.lookalike_end != std::string_view::npos) m.flags |= kMessageGarbled;
  if (function_like(function)) {
    copy_field(function, m.function, sizeof m.function);
  } else {
    m.flags |= kMessageNoFunction | kMessageGarbled;
  }
}

// "[text](target)" as markdown writes a link: the text. Done into buffer when the line holds such a link.
std::string_view without_links(std::string_view line, char (&buffer)[kMaxLinkedLine]) {
  if (line.find("](") == std::string_view::npos || line.size() > sizeof buffer) return line;
  size_t used = 0;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '[') {
      size_t close = line.find("](", i);
      size_t end = close == std::string_view::npos ? close : line.find(')', close + 2);
      std::string_view text = close == std::string_view::npos ? std::string_view() : line.substr(i + 1, close - i - 1);
      std::string_view target = end == std::string_view::npos ? std::string_view()
                                                              : line.substr(close + 2, end - close - 2);
      // Only a link a renderer made: a URL or a file target ("f[0](i)" in a condition is code, not a link).
      bool link = target.find("://") != std::string_view::npos || target.starts_with("file:") ||
                  target.find("#line=") != std::string_view::npos || target.find("#L") != std::string_view::npos;
      if (end != std::string_view::npos && link && text.find_first_of("[]") == std::string_view::npos &&
          target.find_first_of(" \t") == std::string_view::npos) {
        std::memcpy(buffer + used, text.data(), text.size());
        used += text.size();
        i = end + 1;
        continue;
      }
    }
    buffer[used++] = line[i++];
  }
  return std::string_view(buffer, used);
}

}  // namespace

size_t find_device_assert_signature(std::string_view line, size_t from) {
  size_t best = std::string_view::npos;
  for (std::string_view word : {"block: [", "global id: ["}) best = std::min(best, line.find(word, from));
  return best;
}

namespace {

size_t parse_records(std::string_view line, DeviceMessage* out, size_t capacity);

// A line a renderer put links in is rewritten first; the buffer is on this frame only, off the common path (the live
// shim parses inside the program's writes, perhaps on a signal's small stack).
__attribute__((noinline)) size_t parse_linked(std::string_view raw, DeviceMessage* out, size_t capacity) {
  char buffer[kMaxLinkedLine];
  return parse_records(without_links(raw, buffer), out, capacity);
}

}  // namespace

size_t parse_device_asserts(std::string_view raw, DeviceMessage* out, size_t capacity) {
  if (raw.find(kAnyAssertion) == std::string_view::npos) return 0;
  if (raw.find("](") != std::string_view::npos && raw.size() <= kMaxLinkedLine) return parse_linked(raw, out, capacity);
  return parse_records(raw, out, capacity);
}

namespace {

// A record's start in the line: where its head ends (its signature begins), where its condition begins, and what
// ends the condition.
struct Found {
  size_t start = 0;
  size_t condition = 0;
  std::string_view closer;
  Signature sig;
  bool unquoted = false;
  bool triton_amd = false;
};

// Every record of the line, in order: "Assertion " after a CUDA or SYCL signature (with the backtick, with a quote
// a page put instead, or with none), HIP's "Device-side assertion `", Triton-on-AMD's "device assertion failed: '".
size_t find_records(std::string_view line, Found (&found)[kMaxRecords]) {
  size_t n = 0;
  size_t a = line.find(kAssertionWord), h = line.find(kHipAssertion), t = line.find(kTritonAmd);
  while (n < kMaxRecords && (a != std::string_view::npos || h != std::string_view::npos || t != std::string_view::npos)) {
    size_t next = std::min({a, h, t});
    Found f;
    if (next == a) {
      a = line.find(kAssertionWord, a + 1);
      if (!signature_before(line, next, f.sig)) continue;
      f.start = f.sig.start;
      f.condition = next + kAssertionWord.size();
      char quote = f.condition < line.size() ? line[f.condition] : '\0';
      if (quote == '`') {
        f.closer = kFailed;
        ++f.condition;
      } else if (quote == '\'' || quote == '"') {
        f.closer = quote == '\'' ? std::string_view("' failed") : std::string_view("\" failed");
        ++f.condition;
        f.unquoted = true;
      } else {
        f.closer = " failed";
        f.unquoted = true;
      }
    } else if (next == h) {
      h = line.find(kHipAssertion, h + 1);
      f.start = next;
      f.condition = next + kHipAssertion.size();
      f.closer = kHipFailed;
      f.sig.dialect = DeviceDialect::hip;
    } else {
      t = line.find(kTritonAmd, t + 1);
      f.start = next;
      f.condition = next + kTritonAmd.size();
      f.closer = kTritonAmdIn;
      f.sig.dialect = DeviceDialect::hip;
      f.triton_amd = true;
    }
    found[n++] = f;
  }
  return n;
}

// Triton-on-AMD's record, after its message: ", in <function> at <file>:<line>" up to the end of the line's text.
void parse_triton_amd_tail(std::string_view tail, DeviceMessage& m) {
  tail = trim(tail);
  size_t at = tail.rfind(" at ");
  if (at == std::string_view::npos) {
    m.flags |= kMessageNoLocation | kMessageNoFunction;
    return;
  }
  std::string_view function = trim(tail.substr(0, at)), where = trim(tail.substr(at + 4));
  if (function_like(function)) {
    copy_field(function, m.function, sizeof m.function);
  } else {
    m.flags |= kMessageNoFunction;
  }
  size_t colon = where.rfind(':');
  uint32_t number = 0;
  if (colon != std::string_view::npos && parse_uint(where.substr(colon + 1), number) &&
      path_like(where.substr(0, colon))) {
    copy_field(where.substr(0, colon), m.file, sizeof m.file);
    m.line = number;
  } else {
    m.flags |= kMessageNoLocation;
  }
}

size_t parse_records(std::string_view line, DeviceMessage* out, size_t capacity) {
  Found found[kMaxRecords];
  size_t n = find_records(line, found);
  size_t floor = 0;  // where the text of the record being read may begin: after the previous one
  for (size_t i = 0; i < n; ++i) {
    DeviceMessage m;
    const Found& f = found[i];
    std::memcpy(m.block, f.sig.block, sizeof m.block);
    std::memcpy(m.thread, f.sig.thread, sizeof m.thread);
    m.dialect = f.sig.dialect;
    if (m.dialect == DeviceDialect::hip) m.flags |= kMessageNoPosition;
    if (f.unquoted) m.flags |= kMessageUnquoted;
    size_t next = i + 1 < n ? found[i + 1].start : line.size();
    // The condition runs to the first closer before the next record: no condition holds "` failed" (one may hold a
    // backtick). Another closer after it, before the next record, is a spliced line's tail.
    size_t failed = line.find(f.closer, f.condition);
    if (failed != std::string_view::npos && failed >= next) failed = std::string_view::npos;
    size_t end;
    if (failed == std::string_view::npos) {
      m.flags |= kMessageConditionCut;
      // Cut: up to the next record's head (its path), or the end of the line.
      size_t stop = next;
      if (i + 1 < n) {
        Location at = find_location(line.substr(f.condition, next - f.condition));
        if (at.file != std::string_view::npos) stop = f.condition + at.file;
      }
      copy_field(trim(line.substr(f.condition, stop - f.condition)), m.condition, sizeof m.condition);
      end = stop;
    } else {
      copy_field(line.substr(f.condition, failed - f.condition), m.condition, sizeof m.condition);
      end = failed + f.closer.size();
      if (f.triton_amd) {
        // The location follows the message: the record runs to the end of the line, or to the next record.
        parse_triton_amd_tail(line.substr(end, next - end), m);
        end = next;
      } else if (end < line.size() && line[end] == '.') {
        ++end;
      }
      if (line.substr(end, next - end).find(f.closer) != std::string_view::npos) m.flags |= kMessageGarbled;
    }
    std::string_view condition_text(m.condition);
    // Another record's signature inside the condition: lines spliced together, not a condition anyone wrote.
    if (find_device_assert_signature(condition_text) != std::string_view::npos) m.flags |= kMessageGarbled;
    if (!f.triton_amd) parse_head(line.substr(floor, f.start - floor), m);
    floor = end;
    if (i < capacity) out[i] = m;
  }
  return n;
}

}  // namespace

size_t find_last_device_assert_signature(std::string_view line) {
  size_t block = line.rfind("block: ["), global = line.rfind("global id: [");
  if (block == std::string_view::npos) return global;
  if (global == std::string_view::npos) return block;
  return std::max(block, global);
}

bool device_assert_incomplete(std::string_view text) {
  size_t last = find_last_device_assert_signature(text);
  if (last == std::string_view::npos) return false;
  size_t assertion = text.find(kAssertionWord, last);
  if (assertion == std::string_view::npos) return true;
  size_t condition = assertion + kAssertionWord.size();
  if (condition < text.size() && text[condition] == '`') return text.find(kFailed, condition) == std::string_view::npos;
  return text.find(" failed", condition) == std::string_view::npos &&
         text.find("' failed", condition) == std::string_view::npos;  // a condition whose backticks a page dropped
}

bool ends_like_device_assert_head(std::string_view text) {
  if (text.size() > kMaxHead) text.remove_prefix(text.size() - kMaxHead);
  text = trim(text);
  if (text.empty() || find_device_assert_signature(text) != std::string_view::npos) return false;
  // A head whose signature was wrapped right after its first word ("...py:37: unknown: block:").
  for (std::string_view word : {"block:", "global id:"}) {
    if (text.ends_with(word)) {
      text = trim(text.substr(0, text.size() - word.size()));
      break;
    }
  }
  if (text.ends_with(':')) text.remove_suffix(1);
  Location at = find_location(text);
  if (at.file == std::string_view::npos) return false;
  // The last location of the text, with nothing after it but (the start of) a function.
  for (size_t offset = at.digits_end;;) {
    Location later = find_location(text.substr(offset));
    if (later.file == std::string_view::npos) break;
    at = later;
    at.digits_end += offset;
    offset = at.digits_end;
  }
  std::string_view rest = trim(text.substr(std::min(at.digits_end + 1, text.size())));
  return rest.empty() || function_like(rest);
}

bool parse_device_assert(std::string_view line, DeviceMessage& out) {
  DeviceMessage first;
  if (parse_device_asserts(line, &first, 1) == 0) return false;
  out = first;
  return true;
}

}  // namespace firstassert
