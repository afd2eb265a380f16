#include "triage_report.h"

#include <cstdio>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device_assert_line.h"
#include "core/plural.h"

#include "report/hints.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

constexpr size_t kWidth = 100;
constexpr int kAssertCode = 710;  // cudaErrorAssert: what every device-side assertion becomes on the host

std::string log_name(const Findings& f, size_t index) {
  const std::string& name = f.logs[index].name;
  return name == "-" ? "<stdin>" : printable(name);
}

std::string where(const Findings& f, const Position& p) {
  if (p.cell != 0) return log_name(f, p.log) + ", cell " + std::to_string(p.cell);
  return log_name(f, p.log) + ":" + std::to_string(p.line);
}

std::string rank_text(const Findings& f, int rank) {
  if (rank != kNoRank) return "rank " + std::to_string(rank);
  return f.any_rank ? "no rank prefix" : "rank unknown";
}

std::string triple(const Triple& t) {
  return "[" + std::to_string(t[0]) + "," + std::to_string(t[1]) + "," + std::to_string(t[2]) + "]";
}

// The device's own line, rebuilt from its parts (without whatever prefix the log put before it); what could not be
// read is "?", never guessed.
// "file:line", "file:?" when the line number was lost; "" without a file.
std::string file_and_line(const AssertGroup& g) {
  if (g.file.empty()) return "";
  return printable(g.file) + ":" + ((g.flags & kMessageNoLocation) ? "?" : std::to_string(g.line));
}

std::string assertion_line(const AssertGroup& g) {
  std::string head = (g.file.empty() ? std::string("?") : file_and_line(g)) + ": ";
  if (!g.function.empty()) head += printable(g.function) + ": ";
  std::string tail = (g.flags & kMessageConditionCut) ? " [cut off here]" : "` failed.";
  if (g.dialect == DeviceDialect::hip)
    return head + "Device-side assertion `" + printable(g.condition) +
           ((g.flags & kMessageConditionCut) ? " [cut off here]" : "' failed.");
  bool sycl = g.dialect == DeviceDialect::sycl;
  return head + (sycl ? "global id: " : "block: ") + triple(g.first_block) + (sycl ? ", local id: " : ", thread: ") +
         triple(g.first_thread) + " Assertion `" + printable(g.condition) + tail;
}

std::string group_title(const AssertGroup& g) {
  if (g.file == "unknown" && g.function == "unknown")
    return "a Triton kernel (torch.compile's, or your own: Triton's line names no function or file)";
  std::string function = g.function.empty() ? "(function not in the line)" : printable(g.function);
  return function + " at " + (g.file.empty() ? std::string("(file not readable)") : file_and_line(g));
}

std::string distinct(size_t n, bool capped, const char* one, const char* many) {
  return (capped ? "at least " : "") + plural(n, one, many);
}

// Who printed assertion lines, when more than one source did: several ranks, a rank and lines without a rank prefix,
// or else several logs. "" when they all came from one.
std::string assertion_sources(const Findings& f) {
  std::set<int> ranks;  // with a prefix
  bool unprefixed = false;
  for (const auto& [rank, counts] : f.ranks) {
    if (counts.assertion_lines == 0) continue;
    if (rank == kNoRank)
      unprefixed = true;
    else
      ranks.insert(rank);
  }
  std::set<size_t> logs;
  for (const AssertGroup& g : f.groups) logs.insert(g.first.log);
  if (ranks.size() > 1) return plural(ranks.size(), "rank", "ranks") + " printed assertion lines";
  if (ranks.size() == 1 && unprefixed)
    return "rank " + std::to_string(*ranks.begin()) + " and lines without a rank prefix printed assertion lines";
  if (logs.size() > 1) return plural(logs.size(), "log", "logs") + " hold assertion lines";
  return "";
}

