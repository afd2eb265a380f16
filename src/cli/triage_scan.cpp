#include "triage_scan.h"

#include <algorithm>

#include "core/cuda_errors.h"
#include "core/device_assert_line.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

constexpr std::string_view kTracebackHeader = "Traceback (most recent call last):";
constexpr std::string_view kWatchdogTimeout = "Watchdog caught collective operation timeout";
// How a CUDA error is named: PyTorch's c10 message ("CUDA error: device-side assert triggered") and NCCL's warning
// ("Cuda failure 'device-side assert triggered'").
// ROCm's PyTorch says "HIP error: " where CUDA's says "CUDA error: "; ROCm's runtime aborts a queue whose kernel
// trapped (a failed assert among other faults) with HSA_STATUS_ERROR_EXCEPTION (rocclr's rocdevice.cpp).
constexpr std::string_view kCudaErrorMarkers[] = {"CUDA error: ", "Cuda failure '", "HIP error: ",
                                                  "HSA_STATUS_ERROR_EXCEPTION"};
// Ranks past this are not a launcher's prefix but text that happens to look like one.
constexpr size_t kMaxRankDigits = 6;
// Lines kept for the summary are cut here: enough for any real exception line, and memory stays small.
constexpr size_t kMaxKeptBytes = 4096;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view ltrim(std::string_view s) {
  size_t start = s.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view() : s.substr(start);
}

// Digits at the start of s: their value and count (0 when none, or too many to be a rank).
std::pair<int, size_t> leading_number(std::string_view s) {
  size_t n = 0;
  int value = 0;
  while (n < s.size() && is_digit(s[n]) && n <= kMaxRankDigits) value = value * 10 + (s[n++] - '0');
  if (n > kMaxRankDigits) return {0, 0};
  return {value, n};
}

// srun --label: the task id, right-aligned with spaces, then ": ".
bool strip_srun_label(std::string_view& s, int& rank) {
  size_t spaces = s.find_first_not_of(' ');
  if (spaces == std::string_view::npos) return false;
  auto [value, digits] = leading_number(s.substr(spaces));
  size_t colon = spaces + digits;
  if (digits == 0 || colon >= s.size() || s[colon] != ':') return false;
  if (colon + 1 < s.size() && s[colon + 1] != ' ') return false;  // "10:30:00" is a time, not a label
  rank = value;
  s.remove_prefix(std::min(colon + 2, s.size()));
  return true;
}

// torchrun: "[rank3]:" (global rank) or "[default3]:" (role and local rank, from --tee / --redirects).
bool strip_torchrun_prefix(std::string_view& s, int& rank) {
  for (std::string_view open : {"[rank", "[default"}) {
    if (!s.starts_with(open)) continue;
    auto [value, digits] = leading_number(s.substr(open.size()));
    size_t close = open.size() + digits;
    if (digits == 0 || s.substr(close, 2) != "]:") return false;
    rank = value;
    s.remove_prefix(close + 2);
    if (s.starts_with(' ')) s.remove_prefix(1);
    return true;
  }
  return false;
}

// Where a torchrun prefix ("[rank3]:", "[default3]:") starts inside the text, after its first byte: another
// process's output spliced into this line; npos when there is none.
size_t inline_rank_prefix(std::string_view s) {
  for (size_t at = s.find('[', 1); at != std::string_view::npos; at = s.find('[', at + 1)) {
    std::string_view rest = s.substr(at);
    int rank = kNoRank;
    if ((rest.starts_with("[rank") || rest.starts_with("[default")) && strip_torchrun_prefix(rest, rank)) return at;
  }
  return std::string_view::npos;
}

// mpirun --tag-output (Horovod, Open MPI): "[1,3]<stderr>:" (job, rank) before each line.
bool strip_mpirun_tag(std::string_view& s, int& rank) {
  if (!s.starts_with('[')) return false;
  auto [job, job_digits] = leading_number(s.substr(1));
  if (job_digits == 0 || s.substr(1 + job_digits, 1) != ",") return false;
  size_t at = 2 + job_digits;
  auto [value, digits] = leading_number(s.substr(at));
  at += digits;
  if (digits == 0 || s.substr(at, 1) != "]") return false;
  std::string_view rest = s.substr(at + 1);
  for (std::string_view stream : {"<stderr>:", "<stdout>:", "<stddiag>:"}) {
    if (rest.starts_with(stream)) {
      rank = value;
      s = rest.substr(stream.size());
      return true;
    }
  }
  (void)job;
  return false;
}

