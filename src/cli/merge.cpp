// firstassert merge [--skew SECONDS] [--json] DIR...: the reports of one job (many hosts and ranks), and which rank
// failed first. Times are the wall clocks of the hosts that wrote them, so the order between hosts is only as good
// as their clock agreement: said plainly, and warned about when two failures are closer than the skew allowed.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "report/gpu_words.h"
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
  std::string model;  // a compiled culprit's first line in the model (culprit.compiled.model_lines), or ""
  // The GPU whose context returned the first error (devices[0]): cuda:N is the process's own numbering (after its
  // CUDA_VISIBLE_DEVICES); the UUID names the board across ranks and hosts. Empty: not recorded.
  long long gpu_ordinal = -1;
  std::string gpu_name, gpu_uuid, gpu_pci_bus_id;
};

void read_gpu(const json& report, Rank& k) {
  const json& devices = array_of(report, "devices");
  if (devices.empty() || !flag_of(devices[0], "failed_first", false)) return;
  k.gpu_ordinal = number_of(devices[0], "ordinal", -1);
  k.gpu_name = text_of(devices[0], "name");
  k.gpu_uuid = text_of(devices[0], "uuid");
  k.gpu_pci_bus_id = text_of(devices[0], "pci_bus_id");
}

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
    read_gpu(r, k);
    const json& culprit = object_of(r, "culprit");
    if (!culprit.is_null()) {
      k.kernel = short_kernel_of(culprit);
      k.confidence = text_of(culprit, "confidence", "?");
      const json& values = object_of(culprit, "values");
      if (!values.is_null()) k.values = text_of(values, "text");
      const json& model_lines = array_of(object_of(culprit, "compiled"), "model_lines");
      if (!model_lines.empty()) {
        const json& line = model_lines[0];
        k.model = text_of(line, "file", "?") + ":" + std::to_string(number_of(line, "line")) + ": " +
                  text_of(line, "code");
      }
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
    "  are listed as secondary, with what they failed on; then the failures by physical GPU (its UUID, which\n"
    "  tells whether two ranks failed on the same board, where cuda:N is each rank's own numbering).\n"
    "  --skew SECONDS  clock disagreement to allow between hosts (default 1): closer failures on different hosts\n"
    "                  are flagged as possibly out of order\n"
    "  --json          the same as JSON\n";

struct Options {
  double skew_seconds = 1.0;
  bool json = false;
  std::vector<std::string> dirs;
};

// The options, or the exit status when there is nothing to merge: the usage for --help, one line on err for bad
// arguments.
std::optional<int> parse_options(const Args& args, Options& options, std::ostream& out, std::ostream& err) {
  std::string skew = "1";
  CLI::App app;
  app.add_flag("--json", options.json);
  app.add_option("--skew", skew);
  app.add_option("dirs", options.dirs);
  if (std::optional<int> status = answer_parse(parse_arguments(app, args), "merge", kUsage, out, err)) return status;
  char* end = nullptr;
  options.skew_seconds = std::strtod(skew.c_str(), &end);
  if (skew.empty() || *end != '\0' || !std::isfinite(options.skew_seconds) || options.skew_seconds < 0) {
    err << "firstassert merge: --skew needs a number of seconds >= 0, not '" << skew << "'\n";
    return kBadInput;
  }
  if (options.dirs.empty()) {
    err << "firstassert merge: no directory given (see firstassert merge --help)\n";
    return kBadInput;
  }
  return std::nullopt;
}

// Every report in the directories, summarized. A directory without one and a report that cannot be read are one line
// each on err, and make all_read false; the others are still read.
std::vector<Rank> read_reports(const std::vector<std::string>& dirs, std::ostream& err, bool& all_read) {
  std::vector<Rank> ranks;
  for (const std::string& dir : dirs) {
    std::string error;
    std::vector<std::string> paths = reports_in(dir, error);
    if (!error.empty() || paths.empty()) {
      if (error.empty()) error = dir + ": no firstassert report (firstassert-*.json) here";
      err << "firstassert merge: " << error << "\n";
      all_read = false;
      continue;
    }
    for (const std::string& path : paths) {
      std::optional<LoadedReport> report = load_report(path, error);
      if (!report) {
        err << "firstassert merge: " << error << "\n";
        all_read = false;
        continue;
      }
      ranks.push_back(summarize(*report));
    }
  }
  return ranks;
}

// The job's ranks: those that failed in the order of their first error's wall time (the first one first), and those
// that recorded no error.
struct Outcome {
  size_t reports = 0;
  std::vector<Rank> failed;
  std::vector<Rank> healthy;
  size_t hosts = 0;                  // the hosts whose clocks were compared: those of the failed ranks
  std::optional<size_t> other_host;  // in failed: the first failure on a host other than the first one's
  bool order_uncertain = false;      // that failure came within the skew allowed of the first
};

size_t host_count(const std::vector<Rank>& ranks) {
  std::set<std::string> hosts;
  for (const Rank& k : ranks) hosts.insert(k.host);
  return hosts.size();
}

// The index of the first rank in failed on a host other than failed's first; nullopt when all are on one host.
std::optional<size_t> first_on_another_host(const std::vector<Rank>& failed) {
  for (size_t i = 0; i < failed.size(); ++i) {
    if (failed[i].host != failed.front().host) return i;
  }
  return std::nullopt;
}

Outcome order_by_first_error(const std::vector<Rank>& ranks, double skew_seconds) {
  Outcome o;
  o.reports = ranks.size();
  for (const Rank& k : ranks) (k.failed ? o.failed : o.healthy).push_back(k);
  std::stable_sort(o.failed.begin(), o.failed.end(),
                   [](const Rank& a, const Rank& b) { return a.error_ns < b.error_ns; });
  o.hosts = host_count(o.failed);
  // Clocks only disagree between hosts: the order is uncertain when another host's first failure came within the
  // skew of the first one.
  o.other_host = first_on_another_host(o.failed);
  long long skew_ns = static_cast<long long>(skew_seconds * 1e9);
  o.order_uncertain = o.other_host && o.failed[*o.other_host].error_ns - o.failed.front().error_ns < skew_ns;
  return o;
}

json rank_or_null(const Rank& k) { return k.rank ? json(*k.rank) : json(nullptr); }
json text_or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

// The failed ranks by the physical GPU they failed on (its UUID), in the order of each GPU's first failure; ranks
// whose report names no UUID are left out (ungrouped).
struct GpuGroup {
  std::string uuid;
  std::vector<size_t> failed;  // indexes into Outcome::failed
};

std::vector<GpuGroup> group_by_gpu(const std::vector<Rank>& failed) {
  std::vector<GpuGroup> groups;
  for (size_t i = 0; i < failed.size(); ++i) {
    if (failed[i].gpu_uuid.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GpuGroup& g) { return g.uuid == failed[i].gpu_uuid; });
    if (it == groups.end()) it = groups.insert(groups.end(), GpuGroup{failed[i].gpu_uuid, {}});
    it->failed.push_back(i);
  }
  return groups;
}

