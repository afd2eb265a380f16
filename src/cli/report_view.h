// A report for a person, as rows: the one place that decides what a report says and in what words. `firstassert
// show` prints the rows as text (render.h); the Python package asks for them (`firstassert show --rows`) and shows
// them in a notebook's failing cell and in firstassert.show(), so the terminal and the notebook never disagree.
// Building the rows never throws on a report of the right schema with fields of unexpected types: they read as "?"
// (the fuzz target in tests/fuzz holds it to that).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cell_names.h"

namespace firstassert::cli {

enum class Tone { plain, strong, alarm, quiet };

struct Line {
  std::string text;
  Tone tone = Tone::plain;
  bool wrap = true;  // false for what must stay whole to be read or copied: signatures, paths, frames
};

struct Row {
  std::string key;    // stable, for front ends that pick rows: "first_error", "kernel", "launched_at", ...
  std::string label;  // what a person reads: "first error", "kernel", "launched at", ...
  std::vector<Line> lines;
  bool starts_section = false;  // a blank line before it, in text
};

struct ReportView {
  std::string path;
  std::vector<Row> rows;
};

ReportView view_report(const nlohmann::json& report, const std::string& path, const CellNames& cells);

}  // namespace firstassert::cli
