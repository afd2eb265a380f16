// What triage reads besides plain text: saved notebooks (.ipynb: each cell's stream and error outputs, in cell order)
// and JSON-lines log records (a log service's export: {"timestamp": ..., "message": "..."} per line), each turned
// into the lines a terminal would have shown, for the scanner.
#pragma once

#include <istream>
#include <string>
#include <string_view>

#include "triage_scan.h"

namespace firstassert::cli::triage {

// Whether a log's name or first bytes say it is a notebook.
bool looks_like_notebook(std::string_view name, std::string_view start);

// The outputs of a notebook's cells, fed to the scanner (which has begun the log; this ends it). False, with a
// one-line reason in error, when the input is not a notebook it can read; lines fed before that still count.
bool scan_notebook(std::istream& in, Scanner& scanner, std::string& error);

// One line of a log: a JSON record's message (its lines, one by one), or the line itself.
void feed_log_line(Scanner& scanner, std::string_view raw, bool cut);

}  // namespace firstassert::cli::triage
