// What every stand-in does for an entry point it does not model: it exists (torch binds every symbol it imports when
// Python loads it, RTLD_NOW), says so once on stderr in the simulated driver's words, and returns its library's own
// "not supported" status, so that a program using it fails with a clear error instead of a missing symbol.
#pragma once

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "../common/say_unsupported.h"

namespace standins {

// "simcuda: <function> is not supported by the simulator" on stderr, the first time only (said is the function's
// own flag): the line the simulated driver prints for what it does not model.
inline void say_unsupported(std::atomic<bool>& said, const char* function) {
  if (!said.exchange(true)) std::fprintf(stderr, "simcuda: %s is not supported by the simulator\n", function);
}

// The same line for a case of a modelled function that is not modelled ("cublasGemmEx for CUDA_C_32F operands"),
// once per distinct text.
using simcuda::say_unsupported_once;

}  // namespace standins

// STANDIN_UNSUPPORTED(name, status, note): the entry point `name`, returning `status` (an int-sized status enum, as
// every entry point listed this way returns) after say_unsupported; note(name) runs first (a library's last-error
// record, or nothing). It reads none of its arguments, so it is defined with none, under the API's symbol name (an
// assembler label): the library header may stay included for its status codes, its declaration untouched. On the
// x86-64 SysV ABI a callee that ignores its register arguments is called correctly whatever they are.
#define STANDIN_NO_NOTE(name)
#define STANDIN_UNSUPPORTED(name, status, note)                \
  extern "C" int standin_##name() __asm__(#name);              \
  extern "C" int standin_##name() {                            \
    static std::atomic<bool> said{false};                      \
    note(#name);                                               \
    ::standins::say_unsupported(said, #name);                  \
    return static_cast<int>(status);                           \
  }
