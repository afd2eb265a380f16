// firstassert: the command line of the project (run a job under the shim, show a report, merge a job's reports,
// triage a log written without the shim).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

const char* kUsage =
    "firstassert: names the first CUDA kernel whose device-side assert fired\n"
    "\n"
    "usage:\n"
    "  firstassert run [--sync MODE] [--values MODE] [--dir DIR] [--] COMMAND...\n"
    "                                                 run a job with the shim, list its reports; --values check:\n"
    "                                                 its CUDA ops' bad values raise PyTorch's error, not an assert\n"
    "  firstassert lib                                the libfirstassert.so to put in LD_PRELOAD\n"
    "  firstassert show [--json] [REPORT|DIR]         a report, for a person\n"
    "  firstassert merge [--skew SECONDS] [--json] DIR...  which rank of a job failed first\n"
    "  firstassert triage LOG...                      what a log of a job run without the shim tells\n"
    "  firstassert --version\n"
    "\n"
    "Each command has its own --help. Exit status: run passes on the job's; the others 0 when done, 1 when\n"
    "triage found nothing, 2 for bad usage or bad input files (the good ones are still read).\n";

// Where this program is, to find the shim beside it: /proc/self/exe, else (no /proc: a chroot, some containers) the
// path it was started by, when that names a file.
std::string self_path(const char* argv0) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) return std::string(path, static_cast<size_t>(n));
  if (argv0 != nullptr && std::strchr(argv0, '/') != nullptr && realpath(argv0, path) != nullptr) return path;
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace firstassert::cli;
  if (argc < 2) {
    std::cerr << kUsage;
    return kBadInput;
  }
  std::string command = argv[1];
  Args args(argv + 2, argv + argc);
  try {
    if (command == "run") return run_command(args, std::cout, std::cerr, self_path(argv[0]));
    if (command == "lib") return lib_command(args, std::cout, std::cerr, self_path(argv[0]));
    if (command == "show") return show_command(args, std::cout, std::cerr);
    if (command == "merge") return merge_command(args, std::cout, std::cerr);
    if (command == "triage") return triage_command(args, std::cout, std::cerr);
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    if (command == "--version") return version_command(std::cout);
  } catch (const std::exception& e) {
    std::cerr << "firstassert " << command << ": " << e.what() << "\n";
    return kBadInput;
  }
  std::cerr << "firstassert: unknown command '" << command << "' (run, lib, show, merge, triage; see firstassert --help)\n";
  return kBadInput;
}
