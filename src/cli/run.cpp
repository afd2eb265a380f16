// firstassert run [--sync MODE] [--values MODE] [--dir DIR] [--] COMMAND...: the command, with the shim preloaded.
// Its standard streams are its own, its exit status and death by signal are passed on, and the reports it (or any
// child) wrote are listed at the end. The environment carries the shim (and the values checks) to children, so
// torchrun, srun and mpirun work wrapped or wrapping.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "preload_path.h"
#include "report_reader.h"
#include "values_setting.h"

#ifndef FIRSTASSERT_INSTALL_LIBDIR
#define FIRSTASSERT_INSTALL_LIBDIR ""
#endif

namespace firstassert::cli {
namespace {

namespace fs = std::filesystem;

const char* kUsage =
    "usage: firstassert run [--sync MODE] [--values MODE] [--dir DIR] [--] COMMAND [ARGS...]\n"
    "  Runs COMMAND with libfirstassert.so preloaded (LD_PRELOAD, inherited by its children), passes on its\n"
    "  exit status or the signal that killed it, and lists the reports written meanwhile.\n"
    "  --sync MODE    FIRSTASSERT_SYNC for the job: off (default), all, every:N or kernel:REGEX\n"
    "  --values MODE  FIRSTASSERT_VALUES for the job: off (default; without the option, as FIRSTASSERT_VALUES\n"
    "                 says), check or probe. In each Python process of the job, once it imports torch, the\n"
    "                 covered CUDA ops (cross_entropy/nll_loss, embedding, embedding_bag, index_select, x[idx],\n"
    "                 take, gather, scatter, binary_cross_entropy, multinomial, one_hot, ctc_loss):\n"
    "                 check: check their values before they run, and a bad one raises PyTorch's own error type\n"
    "                 (IndexError, RuntimeError) naming the value and where it is, instead of a device-side\n"
    "                 assert. It costs a synchronization per covered op.\n"
    "                 probe: copy the values their checks read into pinned host memory, without waiting for\n"
    "                 the GPU; when a kernel asserts, the report names the bad value of the culprit's own call\n"
    "                 (its culprit's \"values\", and a line on stderr at exit).\n"
    "                 Both put every aten op through Python (microseconds each).\n"
    "                 Not covered: torch.compile graphs (rerun with TORCH_COMPILE_DISABLE=1), CUDA graph\n"
    "                 replays. A job that is not Python, or never imports torch, is untouched.\n"
    "  --dir DIR      where reports go (FIRSTASSERT_DIR; default: the current directory)\n"
    "  Python jobs get a sitecustomize.py of firstassert's first on PYTHONPATH (it then runs the job's own): it\n"
    "  keeps, beside the code torch.compile generates, where in the model each compiled op was written, which a\n"
    "  report of a compiled kernel names (and runs the --values checks). A job that does not compile pays nothing.\n"
    "  The library is found through FIRSTASSERT_LIB, beside this program (../lib, or the same directory), or in\n"
    "  the install prefix. A path LD_PRELOAD cannot carry (it holds a space or colon) is reached through a link in\n"
    "  $XDG_RUNTIME_DIR/firstassert-UID (else /tmp/firstassert-UID).\n";

std::string find_shim(const std::string& self_path, std::string& looked) {
  if (const char* explicit_path = std::getenv("FIRSTASSERT_LIB"); explicit_path != nullptr && *explicit_path != '\0') {
    looked = std::string("FIRSTASSERT_LIB=") + explicit_path;
    return fs::is_regular_file(explicit_path) ? std::string(explicit_path) : std::string();
  }
  fs::path bin = fs::path(self_path).parent_path();
  std::vector<fs::path> candidates = {bin / "../lib/libfirstassert.so", bin / "../lib64/libfirstassert.so",
                                      bin / "../lib/x86_64-linux-gnu/libfirstassert.so", bin / "libfirstassert.so",
                                      bin / "../libfirstassert.so"};  // the last: a build tree
  if (std::strlen(FIRSTASSERT_INSTALL_LIBDIR) > 0)
    candidates.push_back(fs::path(FIRSTASSERT_INSTALL_LIBDIR) / "libfirstassert.so");
  for (const fs::path& c : candidates) {
    looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return fs::canonical(c, ec).string();
  }
  return {};
}

// The shim as LD_PRELOAD can carry it (preload_path.h); "" after one line on err.
std::string shim_to_preload(const std::string& self_path, const std::string& command, std::ostream& err) {
  std::string looked;
  std::string shim = find_shim(self_path, looked);
  if (shim.empty()) {
    err << "firstassert " << command << ": libfirstassert.so not found (looked at " << looked
        << "); set FIRSTASSERT_LIB\n";
    return "";
  }
  std::string why;
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  std::string carried = preloadable_path(shim, {runtime_dir != nullptr ? runtime_dir : "", "/tmp"}, why);
  if (carried.empty()) {
    err << "firstassert " << command << ": the shim's path, " << shim << ", holds a space or colon, which "
        << "LD_PRELOAD cannot carry, and no link without one could be made (" << why << "); set FIRSTASSERT_LIB "
        << "to a copy of libfirstassert.so and libfirstassert_recorder.so in a directory without one\n";
  }
  return carried;
}

struct Options {
  std::string sync;                   // --sync: FIRSTASSERT_SYNC for the job, "" to leave it as it is
  std::string dir;                    // --dir: where reports go, "" for the current directory
  std::optional<std::string> values;  // --values, when given
  std::vector<std::string> command;   // the job: the first argument that is not an option, and all after it
};

bool takes_value(std::string_view option) { return option == "--sync" || option == "--dir" || option == "--values"; }

void set_option(std::string_view option, const std::string& value, Options& options) {
  if (option == "--sync") options.sync = value;
  if (option == "--dir") options.dir = value;
  if (option == "--values") options.values = value;
}

// The options and the command after them, or the exit status when there is nothing to run: the usage for --help, one
// line on err for bad arguments. They are read by hand: everything from the command on is the job's, options or not.
std::optional<int> parse_options(const Args& args, Options& options, std::ostream& out, std::ostream& err) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    }
    if (takes_value(a)) {
      if (i + 1 >= args.size()) {
        err << "firstassert run: " << a << " needs a value (see firstassert run --help)\n";
        return kBadInput;
      }
      set_option(a, args[++i], options);
      continue;
    }
    std::string_view name = std::string_view(a).substr(0, a.find('='));  // --sync=MODE, --dir=DIR, --values=MODE
    if (name.size() < a.size() && takes_value(name)) {
      set_option(name, a.substr(name.size() + 1), options);
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      err << "firstassert run: unknown option '" << a << "' (put -- before a command that starts with -)\n";
      return kBadInput;
    }
    break;
  }
  if (i >= args.size()) {
    err << "firstassert run: no command given (see firstassert run --help)\n";
    return kBadInput;
  }
  options.command.assign(args.begin() + static_cast<long>(i), args.end());
  return std::nullopt;
}

