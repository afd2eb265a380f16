// Python frames of the launching thread: file, function and line of each frame, innermost first, through the
// CPython C API found at run time (dlsym: no link to libpython; nothing at all in a process without Python), and only
// when this thread holds the GIL, the one state in which walking the frames is safe. Names are interned per code
// object (each code object is kept alive once seen, so its address can never name another function), so a warm
// capture costs the frame walk and one line-number lookup per frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"

namespace firstassert {

// Up to max_frames frames; 0 when Python is absent, not initialized, or this thread does not hold the GIL.
size_t capture_python_stack(PythonFrame* frames, size_t max_frames);

}  // namespace firstassert
