#include "python_code_epoch.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "core/log.h"

namespace firstassert {
namespace {

// The interpreter's entry points and objects, found by name (nothing is linked).
struct Watching {
  int (*add_pending_call)(int (*)(void*), void*) = nullptr;  // Py_AddPendingCall: any thread, no GIL
  int (*add_code_watcher)(int (*)(int, void*)) = nullptr;    // PyCode_AddWatcher (3.12+): with the GIL
  void (*clear_error)() = nullptr;                            // PyErr_Clear
  void* (*interpreter_of)(const void*) = nullptr;             // PyThreadState_GetInterpreter
  void* (*main_interpreter)() = nullptr;                      // PyInterpreterState_Main
  void* code_type = nullptr;                                  // &PyCode_Type
  // What registers the count's stop with the atexit module (stop_at_exit): all with the GIL.
  void* (*import_module)(const char*) = nullptr;                      // PyImport_ImportModule
  void* (*attribute)(void*, const char*) = nullptr;                   // PyObject_GetAttrString
  void* (*new_function)(void*, void*, void*) = nullptr;               // PyCFunction_NewEx
  void* (*call_with)(void*, ...) = nullptr;                           // PyObject_CallFunctionObjArgs
  void* (*build_value)(const char*, ...) = nullptr;                   // Py_BuildValue
  void (*release)(void*) = nullptr;                                   // Py_DecRef
  void (*fetch_error)(void**, void**, void**) = nullptr;              // PyErr_Fetch
  void (*restore_error)(void*, void*, void*) = nullptr;               // PyErr_Restore
  bool can_stop_at_exit() const {
    return clear_error != nullptr && import_module != nullptr && attribute != nullptr && new_function != nullptr &&
           call_with != nullptr && build_value != nullptr && release != nullptr && fetch_error != nullptr &&
           restore_error != nullptr;
  }
  bool by_watcher(int minor) const {
    return minor >= 12 && add_pending_call != nullptr && add_code_watcher != nullptr && interpreter_of != nullptr &&
           main_interpreter != nullptr && can_stop_at_exit();
  }
  // CPython 3.11 has no code watchers: the code type's deallocator is wrapped instead (see count_by_deallocator).
  bool by_deallocator(int minor) const {
    return minor == 11 && add_pending_call != nullptr && code_type != nullptr && can_stop_at_exit();
  }
};

template <typename Fn>
Fn find(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

const Watching& watching() {
  static const Watching w = [] {
    Watching found;
    found.add_pending_call = find<decltype(found.add_pending_call)>("Py_AddPendingCall");
    found.add_code_watcher = find<decltype(found.add_code_watcher)>("PyCode_AddWatcher");
    found.clear_error = find<decltype(found.clear_error)>("PyErr_Clear");
    found.interpreter_of = find<decltype(found.interpreter_of)>("PyThreadState_GetInterpreter");
    found.main_interpreter = find<decltype(found.main_interpreter)>("PyInterpreterState_Main");
    found.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    found.import_module = find<decltype(found.import_module)>("PyImport_ImportModule");
    found.attribute = find<decltype(found.attribute)>("PyObject_GetAttrString");
    found.new_function = find<decltype(found.new_function)>("PyCFunction_NewEx");
    found.call_with = find<decltype(found.call_with)>("PyObject_CallFunctionObjArgs");
    found.build_value = find<decltype(found.build_value)>("Py_BuildValue");
    found.release = find<decltype(found.release)>("Py_DecRef");
    found.fetch_error = find<decltype(found.fetch_error)>("PyErr_Fetch");
    found.restore_error = find<decltype(found.restore_error)>("PyErr_Restore");
    return found;
  }();
  return w;
}

constexpr int kCodeDestroyed = 1;  // PY_CODE_EVENT_DESTROY
constexpr int kRequests = 4;       // Py_AddPendingCall fails while the pending queue is full: a few tries
std::atomic<uint64_t>& destroyed = detail::code_objects_destroyed;
std::atomic<int> requests{0};
// A type's deallocator is shared by all interpreters: counted_interpreter stays nullptr then.
std::atomic<const void*>& watched = detail::counted_interpreter;
constexpr size_t kThreadInterpreter = 16;  // PyThreadState: prev, next, interp

// Called with the GIL by whichever thread creates or destroys a code object: one atomic add, nothing of Python's.
int on_code_event(int event, void*) {
  if (event == kCodeDestroyed) destroyed.fetch_add(1, std::memory_order_acq_rel);
  return 0;
}

// PyTypeObject: PyObject_VAR_HEAD (24 bytes), tp_name, tp_basicsize, tp_itemsize, then tp_dealloc; the same in every
// CPython 3 release build on x86-64.
constexpr size_t kTypeName = 24;
constexpr size_t kTypeDealloc = 48;
using Deallocator = void (*)(void*);
std::atomic<Deallocator> code_deallocator{nullptr};

// Every code object is freed through its type's tp_dealloc (the code type has no subtypes), with the GIL.
void counting_deallocator(void* code) {
  destroyed.fetch_add(1, std::memory_order_acq_rel);
  code_deallocator.load(std::memory_order_relaxed)(code);
}

// Puts counting_deallocator in front of the code type's own deallocator; false when the type does not look as
// expected. The recorder is never unloaded (-z nodelete), so the wrapper outlives every code object.
bool count_by_deallocator(void* code_type) {
  auto* type = static_cast<char*>(code_type);
  const char* name = nullptr;
  Deallocator original = nullptr;
  std::memcpy(&name, type + kTypeName, sizeof name);
  std::memcpy(&original, type + kTypeDealloc, sizeof original);
  if (name == nullptr || std::strcmp(name, "code") != 0 || original == nullptr) return false;
  code_deallocator.store(original, std::memory_order_relaxed);
  Deallocator counting = &counting_deallocator;
  // Under the GIL, which every deallocation holds while it reads the slot.
  __atomic_store(reinterpret_cast<Deallocator*>(type + kTypeDealloc), &counting, __ATOMIC_RELEASE);
  return true;
}

// The count stops for good when Python begins to exit: the atexit module's functions run before the runtime says
// it is finalizing (Py_FinalizeEx), so that no stack is kept from then on, nor under an interpreter initialized again
// later, whose code objects no watcher counts. Registered before the count starts: a count that could not stop
// never starts.
struct MethodDef {  // PyMethodDef, the same in every CPython 3
  const char* name;
  void* (*function)(void*, void*);
  int flags;
  const char* doc;
};
constexpr int kNoArguments = 0x0004;  // METH_NOARGS

void* on_python_exit(void*, void*) {
  stop_python_code_epoch();
  return watching().build_value("");  // None
}
MethodDef on_python_exit_def{"firstassert_python_exit", &on_python_exit, kNoArguments,
                             "firstassert: Python frames are walked from here on"};

// Any exception the interpreter holds when the pending call runs is kept for it.
bool stop_at_exit(const Watching& w) {
  void *type = nullptr, *value = nullptr, *traceback = nullptr;
  w.fetch_error(&type, &value, &traceback);
  void* module = w.import_module("atexit");
  void* registration = module != nullptr ? w.attribute(module, "register") : nullptr;
  void* function = registration != nullptr ? w.new_function(&on_python_exit_def, nullptr, nullptr) : nullptr;
  void* result = function != nullptr ? w.call_with(registration, function, nullptr) : nullptr;
  for (void* object : {result, function, registration, module})
    if (object != nullptr) w.release(object);
  if (result == nullptr) w.clear_error();
  w.restore_error(type, value, traceback);
  return result != nullptr;
}

// Runs on the main thread with the GIL (Py_AddPendingCall's contract); minor is the interpreter's 3.minor.
int start_counting(void* minor_as_pointer) {
  const Watching& w = watching();
  const int minor = static_cast<int>(reinterpret_cast<intptr_t>(minor_as_pointer));
  if (destroyed.load(std::memory_order_acquire) != 0) return 0;  // a second request, already done
  if (!stop_at_exit(w)) return 0;  // walks keep checking every frame
  if (w.by_watcher(minor)) {
    if (w.add_code_watcher(&on_code_event) < 0) {
      w.clear_error();  // no watcher slot left: walks keep checking every frame
      return 0;
    }
    watched.store(w.main_interpreter(), std::memory_order_relaxed);
  } else if (!count_by_deallocator(w.code_type)) {
    return 0;
  }
  destroyed.store(1, std::memory_order_release);
  debug("Python 3.%d: code objects counted (by %s) until Python exits: a stack walked before is found again while "
        "none is freed", minor, w.by_watcher(minor) ? "a code watcher" : "the code type's deallocator");
  return 0;
}

}  // namespace

void stop_python_code_epoch() {
  if ((destroyed.fetch_or(detail::kCountStopped, std::memory_order_acq_rel) & detail::kCountStopped) == 0)
    debug("Python is exiting: its stacks are walked frame by frame from here on");
}

namespace detail {
std::atomic<uint64_t> code_objects_destroyed{0};
std::atomic<const void*> counted_interpreter{nullptr};
std::atomic<size_t> thread_interpreter_offset{0};

uint64_t python_code_epoch_slow(const void* thread_state, int minor) {
  uint64_t epoch = destroyed.load(std::memory_order_acquire);  // not stopped: python_code_epoch returned for that
  if (epoch != 0) {
    const void* interpreter = watched.load(std::memory_order_relaxed);
    if (interpreter == nullptr) return epoch;
    const void* of_thread = watching().interpreter_of(thread_state);
    const void* in_place = nullptr;
    std::memcpy(&in_place, static_cast<const char*>(thread_state) + kThreadInterpreter, sizeof in_place);
    if (of_thread != nullptr && in_place == of_thread)
      thread_interpreter_offset.store(kThreadInterpreter, std::memory_order_relaxed);
    return of_thread == interpreter ? epoch : 0;
  }
  if (requests.load(std::memory_order_relaxed) < kRequests &&
      requests.fetch_add(1, std::memory_order_relaxed) < kRequests &&
      (watching().by_watcher(minor) || watching().by_deallocator(minor))) {
    void* minor_as_pointer = reinterpret_cast<void*>(static_cast<intptr_t>(minor));
    if (watching().add_pending_call(&start_counting, minor_as_pointer) == 0)
      requests.store(kRequests, std::memory_order_relaxed);
  }
  return 0;
}
}  // namespace detail

}  // namespace firstassert
