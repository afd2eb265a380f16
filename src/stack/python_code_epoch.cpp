#include "python_code_epoch.h"

#include <dlfcn.h>

#include <atomic>

namespace firstassert {
namespace {

// The interpreter's entry points, found by name (nothing is linked); all of them, or none is used.
struct Watching {
  int (*add_pending_call)(int (*)(void*), void*) = nullptr;  // Py_AddPendingCall: any thread, no GIL
  int (*add_code_watcher)(int (*)(int, void*)) = nullptr;    // PyCode_AddWatcher (3.12+): with the GIL
  void (*clear_error)() = nullptr;                            // PyErr_Clear
  void* (*interpreter_of)(const void*) = nullptr;             // PyThreadState_GetInterpreter
  void* (*main_interpreter)() = nullptr;                      // PyInterpreterState_Main
  bool usable() const {
    return add_pending_call != nullptr && add_code_watcher != nullptr && clear_error != nullptr &&
           interpreter_of != nullptr && main_interpreter != nullptr;
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
    return found;
  }();
  return w;
}

constexpr int kCodeDestroyed = 1;  // PY_CODE_EVENT_DESTROY
constexpr int kRequests = 4;       // Py_AddPendingCall fails while the pending queue is full: a few tries
std::atomic<uint64_t> destroyed{0};  // 0 until the watcher is registered, then 1 + code objects destroyed since
std::atomic<int> requests{0};
std::atomic<void*> watched{nullptr};  // the main interpreter, stored before destroyed becomes non-zero

// Called with the GIL by whichever thread creates or destroys a code object: one atomic add, nothing of Python's.
int on_code_event(int event, void*) {
  if (event == kCodeDestroyed) destroyed.fetch_add(1, std::memory_order_acq_rel);
  return 0;
}

// Runs on the main thread with the GIL (Py_AddPendingCall's contract).
int register_watcher(void*) {
  const Watching& w = watching();
  if (destroyed.load(std::memory_order_acquire) != 0) return 0;  // a second request, already done
  if (w.add_code_watcher(&on_code_event) < 0) {
    w.clear_error();  // no watcher slot left: walks keep checking every frame
    return 0;
  }
  watched.store(w.main_interpreter(), std::memory_order_relaxed);
  destroyed.store(1, std::memory_order_release);
  return 0;
}

}  // namespace

uint64_t python_code_epoch(const void* thread_state) {
  uint64_t epoch = destroyed.load(std::memory_order_acquire);
  if (epoch != 0) {
    return watching().interpreter_of(thread_state) == watched.load(std::memory_order_relaxed) ? epoch : 0;
  }
  if (requests.load(std::memory_order_relaxed) < kRequests &&
      requests.fetch_add(1, std::memory_order_relaxed) < kRequests && watching().usable()) {
    if (watching().add_pending_call(&register_watcher, nullptr) == 0)
      requests.store(kRequests, std::memory_order_relaxed);
  }
  return 0;
}

}  // namespace firstassert