// A Jupyter server's record prefix "[I 2024-05-01 10:00:00.123 ServerApp] ": the kernel's stderr (where the driver
// prints its assertion lines) reaches the server's log, mixed with the server's own records.
bool strip_jupyter_prefix(std::string_view& s) {
  if (s.size() < 5 || s[0] != '[' || std::string_view("DIWEC").find(s[1]) == std::string_view::npos || s[2] != ' ' ||
      !is_digit(s[3]))
    return false;
  size_t close = s.substr(0, 96).find("] ");
  if (close == std::string_view::npos) return false;
  s.remove_prefix(close + 2);
  return true;
}

// A tab-separated "<time>\t<LEVEL>\t<message>" record (a runtime log exported from a notebook service).
bool strip_tabbed_record(std::string_view& s) {
  size_t first = s.substr(0, 64).find('\t');
  if (first == std::string_view::npos) return false;
  size_t second = s.find('\t', first + 1);
  if (second == std::string_view::npos) return false;
  std::string_view level = s.substr(first + 1, second - first - 1);
  for (std::string_view known : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"}) {
    if (level == known) {
      s.remove_prefix(second + 1);
      return true;
    }
  }
  return false;
}

// Ray's "(RayTrainWorker pid=1234, ip=10.0.0.7) " before a worker's line: a process, not a rank.
bool strip_ray_prefix(std::string_view& s) {
  if (!s.starts_with('(')) return false;
  size_t close = s.substr(0, 160).find(") ");
  if (close == std::string_view::npos) return false;
  std::string_view inside = s.substr(1, close - 1);
  if (inside.find("pid=") == std::string_view::npos || inside.find_first_of("()") != std::string_view::npos)
    return false;
  s.remove_prefix(close + 2);
  return true;
}

bool is_time_at(std::string_view s, size_t at) {  // "HH:MM:SS" or "H:MM:SS"
  size_t i = at;
  while (i < s.size() && is_digit(s[i]) && i - at < 2) ++i;
  return i > at && s.substr(i, 1) == ":" && s.size() >= i + 6 && is_digit(s[i + 1]) && is_digit(s[i + 2]) &&
         s[i + 3] == ':' && is_digit(s[i + 4]) && is_digit(s[i + 5]);
}

// A logger's time stamp at the start: "2024-05-01 10:00:00,123 ", "2024-05-01T10:00:00.123Z ", "[2024-05-01
// 10:00:00] ", "10:00:00.123 " (and a level after it: "INFO ", "ERROR:", "W0501 " as glog writes it).
bool strip_timestamp(std::string_view& s) {
  std::string_view t = s;
  bool bracket = t.starts_with('[');
  if (bracket) t.remove_prefix(1);
  size_t at = 0;
  if (t.size() >= 10 && is_digit(t[0]) && is_digit(t[1]) && is_digit(t[2]) && is_digit(t[3]) && t[4] == '-' &&
      is_digit(t[5]) && is_digit(t[6]) && t[7] == '-' && is_digit(t[8]) && is_digit(t[9])) {
    at = 10;
    if (at < t.size() && (t[at] == ' ' || t[at] == 'T')) ++at;
  }
  if (!is_time_at(t, at)) return false;
  size_t end = t.find_first_of(" ]", at);
  if (end == std::string_view::npos) return false;
  if (bracket) {
    end = t.find(']', at);
    if (end == std::string_view::npos || end > at + 40) return false;
    ++end;
  }
  t.remove_prefix(end);
  t = ltrim(t);
  s = t;
  return true;
}

