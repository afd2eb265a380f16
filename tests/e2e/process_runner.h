// Runs a program the way a user would, with extra environment, and collects what it printed and the reports it left.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace e2e {

struct Run {
  int exit_code = -1;  // or 128 + signal
  std::string out;
  std::string err;
};

Run run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
        const std::string& working_directory);

// A fresh directory under $TMPDIR, removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Files whose name starts with prefix, sorted.
  std::vector<std::string> files(const std::string& prefix) const;

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

}  // namespace e2e
