#include "clock.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fast_tls.h"

namespace firstassert {
namespace {

// In a forked child only the forking thread survives, and its id is new.
void forget_thread_id_in_child() { detail::cached_thread_id = 0; }

}  // namespace

int64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t wall_from_monotonic(int64_t monotonic) {
  if (monotonic == 0) return 0;
  int64_t wall = wall_ns();
  return wall - (monotonic_ns() - monotonic);
}

namespace detail {

constinit FIRSTASSERT_FAST_TLS thread_local int32_t cached_thread_id = 0;

int32_t ask_thread_id() {
  static const bool registered = pthread_atfork(nullptr, nullptr, forget_thread_id_in_child) == 0;
  (void)registered;
  cached_thread_id = static_cast<int32_t>(syscall(SYS_gettid));
  return cached_thread_id;
}

}  // namespace detail

}  // namespace firstassert
