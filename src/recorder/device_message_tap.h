// The recorder's end of the stderr tap (the stub's stderr_tap.cpp hands over what the process writes to stderr).
#pragma once

#include <cstddef>

namespace firstassert {

// From now on, what reaches feed_device_messages is parsed for the driver's device assertion lines.
void start_stderr_tap();
// Never blocks or allocates; ignored until start_stderr_tap().
void feed_device_messages(const char* bytes, size_t size);

}  // namespace firstassert