// The directory reports go to, absolute; nullopt after one line on err when it is not a directory.
std::optional<std::string> report_directory(const std::string& dir, std::ostream& err) {
  std::error_code ec;
  std::string absolute = fs::absolute(dir.empty() ? fs::current_path(ec) : fs::path(dir), ec).string();
  if (!fs::is_directory(absolute, ec)) {
    err << "firstassert run: --dir " << absolute << " is not a directory\n";
    return std::nullopt;
  }
  return absolute;
}

// This process's environment, which the job inherits: the shim before whatever LD_PRELOAD held, the report directory,
// and the --sync and --values settings.
void set_job_environment(const std::string& shim, const std::string& report_dir, const Options& options,
                         const std::string& self_path, std::ostream& err) {
  const char* preload = std::getenv("LD_PRELOAD");
  std::string new_preload = shim + (preload != nullptr && *preload != '\0' ? std::string(":") + preload : "");
  setenv("LD_PRELOAD", new_preload.c_str(), 1);
  setenv("FIRSTASSERT_DIR", report_dir.c_str(), 1);
  if (!options.sync.empty()) setenv("FIRSTASSERT_SYNC", options.sync.c_str(), 1);
  set_values_environment(options.values, values_site_candidates(self_path), err);
}

// In the forked child: becomes the job. A command that cannot be run exits 127 when it is not found and 126
// otherwise, as a shell's does (POSIX, Shell Command Language, 2.8.2 Exit Status for Commands).
[[noreturn]] void exec_job(std::vector<std::string> command) {
  std::vector<char*> argv;
  for (std::string& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int e = errno;
  std::string message = "firstassert run: cannot run '" + command[0] + "': " + std::strerror(e) + "\n";
  (void)!::write(STDERR_FILENO, message.data(), message.size());
  _exit(e == ENOENT ? 127 : 126);
}

// The job, started as a child process; -1 after one line on err when it could not be.
pid_t start_job(const std::vector<std::string>& command, std::ostream& out, std::ostream& err) {
  out.flush();  // what this program wrote comes before what the job writes
  err.flush();
  pid_t pid = fork();
  if (pid < 0) err << "firstassert run: cannot start " << command[0] << ": " << std::strerror(errno) << "\n";
  if (pid == 0) exec_job(command);
  return pid;
}

volatile sig_atomic_t child_pid = 0;

void forward(int signal) {
  if (child_pid > 0) kill(child_pid, signal);
}

// The job's wait status, once it has ended.
int wait_for_job(pid_t pid) {
  child_pid = pid;
  // Signals a scheduler sends to this process go on to the job; the terminal's SIGINT/SIGQUIT reach the job's
  // process group directly, so here they are only waited out.
  struct sigaction pass {}, ignore{};
  pass.sa_handler = forward;
  sigemptyset(&pass.sa_mask);
  ignore.sa_handler = SIG_IGN;
  for (int s : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(s, &pass, nullptr);
  for (int s : {SIGINT, SIGQUIT}) sigaction(s, &ignore, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  return status;
}

// The reports in dir written since start: the job's, and its children's.
void list_reports_since(const std::string& dir, fs::file_time_type start, std::ostream& err) {
  std::string error;
  for (const std::string& path : reports_in(dir, error)) {
    std::error_code ec;
    if (fs::last_write_time(path, ec) >= start && !ec) err << "firstassert: report: " << path << "\n";
  }
  err.flush();
}

// The job's end passed on: its exit status, or death by the same signal, so that whoever waits on this process sees
// what the job did.
int end_as_the_job_did(int status) {
  if (WIFSIGNALED(status)) {
    int s = WTERMSIG(status);
    signal(s, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, s);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(s);
    return 128 + s;  // the signal's default action did not end this process: a shell's status for it
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int run_command(const Args& args, std::ostream& out, std::ostream& err, const std::string& self_path) {
  Options options;
  if (std::optional<int> status = parse_options(args, options, out, err)) return *status;
  std::string shim = shim_to_preload(self_path, "run", err);
  if (shim.empty()) return kBadInput;
  std::optional<std::string> report_dir = report_directory(options.dir, err);
  if (!report_dir) return kBadInput;
  set_job_environment(shim, *report_dir, options, self_path, err);
  // A second early: a file's modification time comes from the kernel's coarser clock, which may read earlier than
  // this one for a report written at once.
  fs::file_time_type start = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  pid_t pid = start_job(options.command, out, err);
  if (pid < 0) return kBadInput;
  int status = wait_for_job(pid);
  list_reports_since(*report_dir, start, err);
  return end_as_the_job_did(status);
}

int lib_command(const Args& args, std::ostream& out, std::ostream& err, const std::string& self_path) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << "usage: firstassert lib\n"
           "  Prints the libfirstassert.so to put in LD_PRELOAD (found as firstassert run finds it; through a link\n"
           "  without a space or colon where its path has one), e.g. LD_PRELOAD=$(firstassert lib) python train.py\n";
    return 0;
  }
  if (!args.empty()) {
    err << "firstassert lib: takes no arguments (see firstassert lib --help)\n";
    return kBadInput;
  }
  std::string carried = shim_to_preload(self_path, "lib", err);
  if (carried.empty()) return kBadInput;
  out << carried << "\n";
  return 0;
}

}  // namespace firstassert::cli
