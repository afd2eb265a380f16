// firstassert show [--json] [--color=auto|always|never] [REPORT|DIR]: a report, for a person.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "options.h"
#include "render.h"
#include "core/demangle.h"
#include "offline_symbols.h"
#include "report_reader.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

struct Style {
  bool color = false;
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string red(const std::string& s) const { return color ? "\033[1;31m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
};

std::string dims(const json& launch, const char* key) {
  const json& d = launch.is_object() && launch.contains(key) ? launch[key] : json();
  if (!d.is_array() || d.size() != 3 || !d[0].is_number() || !d[1].is_number() || !d[2].is_number()) return "(?)";
  return "(" + std::to_string(d[0].get<long long>()) + "," + std::to_string(d[1].get<long long>()) + "," +
         std::to_string(d[2].get<long long>()) + ")";
}

std::string kernel_of(const json& launch) {
  // (A kernel name is never empty: an empty one reads as unknown.)
  if (flag_of(launch, "graph", false) && text_of(launch, "kernel").empty()) return "(CUDA graph)";
  std::string name = text_of(launch, "kernel");
  if (name.empty()) name = text_of(launch, "mangled");
  return name.empty() ? "(unknown kernel)" : name;
}

std::string short_kernel_of(const json& launch) {
  std::string kernel = kernel_of(launch);
  return kernel.front() == '(' ? kernel : short_kernel_name(kernel);
}

// Wraps text at width, each line after the first starting with indent.
std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::istringstream words(text);
  std::string word, line, out;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

void frames(std::ostream& out, const json& launch, const Style& style) {
  const json& python = array_of(launch, "python_stack");
  for (size_t i = 0; i < python.size() && i < 8; ++i) {
    out << (i == 0 ? "  python     " : "             ") << text_of(python[i], "file", "?") << ":"
        << number_of(python[i], "line") << " in " << text_of(python[i], "function", "?") << "\n";
  }
  const json& native = array_of(launch, "native_stack");
  for (size_t i = 0; i < native.size() && i < 8; ++i) {
    const json& f = native[i];
    std::string function = text_of(f, "function");
    std::string where = text_of(f, "file");
    std::string line = where.empty() ? "" : " (" + where + ":" + std::to_string(number_of(f, "line")) + ")";
    std::string module = text_of(f, "module");
    std::string text = !function.empty() ? function + line
                                          : (module.empty() ? text_of(f, "pc", "?")
                                                            : module + "+" + text_of(f, "offset", "?"));
    out << (i == 0 ? "  native     " : "             ") << text << "\n";
  }
  if (native.size() > 8) out << "             " << style.dim("... " + std::to_string(native.size() - 8) + " more") << "\n";
}

}  // namespace

