// The prefixes `firstassert triage` removes from a log line before reading it, so that the line reads as the program
// printed it: Python's traceback is told by its lines' indentation (the exception line is the one at column 0), and a
// record wrapped or spliced is joined again only with lines of the same rank. The rank a launcher's prefix names is
// kept: which rank asserted first is what a multi-rank log is read for.
//
// Launchers, whose prefix names the rank that printed the line:
//   srun --label (SLURM)                     "  3: " (the task id, right-aligned)
//   torchrun                                 "[rank3]:" (global rank), "[default3]:" (role and local rank, from
//                                            --tee or --redirects)
//   mpirun --tag-output (Open MPI, Horovod)  "[1,3]<stderr>:" (job, rank)
// Log servers and loggers, whose prefix names no rank:
//   a Jupyter server's log, where a kernel's stderr (and so the driver's assertion lines) lands
//                                            "[I 2024-05-01 10:00:00.123 ServerApp] "
//   a notebook service's exported runtime log  "<time>\t<LEVEL>\t"
//   Ray, on the driver, for a worker's line  "(RayTrainWorker pid=1234, ip=10.0.0.7) "
//   a logger's time stamp                    "2024-05-01 10:00:00,123 ", "[2024-05-01 10:00:00] ", "10:00:00.123 "
//   a logger's level                         vLLM's "ERROR 05-12 10:11:12 [core.py:291] ", Python logging's default
//                                            "ERROR:root:"
// And what is not a prefix but hides the line's start: a markdown or e-mail quote's "> ", and on a terminal what a
// carriage return overwrote (a progress bar redrawn before the program's line).
//
// Each is taken only in its exact shape, so that text of the program's own that starts alike is left whole: "10:30:00"
// is a time, not srun's label; "ERROR: ../k.cu:1" keeps its path.
#include "triage_prefixes.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

// Ranks past this are not a launcher's prefix but text that happens to look like one.
constexpr size_t kMaxRankDigits = 6;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

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

}  // namespace

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

size_t inline_rank_prefix(std::string_view s) {
  for (size_t at = s.find('[', 1); at != std::string_view::npos; at = s.find('[', at + 1)) {
    std::string_view rest = s.substr(at);
    int rank = kNoRank;
    if ((rest.starts_with("[rank") || rest.starts_with("[default")) && strip_torchrun_prefix(rest, rank)) return at;
  }
  return std::string_view::npos;
}

namespace {

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
// 10:00:00] ", "10:00:00.123 ". A level after it is strip_level's to take, in the shapes that one knows.
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
  t = trim_left(t);
  s = t;
  return true;
}

// Python logging's ":root:" after a level: a logger's name, never a path or words.
bool strip_logger_name(std::string_view& rest) {
  size_t logger_end = rest.starts_with(":") ? rest.find(':', 1) : std::string_view::npos;
  std::string_view logger = logger_end == std::string_view::npos ? std::string_view() : rest.substr(1, logger_end - 1);
  if (logger.empty() || logger_end >= 40 || logger.find_first_of(" \t/\\") != std::string_view::npos) return false;
  rest.remove_prefix(logger_end + 1);
  return true;
}

// vLLM's " 05-12 10:11:12 [core.py:291] " after a level: a month-day date and a time, then the source location in
// brackets. False when no time follows the level.
bool strip_time_and_location(std::string_view& rest) {
  rest = trim_left(rest);
  if (rest.size() > 5 && is_digit(rest[0]) && is_digit(rest[1]) && rest[2] == '-' && is_digit(rest[3]) &&
      is_digit(rest[4]) && rest[5] == ' ')
    rest.remove_prefix(6);
  if (!is_time_at(rest, 0)) return false;
  rest.remove_prefix(std::min(rest.size(), rest.find(' ')));
  rest = trim_left(rest);
  if (rest.starts_with('[') && rest.find("] ") != std::string_view::npos && rest.find("] ") < 80)
    rest.remove_prefix(rest.find("] ") + 2);
  return true;
}

// A log record's level, and with it vLLM's "ERROR 05-12 10:11:12 [core.py:291] " and Python logging's "ERROR:root:".
bool strip_level(std::string_view& s) {
  for (std::string_view level : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"}) {
    if (!s.starts_with(level) || s.size() <= level.size()) continue;
    std::string_view rest = s.substr(level.size());
    if (!strip_logger_name(rest) && !(rest.starts_with(' ') && strip_time_and_location(rest))) return false;
    s = rest;
    return true;
  }
  return false;
}

// A log quoted in markdown or an e-mail ("> " before each line).
void strip_quote_marks(std::string_view& line) {
  while (line.starts_with("> ") || line == ">") line.remove_prefix(std::min<size_t>(2, line.size()));
}

// srun's label, then mpirun's tag or torchrun's prefix: rank is the last one's.
void strip_launcher_prefixes(std::string_view& line, int& rank) {
  strip_srun_label(line, rank);
  if (!strip_mpirun_tag(line, rank)) strip_torchrun_prefix(line, rank);
}

// What a log server or a logger puts before the text, in the orders they stack; none of it is a rank.
// Each kind is told by its first character, so that the common line (none of them) costs a few compares.
void strip_record_prefixes(std::string_view& line) {
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
}

// A terminal shows only what follows the last carriage return (a progress bar redrawn, then the real line).
std::string_view as_a_terminal_shows(std::string_view line) {
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
  return line;
}

}  // namespace

PrefixedLine strip_prefixes(std::string_view line) {
  PrefixedLine out;
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  strip_quote_marks(line);
  strip_launcher_prefixes(line, out.rank);
  strip_record_prefixes(line);
  if (out.rank == kNoRank) strip_torchrun_prefix(line, out.rank);  // inside a worker's or a logger's prefix
  out.full = line;
  out.text = as_a_terminal_shows(line);
  return out;
}

}  // namespace firstassert::cli::triage
