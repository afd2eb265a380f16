// How many code objects the interpreter has destroyed, counted by a code watcher (CPython 3.12+) or, in CPython 3.11,
// which has none, by a wrapper around the code type's deallocator. While the count holds still, no code object has
// been freed, so none can have been replaced by another at its address: a Python stack walked before, found again
// frame for frame and instruction for instruction, is the same stack.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

namespace firstassert {

// The count, for walks of the thread whose state this is, in CPython 3.minor (what python_frames found); 0 when it
// cannot be relied on: a Python before 3.11, a thread of a subinterpreter under 3.12+ (the watcher sees the main
// interpreter's code objects only), a count not started yet (the first calls ask the main thread to start it,
// through Py_AddPendingCall, as that needs the GIL) or refused, or Python exiting. Lock-free after the first calls,
// which take the interpreter's pending-call lock once. Inline (below): every walk asks.
inline uint64_t python_code_epoch(const void* thread_state, int minor);

// Stops the count for good (from then on it gives 0): a walk calls it when it finds the interpreter finalizing.
void stop_python_code_epoch();

namespace detail {
// 0 until the count has started, then 1 + code objects destroyed since; with kCountStopped set once Python has begun
// to exit (its atexit functions run), after which no count is given (0).
extern std::atomic<uint64_t> code_objects_destroyed;
constexpr uint64_t kCountStopped = uint64_t{1} << 63;
// A count that has started and not stopped.
inline bool counting(uint64_t epoch) { return epoch - 1 < kCountStopped - 1; }
// The interpreter whose code objects are counted (stored before the count starts); nullptr: every interpreter's.
extern std::atomic<const void*> counted_interpreter;
// Where PyThreadState keeps its interpreter (prev, next, interp in every CPython 3): read in place once a first call
// saw it say what PyThreadState_GetInterpreter says; 0 until then (the function is asked).
extern std::atomic<size_t> thread_interpreter_offset;
uint64_t python_code_epoch_slow(const void* thread_state, int minor);
}  // namespace detail

inline uint64_t python_code_epoch(const void* thread_state, int minor) {
  uint64_t epoch = detail::code_objects_destroyed.load(std::memory_order_acquire);
  const void* counted = detail::counted_interpreter.load(std::memory_order_relaxed);
  if (!detail::counting(epoch) || counted != nullptr) {
    if ((epoch & detail::kCountStopped) != 0) return 0;
    size_t offset = detail::thread_interpreter_offset.load(std::memory_order_relaxed);
    if (epoch == 0 || offset == 0) return detail::python_code_epoch_slow(thread_state, minor);
    const void* interpreter;
    std::memcpy(&interpreter, static_cast<const char*>(thread_state) + offset, sizeof interpreter);
    return interpreter == counted ? epoch : 0;
  }
  return epoch;
}

}  // namespace firstassert
