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
    "                 Both put every aten op through Python (microseconds each). They reach the job through a\n"
    "                 sitecustomize.py of firstassert's put first on PYTHONPATH, which then runs the job's own.\n"
    "                 Not covered: torch.compile graphs, CUDA graph replays. A job that is not Python, or never\n"
    "                 imports torch, is untouched.\n"
    "  --dir DIR      where reports go (FIRSTASSERT_DIR; default: the current directory)\n"
    "  The library is found through FIRSTASSERT_LIB, beside this program (../lib, or the same directory), or in\n"
    "  the install prefix. A path LD_PRELOAD cannot carry (it holds a space or colon) is reached through a link in\n"
    "  $XDG_RUNTIME_DIR/firstassert-UID (else /tmp/firstassert-UID).\n";

volatile sig_atomic_t child_pid = 0;

void forward(int signal) {
  if (child_pid > 0) kill(child_pid, signal);
}

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

std::vector<std::string> reports_since(const std::string& dir, fs::file_time_type start) {
  std::string error;
  std::vector<std::string> out;
  for (const std::string& path : reports_in(dir, error)) {
    std::error_code ec;
    if (fs::last_write_time(path, ec) >= start && !ec) out.push_back(path);
  }
  return out;
}

}  // namespace

int run_command(const Args& args, std::ostream& out, std::ostream& err, const std::string& self_path) {
  std::string sync, dir;
  std::optional<std::string> values;
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
    if (a == "--sync" || a == "--dir" || a == "--values") {
      if (i + 1 >= args.size()) {
        err << "firstassert run: " << a << " needs a value (see firstassert run --help)\n";
        return kBadInput;
      }
      if (a == "--values") {
        values = args[++i];
      } else {
        (a == "--sync" ? sync : dir) = args[++i];
      }
      continue;
    }
    if (a.rfind("--sync=", 0) == 0) { sync = a.substr(7); continue; }
    if (a.rfind("--dir=", 0) == 0) { dir = a.substr(6); continue; }
    if (a.rfind("--values=", 0) == 0) { values = a.substr(9); continue; }
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
  std::vector<std::string> command(args.begin() + static_cast<long>(i), args.end());

  std::string carried = shim_to_preload(self_path, "run", err);
  if (carried.empty()) return kBadInput;
  std::error_code ec;
  std::string report_dir = fs::absolute(dir.empty() ? fs::current_path(ec) : fs::path(dir), ec).string();
  if (!fs::is_directory(report_dir, ec)) {
    err << "firstassert run: --dir " << report_dir << " is not a directory\n";
    return kBadInput;
  }

  const char* preload = std::getenv("LD_PRELOAD");
  std::string new_preload = carried + (preload != nullptr && *preload != '\0' ? std::string(":") + preload : "");
  setenv("LD_PRELOAD", new_preload.c_str(), 1);
  setenv("FIRSTASSERT_DIR", report_dir.c_str(), 1);
  if (!sync.empty()) setenv("FIRSTASSERT_SYNC", sync.c_str(), 1);
  set_values_environment(values, values_site_candidates(self_path), err);

  fs::file_time_type start = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  out.flush();
  err.flush();
  pid_t pid = fork();
  if (pid < 0) {
    err << "firstassert run: cannot start " << command[0] << ": " << std::strerror(errno) << "\n";
    return kBadInput;
  }
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : command) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int e = errno;
    std::string message = "firstassert run: cannot run '" + command[0] + "': " + std::strerror(e) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    _exit(e == ENOENT ? 127 : 126);
  }
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

  for (const std::string& report : reports_since(report_dir, start)) err << "firstassert: report: " << report << "\n";
  err.flush();
  if (WIFSIGNALED(status)) {
    int s = WTERMSIG(status);
    signal(s, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, s);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(s);  // die the same way, so whoever waits on us sees the job's signal
    return 128 + s;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
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
