#include "fresh_process.h"

#include <unistd.h>

namespace simtest {

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  file_ = std::tmpfile();
  saved_ = dup(STDERR_FILENO);
  if (file_ != nullptr) dup2(fileno(file_), STDERR_FILENO);
}

StderrCapture::~StderrCapture() { (void)text(); }

std::string StderrCapture::text() {
  if (done_) return captured_;
  done_ = true;
  std::fflush(stderr);
  if (saved_ >= 0) {
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  if (file_ == nullptr) return captured_;
  std::rewind(file_);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) captured_.append(buffer, n);
  std::fclose(file_);
  return captured_;
}

}  // namespace simtest
