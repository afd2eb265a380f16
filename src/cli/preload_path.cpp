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

// link_root/firstassert-<uid>, ours alone: made 0700 if missing, refused if it is a link, another user's, or open to
// others (someone could point our link at their own library).
bool own_directory(const std::string& link_root, std::string& dir, std::string& why) {
  dir = link_root + "/firstassert-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = system_error("cannot make", dir);
    return false;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    why = system_error("cannot read", dir);
    return false;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
    why = dir + " is not a directory of this user's alone";
    return false;
  }
  return true;
}
}  // namespace

bool splits_in_ld_preload(const std::string& path) { return path.find_first_of(" \t\n:") != std::string::npos; }

std::string preloadable_path(const std::string& shim, const std::string& link_root, std::string& why) {
  if (!splits_in_ld_preload(shim)) return shim;
  if (splits_in_ld_preload(link_root)) {
    why = "the directory for links, " + link_root + ", holds a space or colon too";
    return "";
  }
  std::string dir;
  if (!own_directory(link_root, dir, why)) return "";
  fs::path target = fs::path(shim).parent_path();
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", std::hash<std::string>{}(target.string()));
  std::string link = dir + "/" + name;
  std::error_code ec;
  if (fs::read_symlink(link, ec) != target) {
    // Made beside, then renamed over: a concurrent `firstassert run` sees the old link or the new one, never none.
    std::string fresh = link + ".new." + std::to_string(::getpid());
    ::unlink(fresh.c_str());
    if (::symlink(target.c_str(), fresh.c_str()) != 0) {
      why = system_error("cannot make the link", fresh);
      return "";
    }
    if (::rename(fresh.c_str(), link.c_str()) != 0) {
      why = system_error("cannot make the link", link);
      ::unlink(fresh.c_str());
      return "";
    }
  }
  return link + "/" + fs::path(shim).filename().string();
}

}  // namespace firstassert::cli
