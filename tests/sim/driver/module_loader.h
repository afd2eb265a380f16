// Modules: what cuModuleLoad*, cuLibraryLoad* make of an image. A cubin's kernels become the module's functions;
// those Triton compiled run their Triton program, found beside the cubin in Triton's cache (the simulator cannot
// run SASS, and Triton keeps NAME.ttgir next to NAME.cubin). Any other image (PTX text, a fatbinary, a test's
// placeholder) finds its functions among the kernels programs registered, by name.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "kernel_registry.h"

namespace simcuda {

struct Module {
  std::vector<Kernel*> kernels;  // a cubin's; empty for other images
};

// image: the bytes cuModuleLoadData is given; file: where cuModuleLoad read them (empty for an image in memory).
Module* load_module(const void* image, const std::string& file);
// cuModuleLoad's and cuLibraryLoadFromFile's work: the module of the image in that file; CUDA_ERROR_FILE_NOT_FOUND
// when it cannot be read, CUDA_ERROR_INVALID_IMAGE when it is empty.
CUresult load_module_file(const char* file, Module** module);
// The module's function of that name (a cubin's own, else a registered kernel); nullptr when none.
Kernel* module_function(const Module& module, const char* name);

}  // namespace simcuda
