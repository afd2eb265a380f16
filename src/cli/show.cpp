// firstassert show [--json | --rows] [--color=auto|always|never] [--cells FILE] [REPORT|DIR]: a report, for a person.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "offline_symbols.h"
#include "options.h"
#include "render.h"
#include "report_reader.h"

namespace firstassert::cli {
namespace {

const char* kUsage =
    "usage: firstassert show [--json | --rows] [--color=auto|always|never] [--cells FILE] [REPORT|DIR]\n"
    "  Prints a report for a person: the first error, the culprit launch with its confidence, the line that\n"
    "  launched it, the device's message, the values it was given, a hint, the Python and native stacks, the\n"
    "  candidates and the secondary errors. Without an argument: the newest firstassert-*.json in the current\n"
    "  directory; with a directory: its newest report. Frames the report could not name are resolved here\n"
    "  (addr2line) when their binaries, with the same build id, are on this machine.\n"
    "  --json    the report as JSON, with those frames resolved\n"
    "  --rows    the text's rows as JSON ({\"path\", \"rows\": [{\"key\", \"label\", \"lines\"}]}), for other front ends\n"
    "  --cells   notebook cells' names for the Python frames (JSON: file -> {\"cell\": \"In[4]\", \"source\": code};\n"
    "            - reads stdin); default: REPORT.cells, which the notebook extension writes beside the report\n"
    "  --color   colour the text (default: auto, only on a terminal; NO_COLOR turns it off)\n";

struct ShowOptions {
  bool as_json = false;
  bool as_rows = false;
  std::string color = "auto";
  std::string cells_file;
  std::vector<std::string> targets;
};

// The report's path; "" with error said when there is none to show.
std::string chosen_report(const ShowOptions& o, std::ostream& err) {
  std::string target = o.targets.empty() ? "." : o.targets.front();
  std::string error;
  std::string path = std::filesystem::is_directory(target) ? newest_report(target, error) : target;
  if (!error.empty()) err << "firstassert show: " << error << "\n";
  return error.empty() ? path : "";
}

std::optional<CellNames> cells_for(const ShowOptions& o, const std::string& report_path, std::ostream& err) {
  if (o.cells_file.empty()) return cell_names_beside(report_path);
  nlohmann::json document;
  if (o.cells_file == "-") {
    document = nlohmann::json::parse(std::cin, nullptr, /*allow_exceptions=*/false);
  } else {
    std::ifstream in(o.cells_file);
    if (in) document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (!document.is_object()) {
    err << "firstassert show: --cells " << o.cells_file << ": not a JSON object of cell names\n";
    return std::nullopt;
  }
  return cell_names_from(document);
}

bool colored(const ShowOptions& o, const std::ostream& out) {
  if (o.color != "auto") return o.color == "always";
  const char* term = std::getenv("TERM");
  return &out == &std::cout && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr && term != nullptr &&
         std::string(term) != "dumb";
}

}  // namespace

int show_command(const Args& args, std::ostream& out, std::ostream& err) {
  ShowOptions o;
  CLI::App app;
  app.add_flag("--json", o.as_json);
  app.add_flag("--rows", o.as_rows);
  app.add_option("--color", o.color);
  app.add_option("--cells", o.cells_file);
  app.add_option("target", o.targets);
  if (std::optional<int> status = answer_parse(parse_arguments(app, args), "show", kUsage, out, err)) return *status;
  if (o.color != "auto" && o.color != "always" && o.color != "never") {
    err << "firstassert show: --color must be auto, always or never, not '" << o.color << "'\n";
    return kBadInput;
  }
  if (o.as_json && o.as_rows) {
    err << "firstassert show: --json or --rows, not both\n";
    return kBadInput;
  }
  if (o.targets.size() > 1) {
    err << "firstassert show: one report or directory at a time ('" << o.targets[1] << "' is one too many)\n";
    return kBadInput;
  }
  std::string path = chosen_report(o, err);
  if (path.empty()) return kBadInput;
  std::string error;
  std::optional<LoadedReport> report = load_report(path, error);
  if (!report) {
    err << "firstassert show: " << error << "\n";
    return kBadInput;
  }
  std::optional<CellNames> cells = cells_for(o, path, err);
  if (!cells) return kBadInput;
  resolve_offline(report->json);
  const auto dump = [&](const nlohmann::json& j) {
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  };
  try {
    if (o.as_json) {
      dump(report->json);
    } else if (o.as_rows) {
      dump(render_rows(view_report(report->json, path, *cells)));
    } else {
      render_text(view_report(report->json, path, *cells), out, colored(o, out));
    }
  } catch (const std::exception& e) {
    err << "firstassert show: " << path << ": cannot be shown (" << e.what() << ")\n";
    return kBadInput;
  }
  return 0;
}

}  // namespace firstassert::cli
