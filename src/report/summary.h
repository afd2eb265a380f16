// The few lines a person sees on stderr: when the first sticky error is found, and when a launch is refused.
#pragma once

#include <string>
#include <vector>

#include "core/tracker.h"

namespace firstassert {

// Each returned string is one line, without the "firstassert: " prefix.
std::vector<std::string> summary_lines(const Findings& findings, const std::string& report_path);
std::string launch_error_line(const LaunchError& error);

}  // namespace firstassert
