// Python frames of the launching thread: file, function and line of each frame, innermost first, read from the
// interpreter's own structures (python_layout.h), whether or not this thread holds the GIL: PyTorch and Triton
// release it before they launch. The few interpreter symbols it needs are found with dlsym (no link to libpython;
// nothing at all in a process without Python). Names are interned per code object, and each thread remembers the
// frames it walked, so a warm capture costs the frame walk and a check per frame, with no lock, allocation or
// reference count; from CPython 3.11, while no code object has been freed (python_code_epoch.h), a stack walked before
// is found again by frame addresses and instructions alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"

namespace firstassert {

// Up to max_frames frames; 0 when Python is absent, not initialized, has never run on this thread, or is a version
// or build whose layout is not known (one info line says so). Where the frames are is told in *where when given:
// frames, the thread's own copy of a stack walked before (valid until the thread's next capture), or a copy kept for
// good (python_stack_pool.h), which *lasting, when given, says. Without where, they are always in frames.
size_t capture_python_stack(PythonFrame* frames, size_t max_frames, const PythonFrame** where = nullptr,
                            bool* lasting = nullptr);

}  // namespace firstassert
