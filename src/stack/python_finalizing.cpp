#include "python_finalizing.h"

#include <dlfcn.h>

#include <cstring>

namespace firstassert::python {

const uintptr_t* runtime_finalizing_word(const Interpreter& py) {
  const PythonLayout& l = *py.layout;
  const char* runtime = static_cast<const char*>(dlsym(RTLD_DEFAULT, "_PyRuntime"));
  if (runtime == nullptr || l.runtime_initialized < 0 || l.runtime_finalizing < 0) return nullptr;
  if (l.minor >= 13 && (std::memcmp(runtime, "xdebugpy", 8) != 0 ||
                        at<uint64_t>(runtime, 32) != static_cast<uint64_t>(l.runtime_finalizing)))
    return nullptr;
  if (at<int>(runtime, static_cast<size_t>(l.runtime_initialized)) != py.is_initialized()) return nullptr;
  if ((at<uintptr_t>(runtime, static_cast<size_t>(l.runtime_finalizing)) != 0) != (py.is_finalizing() != 0))
    return nullptr;
  return reinterpret_cast<const uintptr_t*>(runtime + l.runtime_finalizing);
}

}  // namespace firstassert::python
