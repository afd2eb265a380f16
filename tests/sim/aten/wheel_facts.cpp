#include "wheel_facts.h"

#include <link.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace simaten {
namespace {

// A site whose line (or condition) differs from torch 2.15.0's in a wheel.
struct Moved {
  std::string_view file;  // the .cu file's name
  unsigned line_2_15;
  unsigned line;
  const char* condition = nullptr;  // nullptr: 2.15's
};

struct Wheel {
  std::string_view version;  // a prefix of torch.__version__
  std::string_view cuda_src;  // __FILE__'s directory as the wheel's build compiled it
  std::vector<Moved> moved;
};

// torch 2.8.0+cu128 (built in docker: /pytorch/...) and 2.4.1+cu121 (built from ../aten/...), read with
// cubin_facts.py from their libtorch_cuda.so; MultinomialKernel.cu's lines are 2.15's in both. indexSelectLargeIndex
// exists in 2.4 only: its site carries 2.4's line.
const std::vector<Wheel>& wheels() {
  static const auto* table = new std::vector<Wheel>{
      {"2.8.", "/pytorch/aten/src/ATen/native/cuda/",
       {{"Loss.cu", 89, 90},
        {"Loss.cu", 90, 91},
        {"Loss.cu", 179, 180},
        {"Loss.cu", 196, 197},
        {"Loss.cu", 200, 201},
        {"Loss.cu", 244, 245},
        {"NLLLoss2d.cu", 75, 73},
        {"NLLLoss2d.cu", 108, 106},
        {"NLLLoss2d.cu", 111, 109},
        {"Indexing.cu", 1582, 1478},
        {"IndexKernelUtils.cu", 22, 16},
        {"IndexKernel.cu", 111, 113},
        {"ScatterGatherKernel.cu", 257, 163},
        {"ScatterGatherKernel.cu", 504, 409}}},
      {"2.4.", "../aten/src/ATen/native/cuda/",
       {{"Loss.cu", 89, 94},
        {"Loss.cu", 90, 95},
        {"Loss.cu", 179, 186},
        {"Loss.cu", 196, 203},
        {"Loss.cu", 200, 207},
        {"Loss.cu", 244, 250},
        {"NLLLoss2d.cu", 75, 73},
        {"NLLLoss2d.cu", 108, 106},
        {"NLLLoss2d.cu", 111, 109},
        {"Indexing.cu", 1582, 1231},
        {"IndexKernel.cu", 111, 92},
        {"ScatterGatherKernel.cu", 257, 144, "idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\""},
        {"ScatterGatherKernel.cu", 504, 365}}},
  };
  return *table;
}

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string find_torch_version() {
  std::string library;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (file_name(path) != "libtorch_cuda.so") return 0;
        *static_cast<std::string*>(data) = std::string(path);
        return 1;
      },
      &library);
  if (library.empty()) return {};
  // site-packages/torch/lib/libtorch_cuda.so -> site-packages/torch/version.py: `__version__ = '2.8.0+cu128'`.
  std::string torch_dir = library.substr(0, library.rfind('/'));
  torch_dir = torch_dir.substr(0, torch_dir.rfind('/'));
  std::ifstream in(torch_dir + "/version.py");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("__version__")) continue;
    size_t open = line.find('\'');
    size_t close = open == std::string::npos ? open : line.find('\'', open + 1);
    if (close != std::string::npos) return line.substr(open + 1, close - open - 1);
  }
  return {};
}

}  // namespace

const std::string& running_torch_version() {
  static const auto* version = new std::string(find_torch_version());
  return *version;
}

PrintedSite printed_site(const AssertSite& site, std::string_view torch_version) {
  for (const Wheel& wheel : wheels()) {
    if (!torch_version.starts_with(wheel.version)) continue;
    std::string_view name = file_name(site.file);
    PrintedSite printed{std::string(wheel.cuda_src) + std::string(name), site.line, site.condition};
    for (const Moved& m : wheel.moved) {
      if (m.file != name || m.line_2_15 != site.line) continue;
      printed.line = m.line;
      if (m.condition != nullptr) printed.condition = m.condition;
    }
    return printed;
  }
  return {site.file, site.line, site.condition};
}

PrintedSite printed_site(const AssertSite& site) { return printed_site(site, running_torch_version()); }

}  // namespace simaten
