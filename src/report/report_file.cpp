#include "report_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace firstassert {
namespace {

std::string safe_host(const std::string& host) {
  std::string out;
  for (char c : host) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "host" : out;
}

bool write_all(int fd, const std::string& content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ReportFile::ReportFile(std::string directory, std::string host, int pid)
    : directory_(std::move(directory)), stem_("firstassert-" + safe_host(host) + "-" + std::to_string(pid)) {}

bool ReportFile::write(const std::string& content, std::string& error) {
  std::string temp = write_temporary(content, error);
  if (temp.empty()) return false;
  if (path_.empty()) return claim_name(temp, error);
  // Our own file: rename replaces it (a symlink planted there is replaced, never followed).
  if (::rename(temp.c_str(), path_.c_str()) == 0) return true;
  error = "cannot replace the report " + path_ + ": " + std::strerror(errno);
  ::unlink(temp.c_str());
  return false;
}

std::string ReportFile::write_temporary(const std::string& content, std::string& error) const {
  // A fresh temporary name each time: O_EXCL|O_NOFOLLOW refuses anything planted there.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = directory_ + "/." + stem_ + ".tmp" + std::to_string(attempt);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    error = "cannot create a report in " + directory_ + ": " + std::strerror(errno);
    return {};
  }
  ::fchmod(fd, 0644);  // whatever the umask: the report is meant to be read by the job's owner and tools
  bool ok = write_all(fd, content) && ::fsync(fd) == 0;
  int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    error = "cannot write the report " + temp + ": " + std::strerror(saved != 0 ? saved : errno);
    ::unlink(temp.c_str());
    return {};
  }
  return temp;
}

bool ReportFile::claim_name(const std::string& temp, std::string& error) {
  for (int n = 0; n < 100; ++n) {
    std::string candidate = directory_ + "/" + stem_ + (n == 0 ? "" : "." + std::to_string(n)) + ".json";
    // RENAME_NOREPLACE: an existing file (another run with our pid, or a link) is left alone.
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, candidate.c_str(), RENAME_NOREPLACE) == 0) {
      path_ = candidate;
      return true;
    }
    if (errno != EEXIST) {
      error = "cannot place the report at " + candidate + ": " + std::strerror(errno);
      ::unlink(temp.c_str());
      return false;
    }
  }
  error = "every report name for " + stem_ + " in " + directory_ + " is taken";
  ::unlink(temp.c_str());
  return false;
}

}  // namespace firstassert
