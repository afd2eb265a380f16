// A command's arguments, parsed with CLI11. The help stays each command's own page (hand-written, kept true by the
// golden tests), so CLI11's help flag is replaced by ours; a parse error is one line for the caller to print.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>

#include "commands.h"

namespace firstassert::cli {

struct ParseOutcome {
  bool help = false;
  std::string error;  // empty when the arguments were good
};

// Adds -h/--help to app, then parses args (in their order). Throws nothing.
ParseOutcome parse_arguments(CLI::App& app, const Args& args);

// What a command does with the outcome: the usage on out for --help (0), one line on err for bad arguments
// ("firstassert COMMAND: what was wrong (see firstassert COMMAND --help)", kBadInput), else nothing (nullopt).
std::optional<int> answer_parse(const ParseOutcome& outcome, const char* command, const char* usage, std::ostream& out,
                                std::ostream& err);

}  // namespace firstassert::cli
