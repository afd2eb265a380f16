// Which CUDA runtime, CUPTI and PyTorch a job ran with, from its loaded objects and torch/version.py.
#include "report/job_environment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace firstassert {
namespace {

namespace fs = std::filesystem;

// torch/version.py as the PyPI wheels of 2.4.1, 2.8.0 and 2.15.0 write it (their first lines).
constexpr const char* kTorch241 =
    "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
    "__version__ = '2.4.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
    "git_version = '38b96d3399a695e704ed39b60dac733c3fbf20e2'\nhip: Optional[str] = None\n";
constexpr const char* kTorch2150 =
    "__version__ = '2.15.0+cu132'\ndebug = False\ncuda: Optional[str] = '13.2'\nhip: Optional[str] = None\n";
constexpr const char* kCpuBuild = "__version__ = '2.8.0+cpu'\ndebug = False\ncuda: Optional[str] = None\n";

TEST(TorchVersion, ReadsTheVersionAndTheCudaItWasBuiltWith) {
  std::string version, cuda;
  read_torch_version(kTorch241, version, cuda);
  EXPECT_EQ(version, "2.4.1+cu121");
  EXPECT_EQ(cuda, "12.1");
  version.clear();
  cuda.clear();
  read_torch_version(kTorch2150, version, cuda);
  EXPECT_EQ(version, "2.15.0+cu132");
  EXPECT_EQ(cuda, "13.2");
}

TEST(TorchVersion, ACpuBuildHasNoCuda) {
  std::string version, cuda;
  read_torch_version(kCpuBuild, version, cuda);
  EXPECT_EQ(version, "2.8.0+cpu");
  EXPECT_EQ(cuda, "");
}

TEST(TorchVersion, OtherNamesStartingAlikeAreNotTaken) {
  std::string version, cuda;
  read_torch_version("cudnn = '9.1'\ncuda_home: str = '/usr/local/cuda'\n", version, cuda);
  EXPECT_EQ(cuda, "");
}

class JobEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/firstassert-env-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "torch" / "lib");
    std::ofstream(root_ / "torch" / "version.py") << kTorch241;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(JobEnvironmentTest, NamesTheLoadedRuntimeCuptiAndPyTorch) {
  std::vector<LoadedModule> modules = {
      {"/usr/lib/x86_64-linux-gnu/libc.so.6", 0, ""},
      {(root_ / "torch" / "lib" / "libtorch_cuda.so").string(), 0, ""},
      {"/opt/cuda-12.1/lib64/libcudart.so.12.1.105", 0, ""},
  };
  JobEnvironment e = job_environment(modules, "/opt/cuda-12.1/extras/CUPTI/lib64/libcupti.so.12", 18);
  EXPECT_EQ(e.runtime_soname, "libcudart.so.12");
  EXPECT_EQ(e.runtime_library, "/opt/cuda-12.1/lib64/libcudart.so.12.1.105");
  EXPECT_EQ(e.cupti_api_version, 18u);
  EXPECT_EQ(e.torch_version, "2.4.1+cu121");
  EXPECT_EQ(e.torch_cuda, "12.1");
  EXPECT_EQ(e.torch_dir, (root_ / "torch").string());
}

TEST_F(JobEnvironmentTest, WhatWasNotLoadedIsLeftEmpty) {
  // libcudart_static-like names and a library merely named like the runtime are not the runtime.
  std::vector<LoadedModule> modules = {{"/x/libcudart.so.12.backup", 0, ""}, {"/x/libcudart.sox", 0, ""}};
  JobEnvironment e = job_environment(modules, "", 26);
  EXPECT_EQ(e.runtime_library, "");
  EXPECT_EQ(e.cupti_library, "");
  EXPECT_EQ(e.cupti_api_version, 0u);  // no CUPTI in use: no version claimed
  EXPECT_EQ(e.torch_version, "");
}

}  // namespace
}  // namespace firstassert
