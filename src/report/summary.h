// The few lines a person sees on stderr the moment the primary error is found.
#pragma once

#include <string>

#include "core/tracker.h"

namespace firstassert {

// Each returned string is one line, without the "firstassert: " prefix.
std::vector<std::string> summary_lines(const Findings& findings, const std::string& report_path);

}  // namespace firstassert
