// The outermost call of the program on this thread that CUPTI records, from its ENTER to its EXIT: while it lasts
// (within the subscription it began under), the hooks leave the calls made inside it, such as a runtime launch's
// driver launch, to CUPTI, so that a call CUPTI entered before a hand-over is not recorded again, in part, by them.
// Subscriptions are numbered from 1. began returns the number it marked the thread with (0: the thread has a mark of
// the current subscription already, or no slot lent yet: see below); ended the number of the mark it cleared (0:
// none). Inline: CUPTI's callback asks on every call.
//
// The marks are kept in slots of a static table, one per thread that made such a call (lent at its first, given
// back when it exits), so that giving CUPTI up can wait for the calls still open by reading them (open_cupti_calls)
// instead of every call changing a shared count twice. Until its first call a thread points to a mark that stays 0.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/fast_tls.h"

namespace firstassert::source {

namespace detail {
extern std::atomic<unsigned> no_cupti_call;  // never written
extern constinit FIRSTASSERT_FAST_TLS thread_local std::atomic<unsigned>* cupti_call_mark;  // no TLS wrapper call
extern std::atomic<unsigned> cupti_subscription;
}  // namespace detail

// Whether the thread has its slot; lend_cupti_call_mark gives it one (its first call; beyond the table's slots, a
// mark of its own that only it reads).
inline bool cupti_call_mark_lent() { return detail::cupti_call_mark != &detail::no_cupti_call; }
void lend_cupti_call_mark();
inline unsigned cupti_subscription_now() { return detail::cupti_subscription.load(std::memory_order_relaxed); }
inline bool inside_cupti_call() {
  unsigned mark = detail::cupti_call_mark->load(std::memory_order_relaxed);
  return mark != 0 && mark == cupti_subscription_now();
}
inline unsigned cupti_call_began() {
  if (inside_cupti_call() || !cupti_call_mark_lent()) return 0;  // lent first by the caller
  unsigned now = cupti_subscription_now();
  detail::cupti_call_mark->store(now, std::memory_order_relaxed);  // only its own thread writes a mark
  return now;
}
// Release: whoever sees the mark cleared sees the call's record complete.
inline unsigned cupti_call_ended() {
  unsigned mark = detail::cupti_call_mark->load(std::memory_order_relaxed);
  if (mark != 0) detail::cupti_call_mark->store(0, std::memory_order_release);
  return mark;
}
// The calls marked with this subscription now, on any thread (the marks of threads beyond the table's 1,024 slots,
// which keep theirs to themselves, are not seen).
size_t open_cupti_calls(unsigned subscription);
void cupti_subscription_ended();

}  // namespace firstassert::source
