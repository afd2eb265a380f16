#pragma once

#include <stddef.h>

namespace firstassert::stub {

// From now on, what the process writes to stderr is also handed to the recorder (firstassert_recorder_stderr).
void attach_stderr_tap(void (*recorder)(const char* bytes, size_t size));

}  // namespace firstassert::stub
