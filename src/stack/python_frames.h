// Python frames of the launching thread: file, function and line of each frame, innermost first, read from the
// interpreter's own structures (python_layout.h), whether or not this thread holds the GIL: PyTorch and Triton
// release it before they launch. The few interpreter symbols it needs are found with dlsym (no link to libpython;
// nothing at all in a process without Python). Names are interned per code object, and each thread remembers the
// frames it walked, so a warm capture costs the frame walk and a check per frame, with no lock, allocation or
// reference count; from CPython 3.11, while no code object has been freed (python_code_epoch.h), a stack walked before
// is found again by frame addresses and instructions alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"

namespace firstassert {

// Where a capture left the frames: the caller's buffer, the thread's own copy of a stack walked before (valid until
// the thread's next capture), or a copy kept for good (python_stack_pool.h), which lasting says. 16 bytes: returned
// in two registers.
struct PythonStack {
  const PythonFrame* frames;
  uint32_t count;
  bool lasting;
};

namespace detail {
using PythonCapture = PythonStack (*)(PythonFrame* buffer, size_t max_frames, const void* thread_state);
// The capture for this process's interpreter, chosen at the first capture (which finds it).
extern std::atomic<PythonCapture> python_capture;
// PyGILState_GetThisThreadState once Python is found (stored before python_capture); until then, and without
// Python, a function that says none.
extern std::atomic<void* (*)()> python_thread_state;
}  // namespace detail

// Up to max_frames frames (at most kMaxPythonFrames; a larger max_frames takes no more, and is walked every time);
// none when Python is absent, not initialized, has never run on this thread, or is a version or build whose layout
// is not known (one info line says so). Inline, and the thread's state asked here, so that the warm capture makes
// no call and saves no register.
inline PythonStack capture_python_stack(PythonFrame* buffer, size_t max_frames) {
  detail::PythonCapture capture = detail::python_capture.load(std::memory_order_acquire);
  return capture(buffer, max_frames, detail::python_thread_state.load(std::memory_order_relaxed)());
}

}  // namespace firstassert