void render_report(const json& r, const std::string& path, std::ostream& out, bool color) {
  Style style;
  style.color = color;
  const json& process = object_of(r, "process");
  out << style.bold("firstassert report") << " " << path << "\n";
  out << "process      pid " << number_of(process, "pid") << " on " << text_of(process, "host", "?");
  if (process.is_object() && process.contains("rank") && process["rank"].is_number_integer())
    out << ", rank " << process["rank"].get<long long>();
  out << (text_of(process, "start_time").empty() ? "" : ", started " + text_of(process, "start_time")) << "\n";
  std::string command;
  for (const json& a : array_of(process, "argv")) command += (command.empty() ? "" : " ") + (a.is_string() ? a.get<std::string>() : "?");
  if (!command.empty()) out << "command      " << command << "\n";
  out << "\n";

  const json& first = object_of(r, "first_error");
  if (first.is_null()) {
    out << "first error  none recorded\n";
    return;
  }
  out << "first error  " << style.red(text_of(first, "name", "?") + " (" + std::to_string(number_of(first, "code")) + ")")
      << " " << text_of(first, "description") << "\n";
  out << "             at " << text_of(first, "api", "?") << ", thread " << number_of(first, "thread") << ", "
      << text_of(first, "time", "?") << (!flag_of(first, "sticky", true) ? " (the launch was refused; not sticky)" : "")
      << "\n";

  const json& culprit = object_of(r, "culprit");
  if (culprit.is_null()) {
    // The decision says why nothing is named (reports before it was written say nothing).
    const json& decision = object_of(r, "decision");
    std::string why = decision.is_null() ? "no recorded launch was pending" : text_of(decision, "reason");
    out << "culprit      none [" << (decision.is_null() ? "unknown" : text_of(decision, "confidence", "unknown"))
        << "]\n";
    out << "             " << wrap(why, 100, "             ") << "\n";
  } else {
    out << "culprit      " << style.bold(short_kernel_of(culprit)) << " [" << text_of(culprit, "confidence", "?")
        << "]\n";
    out << "             " << wrap(text_of(culprit, "reason"), 100, "             ") << "\n";
    out << "  kernel     " << kernel_of(culprit) << "\n";
    out << "  launch     grid " << dims(culprit, "grid") << "  block " << dims(culprit, "block") << "  shared "
        << number_of(culprit, "shared_mem") << " B  stream " << text_of(culprit, "stream", "?") << "  device "
        << number_of(culprit, "device", -1) << "  via " << text_of(culprit, "api", "?") << "\n";
    const json& node = object_of(culprit, "graph_node");
    if (!node.is_null()) {
      std::string where = text_of(node, "captured_at");
      out << "  graph      node " << number_of(node, "node") << " of " << number_of(node, "nodes")
          << " kernel nodes of a CUDA graph" << (where.empty() ? "" : ", captured at " + where) << "\n";
      const json& list = array_of(culprit, "graph_nodes");
      for (size_t i = 0; i < list.size() && i < 12; ++i) {
        const json& n = list[i];
        bool is_culprit = number_of(n, "node") == number_of(node, "node");
        out << "             " << (is_culprit ? "> " : "  ") << number_of(n, "node") << "  "
            << text_of(n, "state", "?") << "  " << short_kernel_of(n) << "\n";
      }
      if (list.size() > 12) out << "             " << style.dim("... " + std::to_string(list.size() - 12) + " more") << "\n";
    }
    const json& message = object_of(culprit, "device_message");
    if (!message.is_null()) {
      out << "  device     " << text_of(message, "file") << ":" << number_of(message, "line") << " "
          << text_of(message, "function") << ": block " << dims(message, "block") << " thread "
          << dims(message, "thread") << ": `" << text_of(message, "condition") << "` failed\n";
    }
    // What the job's values probe read in the values this launch was given (python/firstassert/values/probe.py).
    const json& values = object_of(culprit, "values");
    if (!values.is_null()) out << "  values     " << wrap(text_of(values, "text"), 100, "             ") << "\n";
    const json& hint = object_of(culprit, "hint");
    if (!hint.is_null()) {
      out << "  hint       " << style.bold(text_of(hint, "title")) << "\n";
      out << "             " << wrap(text_of(hint, "text"), 100, "             ") << "\n";
    }
    frames(out, culprit, style);
  }

  const json& candidates = array_of(r, "candidates");
  if (candidates.size() > 1) {
    out << "\ncandidates   " << candidates.size() << " launches had not been seen to complete\n";
    for (size_t i = 0; i < candidates.size() && i < 10; ++i) {
      const json& c = candidates[i];
      const json& node = object_of(c, "graph_node");
      bool same = number_of(c, "seq", -1) == number_of(culprit, "seq", -2) &&
                  number_of(node, "node") == number_of(object_of(culprit, "graph_node"), "node");
      out << "  #" << number_of(c, "seq", -1) << (node.is_null() ? "" : " node " + std::to_string(number_of(node, "node")))
          << " " << short_kernel_of(c) << " " << dims(c, "grid") << "x" << dims(c, "block") << " stream "
          << text_of(c, "stream", "?") << (same ? "  <- culprit" : "") << "\n";
    }
    if (candidates.size() > 10) out << "  " << style.dim("... " + std::to_string(candidates.size() - 10) + " more") << "\n";
  }

  const json& messages = array_of(r, "device_messages");
  if (messages.size() > 1) out << "\ndevice       " << messages.size() << " assertion lines (see device_messages)\n";

  const json& secondary = object_of(r, "secondary");
  const json& sites = array_of(secondary, "sites");
  out << "\nsecondary    " << number_of(secondary, "count") << " error" << (number_of(secondary, "count") == 1 ? "" : "s")
      << " at " << sites.size() << " call site" << (sites.size() == 1 ? "" : "s") << " after the first\n";
  for (const json& s : sites) {
    out << "  " << text_of(s, "api", "?") << "  " << text_of(s, "name", "?") << " (" << number_of(s, "code")
        << ")  x" << number_of(s, "count") << "\n";
  }
  const json& refused = array_of(r, "launch_errors");
  if (!refused.empty()) {
    out << "\nrefused      " << refused.size() << " launch" << (refused.size() == 1 ? "" : "es") << "\n";
    for (const json& l : refused)
      out << "  " << short_kernel_of(l) << " " << dims(l, "grid") << "x" << dims(l, "block") << "  "
          << text_of(l, "name", "?") << "\n";
  }
  out << "\n" << style.dim("written " + text_of(r, "written_at", "?") + (flag_of(r, "final", false)
                                                                               ? " (final, at exit)"
                                                                               : " (at detection; the process did not exit normally)"))
      << "\n";
}

