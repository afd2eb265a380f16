// A report view (report_view.h) printed: as text for a terminal, or as its rows in JSON for the Python package's
// front ends (a notebook cell, firstassert.show()), which print the same rows their own way.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "cell_names.h"
#include "report_view.h"

namespace firstassert::cli {

// Labels in a column, each line wrapped at 100 columns unless it must stay whole; colour only when asked.
void render_text(const ReportView& view, std::ostream& out, bool color);
// {"path": ..., "rows": [{"key": ..., "label": ..., "lines": [...]}]}
nlohmann::json render_rows(const ReportView& view);

// The report as text: its view, then printed.
void render_report(const nlohmann::json& report, const std::string& path, std::ostream& out, bool color,
                   const CellNames& cells = {});

}  // namespace firstassert::cli
