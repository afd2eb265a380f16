// Writes a report where it can be trusted: atomically (a temporary file renamed into place), mode 0644, never
// through a symlink, never over a file this process did not write. The first write claims a name,
// firstassert-<host>-<pid>.json, or -<pid>.1.json and so on when that name is taken; later writes replace it.
#pragma once

#include <string>

namespace firstassert {

class ReportFile {
 public:
  ReportFile(std::string directory, std::string host, int pid);

  // False with a one-line reason in error; nothing is left behind on failure.
  bool write(const std::string& content, std::string& error);
  // The claimed path, empty before the first successful write.
  const std::string& path() const { return path_; }

 private:
  // The content in a new temporary file of the directory; its path, or "" with error said.
  std::string write_temporary(const std::string& content, std::string& error) const;
  // The temporary renamed to the first free report name, which becomes path_.
  bool claim_name(const std::string& temp, std::string& error);

  std::string directory_;
  std::string stem_;
  std::string path_;
};

}  // namespace firstassert
