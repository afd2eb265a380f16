#include "python_interpreter.h"

#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

#include "core/log.h"

namespace firstassert::python {
namespace {

template <typename Fn>
Fn find(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// Builds whose objects or frames are laid out otherwise: debug (reference totals), trace-refs, free-threaded.
bool unusual_build() {
  for (const char* marker : {"_Py_RefTotal", "_Py_IncRefTotal", "_Py_PrintReferences", "_Py_MergeZeroLocalRefcount"})
    if (dlsym(RTLD_DEFAULT, marker) != nullptr) return true;
  return false;
}

Interpreter find_interpreter() {
  Interpreter py;
  auto version = find<const char* (*)()>("Py_GetVersion");
  if (version == nullptr) return py;  // no Python in this process
  py.is_initialized = find<int (*)()>("Py_IsInitialized");
  py.is_finalizing = find<int (*)()>("Py_IsFinalizing");
  if (py.is_finalizing == nullptr) py.is_finalizing = find<int (*)()>("_Py_IsFinalizing");
  py.this_thread_state = find<void* (*)()>("PyGILState_GetThisThreadState");
  py.address_to_line = find<int (*)(void*, int)>("PyCode_Addr2Line");
  py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  py.str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  const char* text = version();
  int major = 0, minor = 0;
  bool parsed = text != nullptr && std::sscanf(text, "%d.%d", &major, &minor) == 2;
  const PythonLayout* layout = parsed && major == 3 ? python_layout(minor) : nullptr;
  if (layout == nullptr || unusual_build() || py.is_initialized == nullptr || py.is_finalizing == nullptr ||
      py.this_thread_state == nullptr ||
      py.address_to_line == nullptr || py.code_type == nullptr || py.str_type == nullptr) {
    info("Python %.*s: its frame layout is not one firstassert knows (3.9 to 3.13 release builds); launches carry "
         "no Python frames", 16, text != nullptr ? text : "?");
    return py;
  }
  py.layout = layout;
  return py;
}

}  // namespace

const Interpreter& interpreter() {
  static const Interpreter py = find_interpreter();
  return py;
}

}  // namespace firstassert::python
