// Kernels the simulated device can run, found by host stub (runtime launches) or by mangled name
// (cuModuleGetFunction). Entries live for the whole process: a CUfunction is a pointer to one of them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "../simcuda.h"

namespace simcuda {

struct Kernel {
  const void* host_stub = nullptr;
  std::string name;  // mangled, as CUPTI's symbolName and cuFuncGetName give it
  simcuda_kernel_fn body = nullptr;
  std::optional<std::vector<size_t>> param_sizes;  // unknown when the signature could not be sized
};

// Sizes of a mangled C++ kernel's parameters, read from its demangled signature; nullopt when the name is not
// mangled or a parameter is neither a scalar nor a pointer.
std::optional<std::vector<size_t>> param_sizes_from_mangled_name(const char* mangled_name);

Kernel* register_kernel(const void* host_stub, const char* name, simcuda_kernel_fn body,
                        std::optional<std::vector<size_t>> param_sizes);
// Maps a host stub to the kernel of that name, creating a body-less entry when the body is not registered yet.
void bind_host_stub(const void* host_stub, const char* name);
Kernel* kernel_by_stub(const void* host_stub);
Kernel* kernel_by_name(const char* name);
// True when function points at a registered kernel (a handle check for cuLaunchKernel and friends).
bool is_kernel(const void* function);

}  // namespace simcuda
