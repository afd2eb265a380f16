#include "module_loader.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "cubin_image.h"
#include "triton_device.h"

namespace simcuda {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Triton's cache directory: TRITON_CACHE_DIR, else .triton/cache under TRITON_HOME or the home directory
// (triton/knobs.py). Inductor points TRITON_CACHE_DIR at its own directory before it compiles.
std::vector<fs::path> triton_cache_dirs() {
  if (const char* dir = std::getenv("TRITON_CACHE_DIR"); dir != nullptr && *dir != '\0') return {dir};
  const char* home = std::getenv("TRITON_HOME");
  if (home == nullptr || *home == '\0') home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return {fs::path(home) / ".triton" / "cache"};
}

// The directory of Triton's cache whose NAME.cubin holds exactly image: where its NAME.ttgir is.
std::optional<fs::path> cache_entry_of(const std::string& name, const void* image, size_t size) {
  std::error_code ec;
  for (const fs::path& cache : triton_cache_dirs()) {
    for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
      fs::path cubin = it->path() / (name + ".cubin");
      std::error_code size_ec;
      if (fs::file_size(cubin, size_ec) != size || size_ec) continue;
      auto bytes = read_file(cubin);
      if (bytes && std::memcmp(bytes->data(), image, size) == 0) return it->path();
    }
  }
  return std::nullopt;
}

std::shared_ptr<const simtriton::TritonKernel> triton_program(const std::string& name, const fs::path& dir) {
  auto text = read_file(dir / (name + ".ttgir"));
  if (!text) return nullptr;  // not a kernel Triton compiled
  std::string error;
  std::shared_ptr<const simtriton::TritonKernel> program = simtriton::TritonKernel::parse(*text, &error);
  if (program == nullptr)
    std::fprintf(stderr, "simcuda: %s runs as a no-op: its Triton program (%s) cannot be run here: %s\n",
                 name.c_str(), (dir / (name + ".ttgir")).c_str(), error.c_str());
  return program;
}

}  // namespace

Module* load_module(const void* image, const std::string& file) {
  auto* module = new Module;
  if (!is_cubin(image)) return module;
  auto kernels = cubin_kernels(image);
  if (!kernels) return module;
  size_t size = cubin_size(image);
  for (CubinKernel& kernel : *kernels) {
    std::optional<fs::path> dir;
    if (!file.empty()) dir = fs::path(file).parent_path();
    else dir = cache_entry_of(kernel.name, image, size);
    std::shared_ptr<const simtriton::TritonKernel> program;
    if (dir) program = triton_program(kernel.name, *dir);
    simcuda_kernel_fn body = program != nullptr ? run_triton_kernel : nullptr;
    module->kernels.push_back(add_module_kernel(kernel.name, std::move(kernel.param_sizes), body, program));
  }
  return module;
}

CUresult load_module_file(const char* file, Module** module) {
  std::optional<std::string> image = read_file(file);
  if (!image) return CUDA_ERROR_FILE_NOT_FOUND;
  if (image->empty()) return CUDA_ERROR_INVALID_IMAGE;
  *module = load_module(image->data(), file);
  return CUDA_SUCCESS;
}

Kernel* module_function(const Module& module, const char* name) {
  for (Kernel* kernel : module.kernels)
    if (kernel->name == name) return kernel;
  return kernel_by_name(name);
}

}  // namespace simcuda
