// firstassert merge [--skew SECONDS] [--json] DIR...: the reports of one job (many hosts and ranks), and which rank
// failed first. Times are the wall clocks of the hosts that wrote them, so the order between hosts is only as good
// as their clock agreement: said plainly, and warned about when two failures are closer than the skew allowed.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "commands.h"
#include "options.h"
#include "core/demangle.h"
#include "report_reader.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

struct Rank {
  std::string path;
  std::string host;
  long long pid = 0;
  std::optional<long long> rank;
  bool failed = false;
  long long error_ns = 0;
  std::string error;   // "cudaErrorAssert (710) at cudaDeviceSynchronize"
  std::string kernel;  // the culprit, short
  std::string values;  // what the values probe found in the culprit call's values (culprit.values.text), or ""
  std::string confidence;
};

Rank summarize(const LoadedReport& report) {
  const json& r = report.json;
  const json& process = object_of(r, "process");
  Rank k;
  k.path = report.path;
  k.host = text_of(process, "host", "?");
  k.pid = number_of(process, "pid");
  if (process.is_object() && process.contains("rank") && process["rank"].is_number_integer())
    k.rank = process["rank"].get<long long>();
  const json& first = object_of(r, "first_error");
  if (!first.is_null()) {
    k.failed = true;
    k.error_ns = number_of(first, "time_ns");
    k.error = text_of(first, "name", "?") + " (" + std::to_string(number_of(first, "code")) + ") at " +
              text_of(first, "api", "?");
    const json& culprit = object_of(r, "culprit");
    if (!culprit.is_null()) {
      std::string kernel = text_of(culprit, "kernel", text_of(culprit, "mangled"));
      k.kernel = kernel.empty() ? "(CUDA graph)" : short_kernel_name(kernel);
      k.confidence = text_of(culprit, "confidence", "?");
      const json& values = object_of(culprit, "values");
      if (!values.is_null()) k.values = text_of(values, "text");
    }
  }
  return k;
}

std::string who(const Rank& k) {
  return (k.rank ? "rank " + std::to_string(*k.rank) : "pid " + std::to_string(k.pid)) + " on " + k.host;
}

std::string seconds(long long ns) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << static_cast<double>(ns) / 1e9 << " s";
  return s.str();
}

const char* kUsage =
    "usage: firstassert merge [--skew SECONDS] [--json] DIR...\n"
    "  Reads every firstassert-*.json in the directories (the reports of one job, from all hosts and ranks),\n"
    "  orders the first errors by wall time, and names the rank that failed first, with its culprit (and what\n"
    "  the values probe found in the culprit call's values, when the job ran with --values=probe); the others\n"
    "  are listed as secondary, with what they failed on.\n"
    "  --skew SECONDS  clock disagreement to allow between hosts (default 1): closer failures on different hosts\n"
    "                  are flagged as possibly out of order\n"
    "  --json          the same as JSON\n";

}  // namespace

