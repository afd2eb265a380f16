// Python stacks kept for the life of the process: each distinct stack (the same frames, lines included) is copied in
// once and never changed or freed, so a launch record can hold one pointer to its frames instead of a copy of them.
#pragma once

#include <cstddef>

#include "core/launch_record.h"

namespace firstassert {

// The lasting copy of frames[0, count): found if the same stack was kept before, made otherwise. nullptr when count
// is 0 or the pool is full (a bounded 64 Ki frames of 8 Ki stacks): the caller keeps its own copy then.
// Lock-free for a stack kept before; the first keeping of a stack takes a lock.
const PythonFrame* lasting_python_frames(const PythonFrame* frames, size_t count);

}  // namespace firstassert
