#include "report_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/demangle.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

const json kNull = nullptr;
const json kEmptyArray = json::array();

}  // namespace

std::optional<json> parse_report(std::string_view text, std::string& why) {
  if (text.empty()) {
    why = "empty file";
    return std::nullopt;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    why = text.back() == '\n' || text.back() == '}' ? "not valid JSON" : "not valid JSON (truncated?)";
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string()) {
    why = "not a firstassert report (no \"schema\")";
    return std::nullopt;
  }
  std::string schema = j["schema"];
  if (schema.rfind("firstassert/", 0) != 0) {
    why = "not a firstassert report (schema \"" + schema.substr(0, 40) + "\")";
    return std::nullopt;
  }
  std::string version = schema.substr(12);
  if (version.empty() || version.size() > 6 || !std::all_of(version.begin(), version.end(), ::isdigit)) {
    why = "unknown schema \"" + schema.substr(0, 40) + "\"";
    return std::nullopt;
  }
  if (std::stoi(version) > kSchemaVersion) {
    why = "schema " + schema + " is newer than this firstassert understands (firstassert/" +
          std::to_string(kSchemaVersion) + "); use a newer firstassert";
    return std::nullopt;
  }
  return j;
}

std::optional<LoadedReport> load_report(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    struct stat st {};
    error = path + ": " + (::stat(path.c_str(), &st) != 0 ? "no such file" : "cannot be read");
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  std::optional<json> j = parse_report(text.str(), why);
  if (!j) {
    error = path + ": " + why;
    return std::nullopt;
  }
  return LoadedReport{path, std::move(*j)};
}

std::vector<std::string> reports_in(const std::string& dir, std::string& error) {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    error = dir + ": " + (std::filesystem::exists(dir) ? "cannot be read" : "no such directory");
    return out;
  }
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.rfind("firstassert-", 0) == 0 && name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string newest_report(const std::string& dir, std::string& error) {
  std::vector<std::string> all = reports_in(dir, error);
  if (!error.empty()) return {};
  if (all.empty()) {
    error = dir + ": no firstassert report (firstassert-*.json) here";
    return {};
  }
  std::error_code ec;
  return *std::max_element(all.begin(), all.end(), [&](const std::string& a, const std::string& b) {
    return std::filesystem::last_write_time(a, ec) < std::filesystem::last_write_time(b, ec);
  });
}

std::string text_of(const json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

long long number_of(const json& j, const char* key, long long fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number_integer()) return it->get<long long>();
  if (it->is_number_unsigned()) return static_cast<long long>(std::min<unsigned long long>(it->get<unsigned long long>(), LLONG_MAX));
  return fallback;
}

bool flag_of(const json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

const json& object_of(const json& j, const char* key) {
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kNull;
}

const json& array_of(const json& j, const char* key) {
  if (!j.is_object()) return kEmptyArray;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmptyArray;
}

std::string kernel_of(const json& launch) {
  if (flag_of(launch, "graph", false) && text_of(launch, "kernel").empty()) return "(CUDA graph)";
  std::string name = text_of(launch, "kernel");
  if (name.empty()) name = text_of(launch, "mangled");
  return name.empty() ? "(unknown kernel)" : name;
}

std::string short_kernel_of(const json& launch) {
  std::string kernel = kernel_of(launch);
  return kernel.front() == '(' ? kernel : short_kernel_name(kernel);
}

}  // namespace firstassert::cli
