#include "python_frames.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>

namespace firstassert {
namespace {

// The stable C API (3.9+) this needs; every entry is looked up by name, none is linked.
struct PythonApi {
  int (*is_initialized)() = nullptr;            // Py_IsInitialized
  int (*gil_check)() = nullptr;                 // PyGILState_Check
  void* (*current_frame)() = nullptr;           // PyEval_GetFrame (borrowed)
  void* (*frame_code)(void*) = nullptr;         // PyFrame_GetCode (new reference)
  void* (*frame_back)(void*) = nullptr;         // PyFrame_GetBack (new reference)
  int (*frame_line)(void*) = nullptr;           // PyFrame_GetLineNumber
  void* (*get_attr)(void*, const char*) = nullptr;  // PyObject_GetAttrString (new reference)
  const char* (*utf8)(void*) = nullptr;         // PyUnicode_AsUTF8
  void (*incref)(void*) = nullptr;              // Py_IncRef
  void (*decref)(void*) = nullptr;              // Py_DecRef
  void (*clear_error)() = nullptr;              // PyErr_Clear
  bool complete = false;
};

template <typename Fn>
bool find(const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  return out != nullptr;
}

const PythonApi& python() {
  static const PythonApi api = [] {
    PythonApi a;
    a.complete = find("Py_IsInitialized", a.is_initialized) && find("PyGILState_Check", a.gil_check) &&
                 find("PyEval_GetFrame", a.current_frame) && find("PyFrame_GetCode", a.frame_code) &&
                 find("PyFrame_GetBack", a.frame_back) && find("PyFrame_GetLineNumber", a.frame_line) &&
                 find("PyObject_GetAttrString", a.get_attr) && find("PyUnicode_AsUTF8", a.utf8) &&
                 find("Py_IncRef", a.incref) && find("Py_DecRef", a.decref) && find("PyErr_Clear", a.clear_error);
    return a;
  }();
  return api;
}

// Code object -> interned (file, function). Found lock-free; filled under a lock at a code object's first capture.
constexpr size_t kCodes = 8192;
struct CodeNames {
  std::atomic<void*> code{nullptr};
  const char* file = nullptr;
  const char* function = nullptr;
};
CodeNames codes[kCodes];
std::mutex codes_mutex;

const char* copy_attr(const PythonApi& py, void* object, const char* attr) {
  void* value = py.get_attr(object, attr);
  if (value == nullptr) {
    py.clear_error();
    return "?";
  }
  const char* text = py.utf8(value);
  if (text == nullptr) py.clear_error();
  const char* copy = strdup(text != nullptr ? text : "?");
  py.decref(value);
  return copy != nullptr ? copy : "?";
}

const CodeNames* names_of(const PythonApi& py, void* code) {
  size_t start = std::hash<void*>{}(code) % kCodes;
  for (size_t i = 0; i < kCodes; ++i) {
    const CodeNames& c = codes[(start + i) % kCodes];
    void* seen = c.code.load(std::memory_order_acquire);
    if (seen == code) return &c;
    if (seen == nullptr) break;
  }
  std::lock_guard lock(codes_mutex);
  for (size_t i = 0; i < kCodes - 1; ++i) {  // one slot stays free: lock-free probes always end
    CodeNames& c = codes[(start + i) % kCodes];
    void* seen = c.code.load(std::memory_order_relaxed);
    if (seen == code) return &c;
    if (seen != nullptr) continue;
    c.file = copy_attr(py, code, "co_filename");
    c.function = copy_attr(py, code, "co_name");
    py.incref(code);  // pinned: its address can never be reused for another code object
    c.code.store(code, std::memory_order_release);
    return &c;
  }
  return nullptr;
}

}  // namespace

size_t capture_python_stack(PythonFrame* frames, size_t max_frames) {
  const PythonApi& py = python();
  if (!py.complete || max_frames == 0 || !py.is_initialized() || py.gil_check() != 1) return 0;
  void* frame = py.current_frame();  // borrowed
  if (frame == nullptr) return 0;
  py.incref(frame);  // from here on, every frame we hold is a reference we own
  size_t count = 0;
  while (frame != nullptr && count < max_frames) {
    void* code = py.frame_code(frame);
    if (code != nullptr) {
      if (const CodeNames* names = names_of(py, code)) {
        frames[count].file = names->file;
        frames[count].function = names->function;
        frames[count].line = py.frame_line(frame);
        ++count;
      }
      py.decref(code);
    }
    void* back = py.frame_back(frame);
    py.decref(frame);
    frame = back;
  }
  if (frame != nullptr) py.decref(frame);
  return count;
}

}  // namespace firstassert
