// Kernels the simulated device can run, found by host stub (runtime launches) or by mangled name
// (cuModuleGetFunction). Entries live for the whole process: a CUfunction is a pointer to one of them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../simcuda.h"
#include "../triton/triton_kernel.h"

namespace simcuda {

struct Kernel {
  const void* host_stub = nullptr;
  std::string name;  // mangled, as CUPTI's symbolName and cuFuncGetName give it
  simcuda_kernel_fn body = nullptr;
  std::optional<std::vector<size_t>> param_sizes;  // unknown when the signature could not be sized
  // Parameter sizes and a family's body are looked up at the first launch (resolve_for_launch): a program such as
  // PyTorch registers a hundred thousand kernels and launches a few hundred of them.
  bool resolved = false;
  // A kernel of a loaded cubin that Triton compiled: what its body runs (triton_device.h).
  std::shared_ptr<const simtriton::TritonKernel> triton;
};

// Sizes of a mangled C++ kernel's parameters, read from its demangled signature; nullopt when the name is not
// mangled or a parameter is neither a scalar nor a pointer.
std::optional<std::vector<size_t>> param_sizes_from_mangled_name(const char* mangled_name);

Kernel* register_kernel(const void* host_stub, const char* name, simcuda_kernel_fn body,
                        std::optional<std::vector<size_t>> param_sizes);
// The kernel's function name for family matching: demangled, without template arguments, parameters, return type
// and "(anonymous namespace)::"; empty when the name is not a mangled function.
std::string family_name_of(const char* mangled_name);
// param_sizes: nullptr when the members' mangled signatures size them.
void register_family(const char* function_name, simcuda_kernel_fn body, simcuda_param_sizes_fn param_sizes);
// Sizes the parameters and finds the family's body, once per kernel; returns the body to run (nullptr: none).
simcuda_kernel_fn resolve_for_launch(Kernel* kernel);

// A kernel of a module loaded from a cubin: its own entry (two modules may hold kernels of one name, as Triton's
// autotuning configurations do), a valid function handle for the rest of the process.
Kernel* add_module_kernel(std::string name, std::vector<size_t> param_sizes, simcuda_kernel_fn body,
                          std::shared_ptr<const simtriton::TritonKernel> triton);

// Maps a host stub to the kernel of that name, creating a body-less entry when the body is not registered yet.
void bind_host_stub(const void* host_stub, const char* name);
Kernel* kernel_by_stub(const void* host_stub);
Kernel* kernel_by_name(const char* name);
// True when function points at a registered kernel (a handle check for cuLaunchKernel and friends).
bool is_kernel(const void* function);

}  // namespace simcuda
