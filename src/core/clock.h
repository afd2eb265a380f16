// Timestamps and thread ids for the launch path: clock_gettime goes through the vDSO (no system call), and the
// thread id is asked of the kernel once per thread.
#pragma once

#include <cstdint>

namespace firstassert {

int64_t monotonic_ns();
int64_t wall_ns();
int32_t current_thread_id();

}  // namespace firstassert
