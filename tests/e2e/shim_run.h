// Running a program under the shim in a fresh report directory, and reading back what it left.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process_runner.h"

namespace e2e {

// The mangled name of PyTorch's nll_loss forward kernel, the simulator's stock one the jobs fault in.
inline const std::string kNllLoss =
    "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll";

struct Outcome {
  Run run;
  std::vector<std::string> reports;
  nlohmann::json report;  // the first report, when there is one
};

// FIRSTASSERT_DIR is set to dir, which is also the working directory.
Outcome run_in(const TempDir& dir, const std::vector<std::string>& argv, std::map<std::string, std::string> env);

// The number after "label: " in the program's stdout, or -1.
int printed(const std::string& out, const std::string& label);
// The word after "label: " in the program's stdout, or "".
std::string printed_word(const std::string& out, const std::string& label);

bool has_candidate(const nlohmann::json& report, const std::string& mangled);

// The number of the first line of the file at path that holds marker, or -1.
int line_of(const std::string& path, const std::string& marker);

// The text without the lines firstassert itself wrote ("firstassert: ...").
std::string without_firstassert_lines(const std::string& text);

}  // namespace e2e
