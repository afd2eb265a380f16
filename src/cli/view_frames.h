// A launch's stacks as lines of a report view: the Python frames in the user's terms, with the runs of a notebook's
// or a runner's own machinery folded; the native frames as symbolized; the frame a person looks at first.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cell_names.h"
#include "report_view.h"

namespace firstassert::cli {

// The innermost frame of the user's own code (report/user_code.h), else the innermost frame; null without frames.
const nlohmann::json* launching_frame(const nlohmann::json& launch);
std::vector<Line> python_lines(const nlohmann::json& launch, const CellNames& cells);
std::vector<Line> native_lines(const nlohmann::json& launch);

}  // namespace firstassert::cli