// The rank, when the logs' rank prefixes name only one.
std::optional<int> only_rank(const Findings& f) {
  size_t prefixed = f.ranks.size() - (f.ranks.contains(kNoRank) ? 1 : 0);
  if (!f.any_rank || prefixed != 1) return std::nullopt;
  return f.ranks.begin()->first == kNoRank ? std::next(f.ranks.begin())->first : f.ranks.begin()->first;
}

void write_logs(const Findings& f, std::ostream& out) {
  uint64_t lines = 0;
  for (const LogInfo& log : f.logs) lines += log.lines;
  out << "firstassert triage: " << plural(f.logs.size(), "log", "logs") << ", " << plural(lines, "line", "lines")
      << "\n";
  for (size_t i = 0; i < f.logs.size(); ++i) {
    const LogInfo& log = f.logs[i];
    out << "  " << log_name(f, i) << ": " << (log.notebook ? "a notebook, " : "")
        << plural(log.lines, log.notebook ? "line of cell output" : "line", log.notebook ? "lines of cell output" : "lines");
    if (log.cut_lines > 0) out << ", " << plural(log.cut_lines, "line", "lines") << " cut at 1 MiB";
    if (log.unterminated) out << ", last line incomplete (the log was cut)";
    out << "\n";
  }
}

void write_group(const Findings& f, const AssertGroup& g, size_t number, std::ostream& out) {
  out << "  " << number << ". " << group_title(g) << "\n";
  out << "     condition: " << printable(g.condition)
      << ((g.flags & kMessageConditionCut) ? " (cut off: the line ends inside the condition)" : "") << "\n";
  out << "     " << plural(g.lines, "line", "lines") << ": "
      << ((g.flags & kMessageNoPosition)
              ? std::string("no block or thread (ROCm's line names none)")
              : distinct(g.blocks.size(), g.blocks_capped, "distinct block", "distinct blocks") + ", " +
                    distinct(g.threads.size(), g.threads_capped, "distinct thread", "distinct threads"))
      << "; first at "
      << where(f, g.first)
      << " (" << rank_text(f, g.first_rank) << ")\n";
  if (g.garbled_lines > 0)
    out << wrap(plural(g.garbled_lines, "line", "lines") + " garbled: other output was spliced into " +
                    (g.garbled_lines == 1 ? "it" : "them") + "; only the fields that were intact are shown",
                kWidth, "     ");
  if (g.reassembled_lines > 0)
    out << "     " << plural(g.reassembled_lines, "record", "records") << " wrapped onto several lines, joined again\n";
  if (auto hint = group_hint(g)) out << "     hint: " << hint->title << "\n";
}

void write_assertions(const Findings& f, std::ostream& out) {
  out << "\nDevice-side assertions: ";
  if (f.groups.empty()) {
    out << "none in the logs\n";
    return;
  }
  out << plural(f.assertion_lines, "line", "lines") << ", "
      << plural(f.groups.size(), "distinct assertion", "distinct assertions") << "\n";
  size_t chosen = first_complete_group(f);
  const AssertGroup& first = f.groups[chosen];
  out << "  first: " << rank_text(f, first.first_rank) << ", " << where(f, first.first)
      << (f.any_rank ? " (the first assertion line to reach the logs)\n" : "\n");
  out << "    " << assertion_line(first) << "\n";
  if (chosen > 0) {
    out << wrap("before it, " + plural(chosen, "fragment", "fragments") + " of an assertion line (no file, or the "
                "condition cut), not taken as the first; the earliest, at " + where(f, f.groups[0].first) + ":",
                kWidth, "  ");
    out << "    " << assertion_line(f.groups[0]) << "\n";
  }
  if (f.emphasis_lines > 0)
    out << wrap(plural(f.emphasis_lines, "assertion line", "assertion lines") + " held a page's markdown emphasis "
                "(**): read without it", kWidth, "  ");
  if (f.html_unescaped_lines > 0)
    out << wrap(plural(f.html_unescaped_lines, "line was", "lines were") + " HTML-escaped, as a web page's copy "
                "leaves them (&lt; &amp; &#96;...): read with the escapes undone", kWidth, "  ");
  if (f.unquoted_conditions > 0)
    out << wrap(plural(f.unquoted_conditions, "record's condition", "records' conditions") + " had lost " +
                    (f.unquoted_conditions == 1 ? "its" : "their") + " backticks (a page's rendering): read between "
                    "\"Assertion\" and \"failed\"", kWidth, "  ");
  for (size_t i = 0; i < f.groups.size(); ++i) write_group(f, f.groups[i], i + 1, out);
  if (f.ungrouped_assertion_lines > 0)
    out << "  and " << plural(f.ungrouped_assertion_lines, "line", "lines") << " of further distinct assertions\n";
}

