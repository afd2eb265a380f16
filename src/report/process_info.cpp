#include "process_info.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace firstassert {
namespace {

std::optional<long> rank_from_environment() {
  for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    errno = 0;
    long rank = std::strtol(value, &end, 10);
    if (errno == 0 && *end == '\0' && rank >= 0) return rank;
  }
  return std::nullopt;
}

std::vector<std::string> read_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

// Boot time (from /proc/stat) plus the process's start in clock ticks since boot (field 22 of /proc/self/stat).
int64_t start_time_ns() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  unsigned long long ticks = 0;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) ticks = std::strtoull(field.c_str(), nullptr, 10);
  }
  std::ifstream proc_stat("/proc/stat");
  long long boot = 0;
  while (std::getline(proc_stat, line)) {
    if (line.rfind("btime ", 0) == 0) boot = std::atoll(line.c_str() + 6);
  }
  long hz = sysconf(_SC_CLK_TCK);
  if (boot == 0 || hz <= 0) return 0;
  return boot * 1000000000LL + static_cast<int64_t>(ticks) * (1000000000LL / hz);
}

}  // namespace

ProcessInfo current_process_info() {
  ProcessInfo p;
  p.pid = static_cast<int>(getpid());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  if (p.host.empty()) p.host = "localhost";
  p.argv = read_argv();
  p.rank = rank_from_environment();
  p.start_time_ns = start_time_ns();
  return p;
}

}  // namespace firstassert
