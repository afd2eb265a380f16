// Timestamps and thread ids for the launch path: clock_gettime goes through the vDSO (no system call), and the
// thread id is asked of the kernel once per thread.
#pragma once

#include <time.h>

#include <cstdint>

#include "fast_tls.h"

namespace firstassert {

// Inline: every launch reads it.
inline int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
int64_t wall_ns();
// The wall-clock time of a CLOCK_MONOTONIC reading, by the two clocks' offset now: launches keep one clock reading
// and their wall time is worked out when they are read. Async-signal-safe.
int64_t wall_from_monotonic(int64_t monotonic);

namespace detail {
extern constinit FIRSTASSERT_FAST_TLS thread_local int32_t cached_thread_id;  // constinit: no TLS wrapper call
int32_t ask_thread_id();
}  // namespace detail

// Inline: every launch asks.
inline int32_t current_thread_id() {
  int32_t id = detail::cached_thread_id;
  return id != 0 ? id : detail::ask_thread_id();
}

}  // namespace firstassert