void write_tracebacks(const Findings& f, std::ostream& out) {
  out << "\nPython tracebacks with a CUDA error: ";
  if (!f.first_traceback) {
    out << "none in the logs\n";
  } else {
    const CudaTraceback& tb = *f.first_traceback;
    out << f.cuda_tracebacks << " (the first, then " << f.cuda_tracebacks - 1 << " secondary)\n";
    out << "  first: " << rank_text(f, tb.rank) << ", " << where(f, tb.at) << "\n";
    out << "    " << printable(tb.exception) << "\n";
    if (!tb.cuda_error.empty()) out << "    " << printable(tb.cuda_error) << "\n";
    out << "    last frame: " << (tb.last_frame.empty() ? "(none)" : printable(tb.last_frame)) << "\n";
    out << wrap("CUDA reports a kernel's failure at a later call: this frame is where the error surfaced, not where "
                "the failing kernel was launched.", kWidth, "    ");
  }
  if (f.first_other_cuda_error) {
    const OtherCudaError& e = *f.first_other_cuda_error;
    out << "  other lines naming a CUDA error: " << f.other_cuda_errors << "; first: " << rank_text(f, e.rank)
        << ", " << where(f, e.at) << "\n    " << printable(trim_left(e.text)) << "\n";
  }
  if (f.watchdog_timeouts > 0)
    out << "  NCCL watchdog timeouts: " << f.watchdog_timeouts
        << " (ranks left waiting in a collective by a rank that failed)\n";
}

void write_ranks(const Findings& f, std::ostream& out) {
  if (!f.any_rank) return;
  out << "\nRanks:\n";
  char row[160];
  std::snprintf(row, sizeof row, "  %-10s  %15s  %21s  %22s  %17s\n", "rank", "assertion lines",
                "CUDA-error tracebacks", "other CUDA-error lines", "watchdog timeouts");
  out << row;
  auto write_row = [&](const std::string& name, const RankCounts& c) {
    std::snprintf(row, sizeof row, "  %-10s  %15llu  %21llu  %22llu  %17llu\n", name.c_str(),
                  static_cast<unsigned long long>(c.assertion_lines),
                  static_cast<unsigned long long>(c.cuda_tracebacks),
                  static_cast<unsigned long long>(c.other_cuda_errors),
                  static_cast<unsigned long long>(c.watchdog_timeouts));
    out << row;
  };
  for (const auto& [rank, counts] : f.ranks) {
    if (rank != kNoRank) write_row(std::to_string(rank), counts);
  }
  if (auto none = f.ranks.find(kNoRank); none != f.ranks.end()) write_row("no prefix", none->second);
  if (f.ranks_capped) out << "  (more ranks than " << Scanner::kMaxRanks << ": the others are not listed)\n";
}

void write_hint(const Findings& f, std::ostream& out) {
  std::optional<Hint> hint = summary_hint(f);
  if (!hint) return;
  out << "\nHint: " << hint->title << "\n" << wrap(hint->text, kWidth, "  ");
}

void write_doubts(const Findings& f, std::ostream& out) {
  std::vector<Doubt> all = doubts(f);
  if (all.empty()) return;
  out << "\nIn doubt:\n";
  for (const Doubt& d : all) {
    std::string text = wrap(d.text, kWidth - 2, "    ");
    out << "  - " << text.substr(4);
  }
}