// A log record's level, and with it vLLM's "ERROR 05-12 10:11:12 [core.py:291] " and Python logging's "ERROR:root:".
bool strip_level(std::string_view& s) {
  for (std::string_view level : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"}) {
    if (!s.starts_with(level) || s.size() <= level.size()) continue;
    std::string_view rest = s.substr(level.size());
    size_t logger_end = rest.starts_with(":") ? rest.find(':', 1) : std::string_view::npos;
    std::string_view logger = logger_end == std::string_view::npos ? std::string_view() : rest.substr(1, logger_end - 1);
    if (!logger.empty() && logger_end < 40 && logger.find_first_of(" \t/\\") == std::string_view::npos) {
      rest.remove_prefix(logger_end + 1);  // ERROR:root: (a logger's name, never a path or words)
    } else if (rest.starts_with(' ')) {
      rest = ltrim(rest);
      // vLLM: a month-day date and a time, then the source location in brackets.
      if (rest.size() > 5 && is_digit(rest[0]) && is_digit(rest[1]) && rest[2] == '-' && is_digit(rest[3]) &&
          is_digit(rest[4]) && rest[5] == ' ')
        rest.remove_prefix(6);
      if (!is_time_at(rest, 0)) return false;
      rest.remove_prefix(std::min(rest.size(), rest.find(' ') == std::string_view::npos ? rest.size() : rest.find(' ')));
      rest = ltrim(rest);
      if (rest.starts_with('[') && rest.find("] ") != std::string_view::npos && rest.find("] ") < 80)
        rest.remove_prefix(rest.find("] ") + 2);
    } else {
      return false;
    }
    s = rest;
    return true;
  }
  return false;
}

size_t find_cuda_error_marker(std::string_view text) {
  size_t best = std::string_view::npos;
  for (std::string_view marker : kCudaErrorMarkers) best = std::min(best, text.find(marker));
  return best;
}

bool names_cuda_error(std::string_view text) { return find_cuda_error_marker(text) != std::string_view::npos; }

// Python prints an exception line at column 0; frames, source lines and carets are indented.
bool is_traceback_body(std::string_view text) {
  return text.starts_with(' ') || text.starts_with('\t') || text.starts_with("[Previous line repeated");
}

}  // namespace

PrefixedLine strip_prefixes(std::string_view line) {
  PrefixedLine out;
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // A log quoted in markdown or an e-mail ("> " before each line).
  while (line.starts_with("> ") || line == ">") line.remove_prefix(std::min<size_t>(2, line.size()));
  strip_srun_label(line, out.rank);
  if (!strip_mpirun_tag(line, out.rank)) strip_torchrun_prefix(line, out.rank);
  // What a log server or a logger puts before the text, in the orders they stack; none of it is a rank.
  // Each kind is told by its first character, so that the common line (none of them) costs a few compares.
  for (int i = 0; i < 4 && !line.empty(); ++i) {
    char c = line.front();
    bool stripped = false;
    if (c == '[') stripped = strip_jupyter_prefix(line) || strip_timestamp(line);
    else if (c == '(') stripped = strip_ray_prefix(line);
    else if (is_digit(c)) stripped = strip_timestamp(line) || strip_tabbed_record(line);
    else if (c == 'D' || c == 'I' || c == 'W' || c == 'E' || c == 'C') stripped = strip_level(line);
    if (!stripped && line.size() > 1) stripped = strip_tabbed_record(line);
    if (!stripped) break;
  }
  if (out.rank == kNoRank) strip_torchrun_prefix(line, out.rank);  // inside a worker's or a logger's prefix
  out.full = line;
  // A terminal shows only what follows the last carriage return (a progress bar redrawn, then the real line).
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
  out.text = line;
  return out;
}

int cuda_error_code(std::string_view text) {
  size_t marker = find_cuda_error_marker(text);
  if (marker == std::string_view::npos) return 0;
  std::string_view rest = text.substr(text.find_first_of(":'", marker) + 1);
  rest = ltrim(rest);
  // The codes a message of this kind names, the sticky ones first; descriptions come from the shared table.
  for (int code : {710, 700, 702, 714, 715, 716, 717, 718, 719, 226, 721, 701, 9, 98, 2, 1, 3, 100, 201, 400, 999}) {
    const char* description = error_description(code);
    if (description != nullptr && rest.starts_with(description)) return code;
  }
  return 0;
}

void Scanner::begin_log(std::string name) {
  findings_.logs.push_back(LogInfo{std::move(name)});
  position_ = Position{findings_.logs.size() - 1, 0};
  pending_.clear();
  wrapped_.reset();  // the previous log's (its end_log has flushed it)
  previous_[0].usable = previous_[1].usable = false;
}

