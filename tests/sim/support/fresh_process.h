// Tests that fault the device, call cuInit for the first time or set CUDA_INJECTION64_PATH need a process of their
// own: the simulated device, like a real context, cannot be reset. FRESH_PROCESS runs a block in a child that gtest
// starts by re-executing the test binary ("threadsafe" death-test style; a plain fork would inherit a device whose
// worker threads did not survive the fork). The child passes when the block raised no failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#define FRESH_PROCESS(...)                                                       \
  do {                                                                           \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                              \
    auto fresh_process_body = [&] __VA_ARGS__;                                   \
    EXPECT_EXIT(::simtest::run_then_exit(fresh_process_body),                    \
                ::testing::ExitedWithCode(0), "");                               \
  } while (0)

namespace simtest {

template <typename Body>
[[noreturn]] void run_then_exit(Body& body) {
  body();
  std::fflush(nullptr);
  std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
}

// Captures what this process writes to fd 2 (where the driver prints assertion lines) until text() is called.
class StderrCapture {
 public:
  StderrCapture();
  ~StderrCapture();
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  // Stops capturing, restores fd 2 and returns everything written meanwhile.
  std::string text();

 private:
  int saved_ = -1;
  std::FILE* file_ = nullptr;
  std::string captured_;
  bool done_ = false;
};

}  // namespace simtest
