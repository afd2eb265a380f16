#include "call_guards.h"

namespace firstassert::source {

namespace detail {
constinit FIRSTASSERT_FAST_TLS thread_local bool inside_firstassert = false;
std::atomic<bool> stopped_here{false};
constinit FIRSTASSERT_FAST_TLS thread_local int hooked_depth = 0;
}  // namespace detail

void stop_in_this_process() { detail::stopped_here.store(true, std::memory_order_release); }

}  // namespace firstassert::source
