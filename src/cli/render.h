// A report as text for a person (what firstassert show prints). Never throws on a report of the right schema with
// fields of unexpected types: they show as "?" (the fuzz target in tests/fuzz holds it to that).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace firstassert::cli {

void render_report(const nlohmann::json& report, const std::string& path, std::ostream& out, bool color);

}  // namespace firstassert::cli
