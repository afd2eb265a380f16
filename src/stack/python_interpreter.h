// The running CPython as the frame walker sees it: the few C API functions and type objects it uses, found by name
// with dlsym (nothing is linked: a process without Python has none), and the layout of its structures
// (python_layout.h), plus the reads of its objects' memory in place.
#pragma once

#include <cstddef>
#include <cstring>

#include "python_layout.h"

namespace firstassert::python {

struct Interpreter {
  int (*is_initialized)() = nullptr;         // Py_IsInitialized
  int (*is_finalizing)() = nullptr;          // Py_IsFinalizing (3.13), _Py_IsFinalizing before
  void* (*this_thread_state)() = nullptr;    // PyGILState_GetThisThreadState: needs no GIL
  int (*address_to_line)(void*, int) = nullptr;  // PyCode_Addr2Line: reads the code object's line table
  const void* code_type = nullptr;           // &PyCode_Type
  const void* str_type = nullptr;            // &PyUnicode_Type
  const PythonLayout* layout = nullptr;      // nullptr: no Python here, or one whose layout is not known
};

// Found at the first call (one info line when a Python is there whose layout is not known), the same after.
const Interpreter& interpreter();

// A T at offset bytes into an object of the interpreter's: memcpy, since the offsets come from another program's
// headers and carry no alignment or type the compiler could rely on.
template <typename T>
T at(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

// Whether object is an instance of exactly type: ob_type follows ob_refcnt at the head of every object (PyObject in
// CPython's Include/object.h, the same in every release build the layouts cover).
inline bool is_a(const void* object, const void* type) {
  return object != nullptr && at<const void*>(object, 8) == type;
}

}  // namespace firstassert::python