json gpu_or_null(const Rank& k) {
  if (k.gpu_ordinal < 0 && k.gpu_uuid.empty()) return nullptr;
  return {{"ordinal", k.gpu_ordinal >= 0 ? json(k.gpu_ordinal) : json(nullptr)},
          {"name", text_or_null(k.gpu_name)},
          {"uuid", text_or_null(k.gpu_uuid)},
          {"pci_bus_id", text_or_null(k.gpu_pci_bus_id)}};
}

void print_json(const Outcome& o, double skew_seconds, std::ostream& out) {
  json j;
  j["reports"] = o.reports;
  j["compared"] = "first_error.time_ns, wall clocks of " + std::to_string(o.hosts) + " host(s)";
  j["skew_seconds"] = skew_seconds;
  j["order_uncertain"] = o.order_uncertain;
  json failures = json::array();
  for (size_t i = 0; i < o.failed.size(); ++i) {
    const Rank& k = o.failed[i];
    failures.push_back({{"role", i == 0 ? "first" : "secondary"},
                        {"report", k.path},
                        {"host", k.host},
                        {"pid", k.pid},
                        {"rank", rank_or_null(k)},
                        {"error", k.error},
                        {"time_ns", k.error_ns},
                        {"after_first_ns", k.error_ns - o.failed[0].error_ns},
                        {"culprit", k.kernel},
                        {"confidence", k.confidence},
                        {"values", text_or_null(k.values)},
                        {"model", text_or_null(k.model)},
                        {"gpu", gpu_or_null(k)}});
  }
  j["failures"] = failures;
  json gpus = json::array();
  for (const GpuGroup& g : group_by_gpu(o.failed)) {
    json reports = json::array();
    for (size_t i : g.failed) reports.push_back({{"report", o.failed[i].path}, {"host", o.failed[i].host},
                                                 {"rank", rank_or_null(o.failed[i])}});
    gpus.push_back({{"uuid", g.uuid}, {"failures", reports}});
  }
  j["gpus"] = gpus;
  json no_error = json::array();
  for (const Rank& k : o.healthy) no_error.push_back({{"report", k.path}, {"host", k.host}, {"rank", rank_or_null(k)}});
  j["no_error"] = no_error;
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void print_first(const Rank& first, std::ostream& out) {
  out << "\nfailed first: " << who(first) << "\n";
  out << "  " << first.error << "\n";
  if (!first.kernel.empty()) out << "  culprit " << first.kernel << " [" << first.confidence << "]\n";
  if (first.gpu_ordinal >= 0 || !first.gpu_uuid.empty())
    out << "  gpu     " << gpu_words(first.gpu_ordinal, first.gpu_name, first.gpu_uuid, first.gpu_pci_bus_id) << "\n";
  if (!first.model.empty()) out << "  model   " << first.model << "\n";
  if (!first.values.empty()) out << "  values  " << first.values << "\n";
  out << "  report  " << first.path << "\n";
}

void print_secondary(const std::vector<Rank>& failed, std::ostream& out) {
  if (failed.size() <= 1) return;
  out << "\nsecondary (failed after it):\n";
  for (size_t i = 1; i < failed.size(); ++i) {
    const Rank& k = failed[i];
    out << "  +" << seconds(k.error_ns - failed.front().error_ns) << "  " << who(k) << ": " << k.error
        << (k.kernel.empty() ? "" : ", culprit " + k.kernel) << "\n";
  }
}

// Which failures share a board: cuda:N differs from rank to rank (each its own CUDA_VISIBLE_DEVICES), the UUID does
// not. Said only when the reports name the GPUs.
void print_gpus(const std::vector<Rank>& failed, std::ostream& out) {
  std::vector<GpuGroup> groups = group_by_gpu(failed);
  if (groups.empty()) return;
  out << "\nby GPU (UUID; cuda:N is each process's own numbering):\n";
  for (const GpuGroup& g : groups) {
    const Rank& first = failed[g.failed.front()];
    out << "  " << g.uuid << (first.gpu_name.empty() ? "" : " " + first.gpu_name) << ": ";
    for (size_t n = 0; n < g.failed.size(); ++n) {
      const Rank& k = failed[g.failed[n]];
      out << (n == 0 ? "" : "; ") << who(k) << " (cuda:" << (k.gpu_ordinal >= 0 ? std::to_string(k.gpu_ordinal) : "?")
          << (g.failed[n] == 0 ? ", failed first" : "") << ")";
    }
    out << "\n";
  }
  size_t ungrouped = static_cast<size_t>(
      std::count_if(failed.begin(), failed.end(), [](const Rank& k) { return k.gpu_uuid.empty(); }));
  if (ungrouped > 0) out << "  " << ungrouped << " failed report(s) name no GPU UUID\n";
}

void print_healthy(const std::vector<Rank>& healthy, std::ostream& out) {
  if (healthy.empty()) return;
  out << "\nno error:";
  for (const Rank& k : healthy) out << " " << who(k) << ";";
  out << "\n";
}

// Which clocks were compared, and a warning when they may not agree well enough to order the first two hosts.
void print_clock_note(const Outcome& o, double skew_seconds, std::ostream& out) {
  out << "\ntimes compared: first_error.time_ns, the wall clocks of " << o.hosts << " host" << (o.hosts == 1 ? "" : "s")
      << "\n";
  if (!o.order_uncertain) return;
  const Rank& first = o.failed.front();
  const Rank& other = o.failed[*o.other_host];
  out << "warning: the first failures on " << first.host << " and " << other.host << " are "
      << seconds(other.error_ns - first.error_ns) << " apart, less than the clock skew allowed (" << skew_seconds
      << " s): which host failed first is uncertain\n";
}

void print_text(const Outcome& o, double skew_seconds, std::ostream& out) {
  out << o.reports << " report" << (o.reports == 1 ? "" : "s") << ", " << o.failed.size() << " with an error\n";
  if (o.failed.empty()) {
    out << "no rank recorded a CUDA error\n";
    return;
  }
  print_first(o.failed.front(), out);
  print_secondary(o.failed, out);
  print_gpus(o.failed, out);
  print_healthy(o.healthy, out);
  print_clock_note(o, skew_seconds, out);
}

}  // namespace

int merge_command(const Args& args, std::ostream& out, std::ostream& err) {
  Options options;
  if (std::optional<int> status = parse_options(args, options, out, err)) return *status;
  bool all_read = true;
  std::vector<Rank> ranks = read_reports(options.dirs, err, all_read);
  Outcome outcome = order_by_first_error(ranks, options.skew_seconds);
  if (options.json)
    print_json(outcome, options.skew_seconds, out);
  else
    print_text(outcome, options.skew_seconds, out);
  return all_read ? 0 : kBadInput;
}

}  // namespace firstassert::cli
