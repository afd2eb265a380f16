#pragma once

#include <string>

namespace firstassert {

// The readable name of a mangled C++ symbol; the input itself when it is not mangled (C or Triton names).
std::string demangle(const char* mangled);

// "nll_loss_forward_reduce_cuda_kernel_2d" out of "void at::native::nll_loss_forward_reduce_cuda_kernel_2d<float,
// long>(float*, ...)": the unqualified function name without template arguments, for one-line summaries.
std::string short_kernel_name(const std::string& demangled);

}  // namespace firstassert
