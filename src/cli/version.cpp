// firstassert --version: the tool's version, the CUDA it was built against and the CUPTI it records through, and the
// PyTorch the Python on PATH would run a job with (found without importing it: its torch/version.py), so that one
// paste says what a bug report needs.
#include <cuda.h>
#include <cupti_version.h>
#include <stdio.h>

#include <array>
#include <ostream>
#include <string>

#include "commands.h"
#include "report/job_environment.h"

#ifndef FIRSTASSERT_VERSION
#define FIRSTASSERT_VERSION "unknown"
#endif

namespace firstassert::cli {
namespace {

// The torch package directory python3 on PATH imports, "" when it has none (or there is no python3).
std::string torch_dir_of_python() {
  FILE* pipe = popen(
      "python3 -c 'import importlib.util as u, os; s = u.find_spec(\"torch\"); "
      "print(os.path.dirname(s.origin) if s and s.origin else \"\")' 2>/dev/null",
      "r");
  if (pipe == nullptr) return {};
  std::array<char, 4096> buffer{};
  std::string out;
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
  pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string torch_here() {
  std::string dir = torch_dir_of_python();
  if (dir.empty()) return "none importable by python3 on PATH";
  std::string version, cuda;
  read_torch_package(dir, version, cuda);
  if (version.empty()) return "at " + dir + " (its version.py says no version)";
  return version + (cuda.empty() ? " (a CPU build)" : " (built with CUDA " + cuda + ")") + " at " + dir;
}

}  // namespace

int version_command(std::ostream& out) {
  out << "firstassert " << FIRSTASSERT_VERSION << "\n"
      << "built against CUDA " << CUDA_VERSION / 1000 << "." << CUDA_VERSION % 1000 / 10 << "'s headers (CUPTI API "
      << CUPTI_API_VERSION << "); records through the CUPTI of the job's own CUDA runtime (libcupti.so.13 or .12)\n"
      << "PyTorch here: " << torch_here() << "\n"
      << "a report says which CUDA runtime, CUPTI and PyTorch its job ran with (firstassert show: the cuda line)\n";
  return 0;
}

}  // namespace firstassert::cli
