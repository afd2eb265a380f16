// How many code objects the interpreter has destroyed, counted by a code watcher (CPython 3.12+) or, in CPython 3.11,
// which has none, by a wrapper around the code type's deallocator. While the count holds still, no code object has
// been freed, so none can have been replaced by another at its address: a Python stack walked before, found again
// frame for frame and instruction for instruction, is the same stack.
#pragma once

#include <cstdint>

namespace firstassert {

// The count, for walks of the thread whose state this is, in CPython 3.minor (what python_frames found); 0 when it
// cannot be relied on: a Python before 3.11, a
// thread of a subinterpreter under 3.12+ (the watcher sees the main interpreter's code objects only), or a count not
// started yet (the first calls ask the main thread to start it, through Py_AddPendingCall, as that needs the GIL) or
// refused.
// Lock-free after the first calls, which take the interpreter's pending-call lock once.
uint64_t python_code_epoch(const void* thread_state, int minor);

}  // namespace firstassert
