#include "shim_run.h"

#include <fstream>

#include <cstdlib>
#include <sstream>

namespace e2e {

Outcome run_in(const TempDir& dir, const std::vector<std::string>& argv, std::map<std::string, std::string> env) {
  env["FIRSTASSERT_DIR"] = dir.path();
  Outcome o;
  o.run = run(argv, env, dir.path());
  o.reports = dir.files("firstassert-");
  if (!o.reports.empty()) o.report = nlohmann::json::parse(read_file(o.reports.front()), nullptr, false);
  return o;
}

int printed(const std::string& out, const std::string& label) {
  size_t at = out.find(label + ": ");
  return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + label.size() + 2);
}

std::string printed_word(const std::string& out, const std::string& label) {
  size_t at = out.find(label + ": ");
  if (at == std::string::npos) return {};
  size_t start = at + label.size() + 2;
  return out.substr(start, out.find_first_of(" \n", start) - start);
}

bool has_candidate(const nlohmann::json& report, const std::string& mangled) {
  for (const nlohmann::json& c : report["candidates"]) {
    if (c["mangled"] == mangled) return true;
  }
  return false;
}

std::string without_firstassert_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("firstassert: ", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

int line_of(const std::string& path, const std::string& marker) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(marker) != std::string::npos) return n;
  }
  return -1;
}

}  // namespace e2e
