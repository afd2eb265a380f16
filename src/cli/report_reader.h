// Reading reports back: every way a file can be wrong (missing, unreadable, truncated, not JSON, not a firstassert
// report, a newer schema) is one line naming the file and the problem, so the caller can go on with the others.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace firstassert::cli {

inline constexpr int kSchemaVersion = 1;  // "firstassert/1", what report_json.h writes

struct LoadedReport {
  std::string path;
  nlohmann::json json;
};

// The report in text, checked: nullopt with a reason ("not JSON: ...", "schema firstassert/2 is newer...").
std::optional<nlohmann::json> parse_report(std::string_view text, std::string& why);
// The report at path; on failure error is one line naming the file.
std::optional<LoadedReport> load_report(const std::string& path, std::string& error);
// The reports (firstassert-*.json) in dir, sorted by name; error when dir cannot be listed.
std::vector<std::string> reports_in(const std::string& dir, std::string& error);
// The newest report (by modification time) in dir, or "" with error.
std::string newest_report(const std::string& dir, std::string& error);

// Field access that never throws, whatever the report holds.
std::string text_of(const nlohmann::json& j, const char* key, const std::string& fallback = "");
long long number_of(const nlohmann::json& j, const char* key, long long fallback = 0);
bool flag_of(const nlohmann::json& j, const char* key, bool fallback);
const nlohmann::json& object_of(const nlohmann::json& j, const char* key);  // null json when absent or not an object
const nlohmann::json& array_of(const nlohmann::json& j, const char* key);   // empty array when absent

// A launch's or culprit's kernel, in full and short (a template's arguments dropped): never empty, since an empty
// name would read as nothing at all. A graph launch without a kernel is "(CUDA graph)", any other "(unknown kernel)".
std::string kernel_of(const nlohmann::json& launch);
std::string short_kernel_of(const nlohmann::json& launch);

}  // namespace firstassert::cli