void Scanner::end_log(bool unterminated) {
  flush_wrapped();
  while (!pending_.empty()) finish(pending_.begin()->first);
  if (!findings_.logs.empty()) findings_.logs.back().unterminated = unterminated;
}

void Scanner::line(std::string_view raw, bool cut, bool part_of_last) {
  LogInfo& log = findings_.logs.back();
  if (!part_of_last || position_.line == 0) {
    ++position_.line;
    log.lines = position_.line;
    if (cut) ++log.cut_lines;
  }
  bool unescaped = false, unmarked = false;
  PrefixedLine l = strip_prefixes(
      strip_emphasis(unescape_html(strip_ansi(raw, scratch_), unescaped_, unescaped), unmarked_, unmarked));
  if (unescaped) ++findings_.html_unescaped_lines;
  if (unmarked) ++findings_.emphasis_lines;
  if (l.rank != kNoRank) {
    findings_.any_rank = true;
    counts(l.rank);  // listed even if it printed nothing of note: a quiet rank is information too
  }
  // The driver prints its lines between a program's lines, never inside a traceback. Another process's line may
  // have been spliced into this one, with its own launcher prefix: each piece is read with its own rank.
  if (inline_rank_prefix(l.full) != std::string_view::npos) {
    bool any = false;
    std::string_view rest = l.full;
    int rank = l.rank;
    while (true) {
      size_t at = inline_rank_prefix(rest);
      any |= on_assertion_text(rest.substr(0, at), rank, raw.size());
      if (at == std::string_view::npos) break;
      rest.remove_prefix(at);
      strip_torchrun_prefix(rest, rank);
      if (rank != kNoRank) counts(rank);
    }
    if (any) {
      previous_[0].usable = previous_[1].usable = false;
      return;
    }
  } else if (on_assertion_text(l.full, l.rank, raw.size())) {
    previous_[0].usable = previous_[1].usable = false;
    return;
  }
  // The two lines before, newest first.
  std::swap(previous_[0], previous_[1]);
  Previous& last = previous_[0];
  last.usable = l.full.size() <= kMaxKeptBytes;
  if (last.usable) {
    last.text.assign(l.full);
    last.rank = l.rank;
    last.at = position_;
    last.width = raw.size();
  }
  if (!on_traceback_line(l.text, l.rank)) on_other_line(l.text, l.rank);
}

namespace {

// The widths terminals wrap at: a wrapped piece of one of these lengths was cut mid-word, with nothing lost; any
// other break (a web page's reflow, an editor's) replaced a blank.
bool terminal_width(size_t width) {
  for (size_t w : {80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256}) {
    if (width == w) return true;
  }
  return false;
}

std::string joined(std::string_view first, size_t first_width, std::string_view rest) {
  std::string out(first);
  if (!first.ends_with(' ') && !rest.starts_with(' ') && !terminal_width(first_width)) out += ' ';
  out += rest;
  return out;
}

// The rest of a record wrapped onto this line: text that finishes what the record lacks ("Assertion `" after a
// signature cut short, "` failed" after a condition), before any record of its own. A line without either is not
// taken: a record left incomplete by a cut log must not swallow the lines after it.
bool continues_record(std::string_view pending, std::string_view text) {
  size_t own = find_device_assert_signature(text);
  size_t last_signature = find_last_device_assert_signature(pending);
  bool needs_assertion = pending.find("Assertion `", last_signature == std::string_view::npos ? 0 : last_signature) ==
                         std::string_view::npos;
  size_t wanted = text.find(needs_assertion ? "Assertion `" : "` failed");
  return wanted != std::string_view::npos && (own == std::string_view::npos || wanted < own);
}

}  // namespace

void Scanner::flush_wrapped() {
  if (!wrapped_) return;
  Wrapped w = std::move(*wrapped_);
  wrapped_.reset();
  take_assertions(w.text, w.rank, w.at, w.pieces);
}

