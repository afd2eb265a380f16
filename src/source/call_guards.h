// Whose CUDA call this is: firstassert's own (OurCall), one the interposition hooks record themselves (HookedCall),
// or the program's, in a process that still records (not a forked child). Every CUPTI callback and every hooked call
// asks first, so the answers are inline thread-local reads.
#pragma once

#include <atomic>

#include "core/fast_tls.h"

namespace firstassert::source {

namespace detail {
extern constinit FIRSTASSERT_FAST_TLS thread_local bool inside_firstassert;  // constinit: no TLS wrapper call
extern std::atomic<bool> stopped_here;
}  // namespace detail

// Marks CUDA calls firstassert itself makes (a breadcrumb, a forced sync, a device lookup): not the program's.
class OurCall {
 public:
  OurCall() : outer_(detail::inside_firstassert) { detail::inside_firstassert = true; }
  ~OurCall() { detail::inside_firstassert = outer_; }
  OurCall(const OurCall&) = delete;
  OurCall& operator=(const OurCall&) = delete;

 private:
  bool outer_;
};

// In a forked child the parent's recording is not this process's: every source goes quiet (an exec starts afresh).
void stop_in_this_process();
inline bool stopped() { return detail::stopped_here.load(std::memory_order_acquire); }
inline bool inside_our_call() { return detail::inside_firstassert || stopped(); }

// The program's runtime calls on this thread, as one source sees them: the driver calls made inside one are its
// implementation, folded into it (each launch recorded once, each failing call counted once). entered/exited return
// true for the outermost call. Each source keeps its own, thread_local (zero-initialized): when CUPTI is handed over
// mid-call, a runtime call CUPTI saw enter but never leave cannot make the interposition hooks take every later call
// on that thread for a nested one.
struct RuntimeNesting {
  int depth;
  bool entered() { return depth++ == 0; }
  bool exited() {
    if (depth > 0) --depth;  // a call entered before recording began has no ENTER
    return depth == 0;
  }
  bool inside() const { return depth > 0; }
};

// A call of the program the interposition hooks record themselves, from its entry to its return (nested calls
// included): CUPTI, while it is still subscribed during a hand-over, leaves it alone, so no call is recorded twice.
namespace detail {
extern constinit FIRSTASSERT_FAST_TLS thread_local int hooked_depth;  // constinit: no TLS wrapper call
}  // namespace detail
class HookedCall {
 public:
  HookedCall() { ++detail::hooked_depth; }
  ~HookedCall() { --detail::hooked_depth; }
  HookedCall(const HookedCall&) = delete;
  HookedCall& operator=(const HookedCall&) = delete;
};
inline bool inside_hooked_call() { return detail::hooked_depth > 0; }

}  // namespace firstassert::source
