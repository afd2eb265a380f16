#include "triage_scan.h"

#include <algorithm>

#include "core/cuda_errors.h"
#include "core/device_messages.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

constexpr std::string_view kTracebackHeader = "Traceback (most recent call last):";
constexpr std::string_view kWatchdogTimeout = "Watchdog caught collective operation timeout";
// How a CUDA error is named: PyTorch's c10 message ("CUDA error: device-side assert triggered") and NCCL's warning
// ("Cuda failure 'device-side assert triggered'").
constexpr std::string_view kCudaErrorMarkers[] = {"CUDA error: ", "Cuda failure '"};
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
  strip_srun_label(line, out.rank);
  strip_torchrun_prefix(line, out.rank);
  if (!strip_jupyter_prefix(line)) strip_tabbed_record(line);
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
}

void Scanner::end_log(bool unterminated) {
  while (!pending_.empty()) finish(pending_.begin()->first);
  if (!findings_.logs.empty()) findings_.logs.back().unterminated = unterminated;
}

void Scanner::line(std::string_view raw, bool cut) {
  ++position_.line;
  LogInfo& log = findings_.logs.back();
  log.lines = position_.line;
  if (cut) ++log.cut_lines;
  PrefixedLine l = strip_prefixes(strip_ansi(raw, scratch_));
  if (l.rank != kNoRank) {
    findings_.any_rank = true;
    counts(l.rank);  // listed even if it printed nothing of note: a quiet rank is information too
  }
  // The driver prints its lines between a program's lines, never inside a traceback.
  if (l.text.find("Assertion `") != std::string_view::npos && on_assertion(l.text, l.rank)) return;
  if (!on_traceback_line(l.text, l.rank)) on_other_line(l.text, l.rank);
}

bool Scanner::on_assertion(std::string_view text, int rank) {
  DeviceMessage m;
  if (!parse_device_assert(text, m)) return false;
  std::string_view file = m.file;
  // Text a logger or a progress bar put before the path is not part of it: device source paths have no blanks.
  if (size_t blank = file.find_last_of(" \t]"); blank != std::string_view::npos && blank + 1 < file.size())
    file.remove_prefix(blank + 1);
  ++findings_.assertion_lines;
  if (RankCounts* c = counts(rank)) ++c->assertion_lines;
  AssertGroup* g = group_for(file, m.line, m.function, m.condition);
  if (g == nullptr) {
    ++findings_.ungrouped_assertion_lines;
    return true;
  }
  Triple block{m.block[0], m.block[1], m.block[2]}, thread{m.thread[0], m.thread[1], m.thread[2]};
  if (g->lines++ == 0) {
    g->first = position_;
    g->first_rank = rank;
    g->first_block = block;
    g->first_thread = thread;
  }
  // Bounded: a kernel over millions of threads may print a line for each.
  auto note = [](std::set<Triple>& set, bool& capped, const Triple& value) {
    if (set.size() < kMaxDistinct)
      set.insert(value);
    else if (!set.contains(value))
      capped = true;
  };
  note(g->blocks, g->blocks_capped, block);
  note(g->threads, g->threads_capped, thread);
  return true;
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
  if (ltrim(text).starts_with(kTracebackHeader)) {
    finish(rank);  // a chained exception ("During handling of the above exception...") starts a new one
    pending_[rank].tb.rank = rank;
    return true;
  }
  auto it = pending_.find(rank);
  if (it == pending_.end()) return false;
  Pending& p = it->second;
  if (!p.in_message) {
    std::string_view body = ltrim(text);
    if (body.starts_with("File \"")) {
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