// A record may be wrapped onto up to three lines (a terminal, a web page): its start waits for its rest, and a line
// that only continues a record finds its start on the line before.
bool Scanner::on_assertion_text(std::string_view text, int rank, size_t width) {
  constexpr int kMaxPieces = 3;
  if (wrapped_) {
    if (wrapped_->rank == rank && continues_record(wrapped_->text, text) &&
        wrapped_->text.size() + text.size() <= 2 * kMaxKeptBytes) {
      wrapped_->text = joined(wrapped_->text, wrapped_->width, text);
      wrapped_->width = width;
      if (++wrapped_->pieces >= kMaxPieces || !device_assert_incomplete(wrapped_->text)) flush_wrapped();
      return true;
    }
    flush_wrapped();
  }
  bool has_record = text.find("ssertion") != std::string_view::npos ||
                    find_device_assert_signature(text) != std::string_view::npos;
  if (!has_record) return false;
  // A record whose start is on the line or two before (a long signature wrapped by a terminal).
  size_t n = parse_records(text);
  if (n == 0 || records_[0].has(kMessageNoLocation)) {
    for (int back = 1; back <= 2; ++back) {
      const Previous& start = previous_[back - 1];
      if (!start.usable || start.rank != rank) break;
      std::string whole = start.text;
      size_t width = start.width;
      for (int i = back - 1; i > 0; --i) {
        whole = joined(whole, width, previous_[i - 1].text);
        width = previous_[i - 1].width;
      }
      if (!ends_like_device_assert_head(whole)) continue;
      whole = joined(whole, width, text);
      DeviceMessage rejoined;
      if (parse_device_asserts(whole, &rejoined, 1) == 0 || rejoined.has(kMessageNoLocation)) continue;
      if (device_assert_incomplete(whole)) {
        wrapped_ = Wrapped{std::move(whole), rank, start.at, width, back + 1};
        return true;
      }
      return take_assertions(whole, rank, start.at, back + 1);
    }
  }
  if (text.size() <= kMaxKeptBytes && device_assert_incomplete(text)) {
    wrapped_ = Wrapped{std::string(text), rank, position_, width, 1};
    return true;
  }
  if (n == 0) return false;
  take_records(n, rank, position_, 1);
  return true;
}

size_t Scanner::parse_records(std::string_view text) {
  return std::min(parse_device_asserts(text, records_.data(), records_.size()), records_.size());
}

bool Scanner::take_assertions(std::string_view text, int rank, const Position& at, int pieces) {
  size_t n = parse_records(text);
  if (n == 0) return false;
  take_records(n, rank, at, pieces);
  return true;
}

void Scanner::take_records(size_t n, int rank, const Position& at, int pieces) {
  if (pieces > 1) findings_.reassembled_lines += n;
  for (size_t i = 0; i < n; ++i) {
    const DeviceMessage& m = records_[i];
    std::string_view file = m.file;
    ++findings_.assertion_lines;
    if (m.has(kMessageGarbled)) ++findings_.garbled_lines;
    if (m.has(kMessageConditionCut)) ++findings_.cut_conditions;
    if (m.has(kMessageUnquoted)) ++findings_.unquoted_conditions;
    if (RankCounts* c = counts(rank)) ++c->assertion_lines;
    AssertGroup* g = group_for(file, m.line, m.function, m.condition);
    if (g == nullptr) {
      ++findings_.ungrouped_assertion_lines;
      continue;
    }
    Triple block{m.block[0], m.block[1], m.block[2]}, thread{m.thread[0], m.thread[1], m.thread[2]};
    if (g->lines++ == 0) {
      g->first = at;
      g->first_rank = rank;
      g->first_block = block;
      g->first_thread = thread;
      g->dialect = m.dialect;
    }
    g->flags |= m.flags;
    if (m.has(kMessageGarbled)) ++g->garbled_lines;
    if (pieces > 1) ++g->reassembled_lines;
    // Bounded: a kernel over millions of threads may print a line for each.
    auto note = [](std::set<Triple>& set, bool& capped, const Triple& value) {
      if (set.size() < kMaxDistinct)
        set.insert(value);
      else if (!set.contains(value))
        capped = true;
    };
    note(g->blocks, g->blocks_capped, block);
    note(g->threads, g->threads_capped, thread);
  }
}