void write_limits(const Findings& f, std::ostream& out) {
  if (f.groups.empty() && f.first_traceback && f.first_traceback->code == kAssertCode)
    out << "\n" << wrap("No assertion lines, yet a device-side assert: the driver prints them on the process's "
                        "stderr, which may be in another file, or lost when the process was killed.", kWidth, "");
  out << "\nWhat a log cannot tell:\n"
         "  - which launch failed (the assertion line names a kernel, not one of its launches);\n"
         "  - that launch's stream and configuration (grid, block, shared memory);\n"
         "  - the host stack (Python and native) that launched it: the traceback points at a later call.\n"
         "To have them, rerun the job under firstassert:\n"
         "  firstassert run -- <command>\n"
         "  LD_PRELOAD=$(firstassert lib) <command>\n";
}

}  // namespace

std::optional<Hint> group_hint(const AssertGroup& g) {
  // A condition cut off is no condition: the kernel's name may still say what its checks are about (as for a launch
  // the shim recorded without the device's line).
  if (g.flags & kMessageConditionCut) return find_hint({{}, g.function, g.file, kAssertCode});
  return find_hint({g.condition, g.function, g.file, kAssertCode});
}

size_t first_complete_group(const Findings& f) {
  for (size_t i = 0; i < f.groups.size(); ++i) {
    const AssertGroup& g = f.groups[i];
    if (!g.file.empty() && !(g.flags & (kMessageNoLocation | kMessageConditionCut))) return i;
  }
  return 0;
}

std::optional<Hint> summary_hint(const Findings& f) {
  if (!f.groups.empty()) return group_hint(f.groups[first_complete_group(f)]);
  if (f.first_traceback && f.first_traceback->code != 0) return find_hint({{}, {}, {}, f.first_traceback->code});
  return std::nullopt;
}

std::vector<Doubt> doubts(const Findings& f) {
  std::vector<Doubt> out;
  if (std::string sources = assertion_sources(f); !sources.empty())
    out.push_back({"first-may-not-be-first", "the first assertion line may not be the first to fire: " + sources +
                                                 ", and without time stamps a merged log is in the order lines "
                                                 "reached it, not the order the devices failed"});
  if (f.garbled_lines > 0)
    out.push_back({"garbled-lines", plural(f.garbled_lines, "assertion line", "assertion lines") +
                                        " garbled by output spliced into them (threads or processes writing at "
                                        "once): their fields that were not intact are left out"});
  if (f.cut_conditions > 0)
    out.push_back({"cut-conditions", plural(f.cut_conditions, "assertion line ends", "assertion lines end") +
                                         " inside its condition: what is shown is what the log holds, and a hint can "
                                         "only come from the kernel's name"});
  for (size_t i = 0; i < f.logs.size(); ++i) {
    if (f.logs[i].unterminated)
      out.push_back({"log-cut", log_name(f, i) + " ends in the middle of a line: the log was cut (a killed job, a "
                                                 "full disk, a copy that stopped), and what came after is not there"});
  }
  if (std::optional<int> only = only_rank(f))
    out.push_back({"single-rank", "rank " + std::to_string(*only) +
                                      " is the only rank these logs show: the others' output is elsewhere, or they "
                                      "printed nothing"});
  return out;
}

void write_summary(const Findings& f, std::ostream& out) {
  write_logs(f, out);
  if (!f.found()) {
    out << "\nNo device-side assertion and no CUDA error in these logs.\n";
    if (f.watchdog_timeouts > 0)
      out << wrap("NCCL watchdog timeouts: " + std::to_string(f.watchdog_timeouts) +
                      ". A rank waited in a collective: the rank that failed may have logged elsewhere.",
                  kWidth, "");
    return;
  }
  write_assertions(f, out);
  write_tracebacks(f, out);
  write_ranks(f, out);
  write_doubts(f, out);
  write_hint(f, out);
  write_limits(f, out);
}

}  // namespace firstassert::cli::triage
