// What the simulated driver reads from a cubin (the ELF image nvcc's and Triton's ptxas write): its kernels, by
// their symbols, and each kernel's parameter sizes, from the per-kernel .nv.info.NAME section's EIATTR_KPARAM_INFO
// entries (the table cuobjdump -elf prints). Nothing else of the image is used: the simulator cannot run SASS.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace simcuda {

struct CubinKernel {
  std::string name;
  std::vector<size_t> param_sizes;  // by ordinal
};

// True when image starts as an ELF64 little-endian object does (a cubin rather than PTX text or a fatbin).
bool is_cubin(const void* image);
// The image's size: where its last section or header table ends (cuModuleLoadData is given no size).
size_t cubin_size(const void* image);
// The kernels of a cubin; nullopt when its section table cannot be read.
std::optional<std::vector<CubinKernel>> cubin_kernels(const void* image);

}  // namespace simcuda
