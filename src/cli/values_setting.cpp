#include "values_setting.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#ifndef FIRSTASSERT_INSTALL_PYTHONDIR
#define FIRSTASSERT_INSTALL_PYTHONDIR ""
#endif

namespace firstassert::cli {

namespace {

namespace fs = std::filesystem;

// The modes of firstassert.values (python/firstassert/values/activate.py keeps the same list).
const std::vector<std::string> kModes = {"off", "check", "probe"};

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The first candidate holding sitecustomize.py, or "".
std::string found_site(const std::vector<std::string>& sites) {
  for (const std::string& site : sites) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(site) / "sitecustomize.py", ec)) return fs::canonical(site, ec).string();
  }
  return {};
}

std::string off(std::ostream& err, const std::string& line) {
  err << "firstassert run: " << line << "; values checks are off for this job\n";
  setenv("FIRSTASSERT_VALUES", "off", 1);
  return "off";
}

}  // namespace

std::vector<std::string> values_site_candidates(const std::string& self_path) {
  fs::path bin = fs::path(self_path).parent_path();
  std::vector<std::string> out = {(bin / "../values/_site").lexically_normal().string(),  // a wheel's _native/
                                  (bin / "../../python/firstassert/values/_site").lexically_normal().string()};
  if (std::string(FIRSTASSERT_INSTALL_PYTHONDIR).size() > 0)
    out.push_back((fs::path(FIRSTASSERT_INSTALL_PYTHONDIR) / "firstassert/values/_site").string());
  return out;
}

namespace {

// First on PYTHONPATH, even where it already is further on: Python imports the first sitecustomize it finds, and
// ours runs the one it hides. False (and PYTHONPATH as it was) when site is unknown or PYTHONPATH cannot carry it.
bool put_site_first(const std::string& site) {
  if (site.empty() || site.find(':') != std::string::npos) return false;
  const char* pythonpath = std::getenv("PYTHONPATH");
  std::string joined = site;
  std::string old = pythonpath != nullptr ? pythonpath : "";
  // Every other entry kept, empty ones too (Python reads an empty entry as the current directory).
  for (size_t begin = 0; !old.empty() && begin <= old.size();) {
    size_t end = old.find(':', begin);
    if (end == std::string::npos) end = old.size();
    std::string entry = old.substr(begin, end - begin);
    if (entry != site) joined += ":" + entry;
    begin = end + 1;
  }
  setenv("PYTHONPATH", joined.c_str(), 1);
  return true;
}

}  // namespace

std::string set_values_environment(const std::optional<std::string>& flag, const std::vector<std::string>& sites,
                                   std::ostream& err) {
  std::string site = found_site(sites);
  // Whatever the values mode: the sitecustomize also keeps the model's lines of compiled graphs, at no cost to a
  // job that does not compile. Without it (no Python package beside this program) reports lack those lines only.
  bool site_first = put_site_first(site);
  const char* inherited = std::getenv("FIRSTASSERT_VALUES");
  if (!flag && inherited == nullptr) return "";
  std::string named = flag ? *flag : inherited;
  std::string source = flag ? "--values " + named : "FIRSTASSERT_VALUES=" + named;
  std::string mode = lowered(named);
  if (mode.empty()) mode = "off";
  if (std::find(kModes.begin(), kModes.end(), mode) == kModes.end()) {
    std::string modes;
    for (const std::string& m : kModes) modes += (modes.empty() ? "" : ", ") + m;
    return off(err, source + " is not a values mode (modes: " + modes + ")");
  }
  if (mode == "off") {
    setenv("FIRSTASSERT_VALUES", "off", 1);
    return mode;
  }
  if (site.empty()) {
    std::string looked;
    for (const std::string& s : sites) looked += (looked.empty() ? "" : ", ") + s;
    return off(err, source + " needs firstassert's Python package, whose sitecustomize.py is not beside this program "
                             "(looked in " + looked + ")");
  }
  if (!site_first) {
    return off(err, source + ": the directory of firstassert's sitecustomize.py, " + site +
                        ", holds a colon, which PYTHONPATH cannot carry");
  }
  setenv("FIRSTASSERT_VALUES", mode.c_str(), 1);
  return mode;
}

}  // namespace firstassert::cli
