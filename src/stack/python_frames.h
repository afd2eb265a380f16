// Python frames of the launching thread: file, function and line of each frame, innermost first, read from the
// interpreter's own structures (python_layout.h), whether or not this thread holds the GIL: PyTorch and Triton
// release it before they launch. The few interpreter symbols it needs are found with dlsym (no link to libpython;
// nothing at all in a process without Python). Names are interned per code object, so a warm capture costs the frame
// walk and one line-number lookup per frame, with no lock, allocation or reference count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"

namespace firstassert {

// Up to max_frames frames; 0 when Python is absent, not initialized, has never run on this thread, or is a version
// or build whose layout is not known (one info line says so).
size_t capture_python_stack(PythonFrame* frames, size_t max_frames);

}  // namespace firstassert
