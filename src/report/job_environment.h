// Which CUDA runtime, CUPTI and PyTorch a job ran with, read from what it loaded, never by calling into CUDA: the
// runtime is the loaded libcudart.so.N, CUPTI the library recording (and its cuptiGetVersion), PyTorch the one whose
// libtorch_cuda.so is loaded (its torch/version.py, which every PyPI build writes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stack/module_map.h"

namespace firstassert {

struct JobEnvironment {
  std::string runtime_library;  // the loaded libcudart's path; "" when none is loaded
  std::string runtime_soname;   // "libcudart.so.12"
  std::string cupti_library;    // "" when CUPTI is not recording
  uint32_t cupti_api_version = 0;  // cuptiGetVersion (CUPTI_API_VERSION: 26 for CUDA 12.8, 130001 for 13.0); 0 unknown
  std::string torch_version;    // torch.__version__, "2.8.0+cu128"; "" when no PyTorch is loaded
  std::string torch_cuda;       // torch.version.cuda, the CUDA it was built with: "12.8"
  std::string torch_dir;        // the torch package directory
};

JobEnvironment job_environment(const std::vector<LoadedModule>& modules, const std::string& cupti_library,
                               uint32_t cupti_api_version);

// torch.__version__ and torch.version.cuda from a torch/version.py's text ("" where a line is missing).
void read_torch_version(const std::string& version_py, std::string& version, std::string& cuda);

// The same from the torch package directory's version.py; false when there is none to read.
bool read_torch_package(const std::string& torch_dir, std::string& version, std::string& cuda);

}  // namespace firstassert