AssertGroup* Scanner::group_for(std::string_view file, uint32_t line, std::string_view function,
                                std::string_view condition) {
  auto key = std::make_tuple(std::string(file), line, std::string(function), std::string(condition));
  if (auto it = group_index_.find(key); it != group_index_.end()) return &findings_.groups[it->second];
  if (findings_.groups.size() >= kMaxGroups) return nullptr;
  group_index_.emplace(key, findings_.groups.size());
  AssertGroup& g = findings_.groups.emplace_back();
  std::tie(g.file, g.line, g.function, g.condition) = key;
  return &g;
}

// A traceback is followed per rank: from its header through its frames (the last one kept) to the exception line
// and a few message lines after it, where PyTorch and NCCL name the CUDA error. True when the line belonged to one.
bool Scanner::on_traceback_line(std::string_view text, int rank) {
  std::string_view trimmed = ltrim(text);
  if (trimmed.starts_with(kTracebackHeader)) {
    finish(rank);  // a chained exception ("During handling of the above exception...") starts a new one
    Pending& p = pending_[rank];
    p.tb.rank = rank;
    p.indent = text.size() - trimmed.size();
    return true;
  }
  auto it = pending_.find(rank);
  if (it == pending_.end()) return false;
  Pending& p = it->second;
  size_t leading = text.size() - trimmed.size();
  if (p.indent > 0 && !trimmed.empty()) text.remove_prefix(std::min(leading, p.indent));
  if (!p.in_message) {
    std::string_view body = ltrim(text);
    if (body.starts_with("File ") || body.starts_with("Cell In[")) {  // Python's, IPython's
      p.tb.last_frame = body.substr(0, kMaxKeptBytes);
    } else if (text.empty()) {
      pending_.erase(it);  // no exception line: not a traceback Python printed whole
    } else if (!is_traceback_body(text)) {
      p.in_message = true;
      p.tb.at = position_;
      p.tb.exception = text.substr(0, kMaxKeptBytes);
      p.tb.code = cuda_error_code(text);
    }
    return true;
  }
  // The message ends at a blank line, at a logger's next record, or after a few lines.
  if (ltrim(text).empty() || text.starts_with('[') || p.message_lines >= kMaxMessageLines) {
    finish(rank);
    return false;
  }
  ++p.message_lines;
  if (p.tb.cuda_error.empty() && !names_cuda_error(p.tb.exception) && names_cuda_error(text)) {
    p.tb.cuda_error = text.substr(0, kMaxKeptBytes);
    p.tb.code = cuda_error_code(text);
  }
  return true;
}

// Only tracebacks that name a CUDA error count; the earliest exception line is the first, the others secondary.
void Scanner::finish(int rank) {
  auto it = pending_.find(rank);
  if (it == pending_.end()) return;
  CudaTraceback tb = std::move(it->second.tb);
  bool complete = it->second.in_message;
  pending_.erase(it);
  if (!complete || (!names_cuda_error(tb.exception) && tb.cuda_error.empty())) return;
  ++findings_.cuda_tracebacks;
  if (RankCounts* c = counts(rank)) ++c->cuda_tracebacks;
  if (!findings_.first_traceback || tb.at < findings_.first_traceback->at) findings_.first_traceback = std::move(tb);
}

void Scanner::on_other_line(std::string_view text, int rank) {
  if (names_cuda_error(text)) {
    ++findings_.other_cuda_errors;
    if (RankCounts* c = counts(rank)) ++c->other_cuda_errors;
    if (!findings_.first_other_cuda_error)
      findings_.first_other_cuda_error = OtherCudaError{position_, rank, std::string(text.substr(0, kMaxKeptBytes))};
  }
  if (text.find(kWatchdogTimeout) != std::string_view::npos) {
    ++findings_.watchdog_timeouts;
    if (RankCounts* c = counts(rank)) ++c->watchdog_timeouts;
  }
}

// The rank's counters; nullptr past kMaxRanks distinct ranks (a log full of numbered lines is not that many ranks).
RankCounts* Scanner::counts(int rank) {
  if (auto it = findings_.ranks.find(rank); it != findings_.ranks.end()) return &it->second;
  if (findings_.ranks.size() >= kMaxRanks) {
    findings_.ranks_capped = true;
    return nullptr;
  }
  return &findings_.ranks[rank];
}

}  // namespace firstassert::cli::triage
