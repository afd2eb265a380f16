#pragma once

#include <string>

namespace firstassert {

// The readable name of a mangled C++ symbol; the input itself when it is not mangled (C or Triton names).
std::string demangle(const char* mangled);

// "nll_loss_forward_reduce_cuda_kernel_2d" out of "void at::native::nll_loss_forward_reduce_cuda_kernel_2d<float,
// long>(float*, ...)": the unqualified function name without template arguments, for one-line summaries.
std::string short_kernel_name(const std::string& demangled);

// The name without the suffix the compiler's clones of a function carry, as either demangler writes it: GNU's
// "f(int) [clone .constprop.0] [clone .isra.0]" and LLVM's "f(int) (.constprop.0.isra.0)" (the wheel's recorder is
// built with LLVM's libc++abi) both give "f(int)".
std::string without_clone_suffix(const std::string& demangled);

}  // namespace firstassert