int merge_command(const Args& args, std::ostream& out, std::ostream& err) {
  double skew_seconds = 1.0;
  bool as_json = false;
  std::string skew = "1";
  std::vector<std::string> dirs;
  CLI::App app;
  app.add_flag("--json", as_json);
  app.add_option("--skew", skew);
  app.add_option("dirs", dirs);
  if (std::optional<int> status = answer_parse(parse_arguments(app, args), "merge", kUsage, out, err)) return *status;
  char* end = nullptr;
  skew_seconds = std::strtod(skew.c_str(), &end);
  if (skew.empty() || *end != '\0' || !std::isfinite(skew_seconds) || skew_seconds < 0) {
    err << "firstassert merge: --skew needs a number of seconds >= 0, not '" << skew << "'\n";
    return kBadInput;
  }
  if (dirs.empty()) {
    err << "firstassert merge: no directory given (see firstassert merge --help)\n";
    return kBadInput;
  }

  bool bad = false;
  std::vector<Rank> ranks;
  for (const std::string& dir : dirs) {
    std::string error;
    std::vector<std::string> paths = reports_in(dir, error);
    if (!error.empty() || paths.empty()) {
      err << "firstassert merge: " << (error.empty() ? dir + ": no firstassert report (firstassert-*.json) here" : error)
          << "\n";
      bad = true;
      continue;
    }
    for (const std::string& path : paths) {
      std::optional<LoadedReport> report = load_report(path, error);
      if (!report) {
        err << "firstassert merge: " << error << "\n";
        bad = true;
        continue;
      }
      ranks.push_back(summarize(*report));
    }
  }
  std::vector<Rank> failed, healthy;
  for (const Rank& k : ranks) (k.failed ? failed : healthy).push_back(k);
  std::stable_sort(failed.begin(), failed.end(), [](const Rank& a, const Rank& b) { return a.error_ns < b.error_ns; });
  std::set<std::string> hosts;
  for (const Rank& k : failed) hosts.insert(k.host);
  // Clocks only disagree between hosts: the order is uncertain when another host's first failure came within the
  // skew of the first one.
  long long skew_ns = static_cast<long long>(skew_seconds * 1e9);
  const Rank* other_host = nullptr;
  for (const Rank& k : failed) {
    if (k.host != failed.front().host) {
      other_host = &k;
      break;
    }
  }
  bool close_call = other_host != nullptr && other_host->error_ns - failed.front().error_ns < skew_ns;

  if (as_json) {
    json j;
    j["reports"] = ranks.size();
    j["compared"] = "first_error.time_ns, wall clocks of " + std::to_string(hosts.size()) + " host(s)";
    j["skew_seconds"] = skew_seconds;
    j["order_uncertain"] = close_call;
    json list = json::array();
    for (size_t i = 0; i < failed.size(); ++i) {
      const Rank& k = failed[i];
      list.push_back({{"role", i == 0 ? "first" : "secondary"},
                      {"report", k.path},
                      {"host", k.host},
                      {"pid", k.pid},
                      {"rank", k.rank ? json(*k.rank) : json(nullptr)},
                      {"error", k.error},
                      {"time_ns", k.error_ns},
                      {"after_first_ns", k.error_ns - failed[0].error_ns},
                      {"culprit", k.kernel},
                      {"confidence", k.confidence},
                      {"values", k.values.empty() ? json(nullptr) : json(k.values)}});
    }
    j["failures"] = list;
    json ok = json::array();
    for (const Rank& k : healthy) ok.push_back({{"report", k.path}, {"host", k.host}, {"rank", k.rank ? json(*k.rank) : json(nullptr)}});
    j["no_error"] = ok;
    out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return bad ? kBadInput : 0;
  }

  out << ranks.size() << " report" << (ranks.size() == 1 ? "" : "s") << ", " << failed.size() << " with an error\n";
  if (failed.empty()) {
    out << "no rank recorded a CUDA error\n";
    return bad ? kBadInput : 0;
  }
  const Rank& first = failed.front();
  out << "\nfailed first: " << who(first) << "\n";
  out << "  " << first.error << "\n";
  if (!first.kernel.empty()) out << "  culprit " << first.kernel << " [" << first.confidence << "]\n";
  if (!first.values.empty()) out << "  values  " << first.values << "\n";
  out << "  report  " << first.path << "\n";
  if (failed.size() > 1) {
    out << "\nsecondary (failed after it):\n";
    for (size_t i = 1; i < failed.size(); ++i) {
      const Rank& k = failed[i];
      out << "  +" << seconds(k.error_ns - first.error_ns) << "  " << who(k) << ": " << k.error
          << (k.kernel.empty() ? "" : ", culprit " + k.kernel) << "\n";
    }
  }
  if (!healthy.empty()) {
    out << "\nno error:";
    for (const Rank& k : healthy) out << " " << who(k) << ";";
    out << "\n";
  }
  out << "\ntimes compared: first_error.time_ns, the wall clocks of " << hosts.size() << " host"
      << (hosts.size() == 1 ? "" : "s") << "\n";
  if (close_call) {
    out << "warning: the first failures on " << first.host << " and " << other_host->host << " are "
        << seconds(other_host->error_ns - first.error_ns) << " apart, less than the clock skew allowed ("
        << skew_seconds << " s): which host failed first is uncertain\n";
  }
  return bad ? kBadInput : 0;
}

}  // namespace firstassert::cli
