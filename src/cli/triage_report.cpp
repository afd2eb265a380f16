#include "triage_report.h"

#include <cstdio>
#include <string>

#include "report/hints.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

constexpr size_t kWidth = 100;
constexpr int kAssertCode = 710;  // cudaErrorAssert: what every device-side assertion becomes on the host

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string log_name(const Findings& f, size_t index) {
  const std::string& name = f.logs[index].name;
  return name == "-" ? "<stdin>" : printable(name);
}

std::string_view trim_left(std::string_view s) {
  size_t start = s.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view() : s.substr(start);
}

std::string where(const Findings& f, const Position& p) { return log_name(f, p.log) + ":" + std::to_string(p.line); }

std::string rank_text(const Findings& f, int rank) {
  if (rank != kNoRank) return "rank " + std::to_string(rank);
  return f.any_rank ? "no rank prefix" : "rank unknown";
}

std::string triple(const Triple& t) {
  return "[" + std::to_string(t[0]) + "," + std::to_string(t[1]) + "," + std::to_string(t[2]) + "]";
}

// The driver's own line, rebuilt from its parts (without whatever prefix the log put before it).
std::string assertion_line(const AssertGroup& g) {
  return printable(g.file) + ":" + std::to_string(g.line) + ": " + printable(g.function) +
         ": block: " + triple(g.first_block) + ", thread: " + triple(g.first_thread) + " Assertion `" +
         printable(g.condition) + "` failed.";
}

std::string distinct(size_t n, bool capped, const char* one, const char* many) {
  return (capped ? "at least " : "") + plural(n, one, many);
}

void write_logs(const Findings& f, std::ostream& out) {
  uint64_t lines = 0;
  for (const LogInfo& log : f.logs) lines += log.lines;
  out << "firstassert triage: " << plural(f.logs.size(), "log", "logs") << ", " << plural(lines, "line", "lines")
      << "\n";
  for (size_t i = 0; i < f.logs.size(); ++i) {
    const LogInfo& log = f.logs[i];
    out << "  " << log_name(f, i) << ": " << plural(log.lines, "line", "lines");
    if (log.cut_lines > 0) out << ", " << plural(log.cut_lines, "line", "lines") << " cut at 1 MiB";
    if (log.unterminated) out << ", last line incomplete (the log was cut)";
    out << "\n";
  }
}

void write_group(const Findings& f, const AssertGroup& g, size_t number, std::ostream& out) {
  out << "  " << number << ". " << printable(g.function) << " at " << printable(g.file) << ":" << g.line << "\n";
  out << "     condition: " << printable(g.condition) << "\n";
  out << "     " << plural(g.lines, "line", "lines") << ": "
      << distinct(g.blocks.size(), g.blocks_capped, "distinct block", "distinct blocks") << ", "
      << distinct(g.threads.size(), g.threads_capped, "distinct thread", "distinct threads") << "; first at "
      << where(f, g.first)
      << " (" << rank_text(f, g.first_rank) << ")\n";
  if (auto hint = find_hint(g.condition, g.function, kAssertCode)) out << "     hint: " << hint->title << "\n";
}

void write_assertions(const Findings& f, std::ostream& out) {
  out << "\nDevice-side assertions: ";
  if (f.groups.empty()) {
    out << "none in the logs\n";
    return;
  }
  out << plural(f.assertion_lines, "line", "lines") << ", "
      << plural(f.groups.size(), "distinct assertion", "distinct assertions") << "\n";
  const AssertGroup& first = f.groups.front();
  out << "  first: " << rank_text(f, first.first_rank) << ", " << where(f, first.first)
      << (f.any_rank ? " (the first assertion line to reach the logs)\n" : "\n");
  out << "    " << assertion_line(first) << "\n";
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

// The hint for the first assertion; without assertion lines, for the CUDA error the first traceback names.
void write_hint(const Findings& f, std::ostream& out) {
  std::optional<Hint> hint;
  if (!f.groups.empty()) {
    hint = find_hint(f.groups.front().condition, f.groups.front().function, kAssertCode);
  } else if (f.first_traceback && f.first_traceback->code != 0) {
    hint = find_hint("", "", f.first_traceback->code);
  }
  if (!hint) return;
  out << "\nHint: " << hint->title << "\n" << wrap(hint->text, kWidth, "  ");
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
         "  LD_PRELOAD=libfirstassert.so <command>\n";
}

}  // namespace

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
  write_hint(f, out);
  write_limits(f, out);
}

}  // namespace firstassert::cli::triage
