// `firstassert triage LOG...`: a post-mortem on the logs of a job that ran without the shim. Reads each log as a
// stream of lines (see triage_scan.h for what it looks for), then prints one summary of all of them.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>

#include "commands.h"
#include "options.h"
#include "triage_formats.h"
#include "triage_json.h"
#include "triage_lines.h"
#include "triage_report.h"
#include "triage_scan.h"
#include "triage_text.h"

namespace firstassert::cli {
namespace {

constexpr const char* kUsage =
    "usage: firstassert triage [--help] [--json] [--] LOG...\n"
    "\n"
    "Reads the logs of a job that ran without firstassert (a SLURM output, a torchrun log with [rankN]: prefixes,\n"
    "an srun --label log, a Jupyter or Colab server log, a log service's JSON records, a saved notebook .ipynb;\n"
    "\"-\" is stdin), finds the device-side assertion lines the driver printed (also glued to other output, wrapped,\n"
    "garbled, or from Triton or SYCL) and the Python tracebacks carrying a CUDA error, and prints a summary: the\n"
    "distinct assertions and how many blocks and threads printed them, the first traceback against the secondary\n"
    "ones, the rank that asserted first, what the logs leave in doubt, and a hint. It cannot name the failing\n"
    "launch, its configuration or its host stack: rerun under `firstassert run -- <command>` for those.\n"
    "\n"
    "  --json   the summary as JSON, schema firstassert-triage/1 (docs/triage-json.md)\n"
    "\n"
    "Exit status: 0 when an assertion or a CUDA error was found, 1 when none was, 2 when a log could not be read or\n"
    "the arguments are wrong (the other logs are still read).\n";

struct Options {
  bool json = false;
  std::vector<std::string> logs;
};

// Feeds one stream to the scanner; false on a read error (what was read before it still counts).
bool scan_stream(std::istream& in, triage::Scanner& scanner) {
  triage::LineReader reader(in);
  std::string_view line;
  bool unterminated = false;
  while (reader.next(line)) {
    triage::feed_log_line(scanner, line, reader.cut());
    unterminated = reader.unterminated();
  }
  scanner.end_log(unterminated);
  return !reader.failed();
}

std::string system_error(int code) { return code != 0 ? std::strerror(code) : "cannot be opened"; }

// One log: stdin for "-", else the file. A problem is one line on err; the log is then left out of the summary
// unless some of it was read.
bool scan_log(const std::string& name, triage::Scanner& scanner, std::ostream& err) {
  std::string shown = triage::printable(name, 4096);
  if (name == "-") {
    scanner.begin_log(name);
    if (scan_stream(std::cin, scanner)) return true;
    err << "firstassert triage: error reading stdin\n";
    return false;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name, ec)) {
    err << "firstassert triage: " << shown << ": is a directory\n";
    return false;
  }
  errno = 0;
  std::ifstream in(name, std::ios::binary);
  if (!in) {
    err << "firstassert triage: " << shown << ": " << system_error(errno) << "\n";
    return false;
  }
  char start[4096];
  in.read(start, sizeof start);
  std::string_view head(start, static_cast<size_t>(in.gcount()));
  in.clear();
  in.seekg(0);
  scanner.begin_log(name);
  if (triage::looks_like_notebook(name, head)) {
    std::string error;
    if (triage::scan_notebook(in, scanner, error)) return true;
    err << "firstassert triage: " << shown << ": " << error << "\n";
    return false;
  }
  if (scan_stream(in, scanner)) return true;
  err << "firstassert triage: " << shown << ": read error after " << scanner.findings().logs.back().lines
      << " lines\n";
  return false;
}

}  // namespace

int triage_command(const Args& args, std::ostream& out, std::ostream& err) {
  Options options;
  CLI::App app;
  app.add_flag("--json", options.json);
  app.add_option("logs", options.logs);
  ParseOutcome parsed = parse_arguments(app, args);
  if (parsed.error.empty() && !parsed.help && options.logs.empty()) parsed.error = "no log given";
  if (std::optional<int> status = answer_parse(parsed, "triage", kUsage, out, err)) return *status;
  triage::Scanner scanner;
  bool all_read = true;
  for (const std::string& log : options.logs) all_read = scan_log(log, scanner, err) && all_read;
  const triage::Findings& findings = scanner.findings();
  if (options.json) {
    triage::write_json(findings, out);  // also for no log read: a bot reads "found" and "logs"
  } else if (!findings.logs.empty()) {
    triage::write_summary(findings, out);
  }
  out.flush();
  if (!all_read) return kBadInput;
  return findings.found() ? 0 : 1;
}

}  // namespace firstassert::cli