namespace {

const char* kUsage =
    "usage: firstassert show [--json] [--color=auto|always|never] [REPORT|DIR]\n"
    "  Prints a report for a person: the first error, the culprit launch with its confidence, the device's\n"
    "  message, a hint, the Python and native stacks, the candidates and the secondary errors. Without an\n"
    "  argument: the newest firstassert-*.json in the current directory; with a directory: its newest report.\n"
    "  Frames the report could not name are resolved here (addr2line) when their binaries, with the same build\n"
    "  id, are on this machine.\n"
    "  --json    the report as JSON, with those frames resolved\n"
    "  --color   colour the text (default: auto, only on a terminal; NO_COLOR turns it off)\n";

}  // namespace

int show_command(const Args& args, std::ostream& out, std::ostream& err) {
  bool as_json = false;
  std::string color = "auto";
  std::vector<std::string> targets;
  CLI::App app;
  app.add_flag("--json", as_json);
  app.add_option("--color", color);
  app.add_option("target", targets);
  if (std::optional<int> status = answer_parse(parse_arguments(app, args), "show", kUsage, out, err)) return *status;
  if (color != "auto" && color != "always" && color != "never") {
    err << "firstassert show: --color must be auto, always or never, not '" << color << "'\n";
    return kBadInput;
  }
  if (targets.size() > 1) {
    err << "firstassert show: one report or directory at a time ('" << targets[1] << "' is one too many)\n";
    return kBadInput;
  }
  std::string target = targets.empty() ? std::string() : targets.front();
  if (target.empty()) target = ".";
  std::string error;
  std::string path = std::filesystem::is_directory(target) ? newest_report(target, error) : target;
  if (!error.empty()) {
    err << "firstassert show: " << error << "\n";
    return kBadInput;
  }
  std::optional<LoadedReport> report = load_report(path, error);
  if (!report) {
    err << "firstassert show: " << error << "\n";
    return kBadInput;
  }
  resolve_offline(report->json);
  if (as_json) {
    out << report->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  bool colored = color == "always" || (color == "auto" && &out == &std::cout && isatty(STDOUT_FILENO) &&
                                       std::getenv("NO_COLOR") == nullptr &&
                                       std::string(std::getenv("TERM") ? std::getenv("TERM") : "dumb") != "dumb");
  try {
    render_report(report->json, path, out, colored);
  } catch (const std::exception& e) {
    err << "firstassert show: " << path << ": cannot be shown (" << e.what() << ")\n";
    return kBadInput;
  }
  return 0;
}

}  // namespace firstassert::cli
