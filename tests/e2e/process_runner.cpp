#include "process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace e2e {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Run run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
        const std::string& working_directory) {
  Run result;
  TempDir capture;
  std::string out_path = capture.path() + "/out", err_path = capture.path() + "/err";

  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  // Whatever this test process inherited must not leak into the program under test: each test sets what it means.
  for (auto it = merged.begin(); it != merged.end();) {
    const std::string& name = it->first;
    bool leaks = name.rfind("FIRSTASSERT_", 0) == 0 || name == "LD_PRELOAD" || name == "CUDA_INJECTION64_PATH" ||
                 name == "CUDA_LAUNCH_BLOCKING";
    it = leaks ? merged.erase(it) : std::next(it);
  }
  for (const auto& [k, v] : env) merged[k] = v;
#if defined(__SANITIZE_THREAD__)
  // Under `scripts/test --sanitize=thread` the shim and the simulator are instrumented, and ThreadSanitizer's
  // runtime must be the first library of any process that loads them (preloaded, or dlopened by Python).
  std::string& preload = merged["LD_PRELOAD"];
  preload = preload.empty() ? "libtsan.so.2" : "libtsan.so.2:" + preload;
#endif
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, working_directory.c_str());
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.err = std::string("spawn failed: ") + std::strerror(rc);
    return result;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "firstassert-e2e-XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> TempDir::files(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace e2e
