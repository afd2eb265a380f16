#include "preload_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

namespace firstassert::cli {

namespace {
namespace fs = std::filesystem;

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// A directory no one but this user can change the entries of: this user's or root's, and writable by no one else or
// sticky (/tmp), where another user can neither rename nor remove what we made. Anything else could let someone swap
// our link for one to their own library, which the job (perhaps root's) would then preload.
bool safe_parent(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if (st.st_uid != ::getuid() && st.st_uid != 0) return false;
  return (st.st_mode & 022) == 0 || (st.st_mode & S_ISVTX) != 0;
}

// root/firstassert-<uid>, ours alone (made 0700 if missing), opened without following a link; -1 and why otherwise.
int open_own_directory(const std::string& root, std::string& dir, std::string& why) {
  dir = root + "/firstassert-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = system_error("cannot make", dir);
    return -1;
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
    why = dir + " is not a directory of this user's alone";
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}
}  // namespace

bool splits_in_ld_preload(const std::string& path) { return path.find_first_of(" \t\n:") != std::string::npos; }

std::string preloadable_path(const std::string& shim, const std::vector<std::string>& link_roots, std::string& why) {
  if (!splits_in_ld_preload(shim)) return shim;
  std::error_code ec;
  fs::path file = fs::absolute(shim, ec);
  if (ec || splits_in_ld_preload(file.filename().string())) {
    why = "the file name itself cannot be carried";
    return "";
  }
  std::string root;
  for (const std::string& candidate : link_roots) {
    if (!candidate.empty() && candidate[0] == '/' && !splits_in_ld_preload(candidate) && safe_parent(candidate)) {
      root = candidate;
      break;
    }
  }
  if (root.empty()) {
    why = "no directory for the link is this user's alone or sticky like /tmp";
    return "";
  }
  std::string dir;
  int fd = open_own_directory(root, dir, why);
  if (fd < 0) return "";
  fs::path target = file.parent_path().lexically_normal();
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", std::hash<std::string>{}(target.string()));
  char current[4096];
  ssize_t length = ::readlinkat(fd, name, current, sizeof current - 1);
  if (length < 0 || target.string() != std::string(current, static_cast<size_t>(length))) {
    // Made beside, then renamed over, within the directory we opened: a concurrent `firstassert run` sees the old
    // link or the new one, never none.
    std::string fresh = std::string(name) + ".new." + std::to_string(::getpid());
    ::unlinkat(fd, fresh.c_str(), 0);
    if (::symlinkat(target.c_str(), fd, fresh.c_str()) != 0 || ::renameat(fd, fresh.c_str(), fd, name) != 0) {
      why = system_error("cannot make the link", dir + "/" + name);
      ::unlinkat(fd, fresh.c_str(), 0);
      ::close(fd);
      return "";
    }
  }
  ::close(fd);
  return dir + "/" + name + "/" + file.filename().string();
}

}  // namespace firstassert::cli
