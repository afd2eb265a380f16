#include "options.h"

#include <vector>

namespace firstassert::cli {

ParseOutcome parse_arguments(CLI::App& app, const Args& args) {
  ParseOutcome outcome;
  app.set_help_flag();
  app.add_flag("-h,--help", outcome.help);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes a vector last argument first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    outcome.error = e.what();
  } catch (const std::exception& e) {
    outcome.error = e.what();
  }
  if (outcome.help) outcome.error.clear();  // --help with anything else: the help
  return outcome;
}

std::optional<int> answer_parse(const ParseOutcome& outcome, const char* command, const char* usage, std::ostream& out,
                                std::ostream& err) {
  if (outcome.help) {
    out << usage;
    return 0;
  }
  if (!outcome.error.empty()) {
    err << "firstassert " << command << ": " << outcome.error << " (see firstassert " << command << " --help)\n";
    return kBadInput;
  }
  return std::nullopt;
}

}  // namespace firstassert::cli
