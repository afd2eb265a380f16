// What both event sources (the CUPTI subscriber and the interposition hooks) do with an API call of the program:
// each source only translates its own view of a call into a CallSite (CUPTI's callback id and the call's *_params
// struct, the vocabulary of api_table.h) and calls call_entered / call_exited, so launches, breadcrumbs, forced
// synchronization, stacks and errors are handled once, here.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "core/fast_tls.h"
#include "core/sync_policy.h"
#include "core/tracker.h"
#include "source/api_table.h"
#include "device/breadcrumbs.h"
#include "device/graph_breadcrumbs.h"

namespace firstassert::source {

// What the calls feed and use; all outlive recording. breadcrumbs and sync may be null (off).
struct Recording {
  Tracker* tracker = nullptr;
  Breadcrumbs* breadcrumbs = nullptr;
  GraphBreadcrumbs* graphs = nullptr;  // the kernel nodes of CUDA graphs (and their breadcrumbs, when on)
  SyncPolicy* sync = nullptr;
  unsigned stack_depth = 0;  // native frames per launch; 0: none
  bool python = false;       // Python frames per launch, read from the interpreter with or without the GIL
};

void start(const Recording& recording);
const Recording& current_recording();

// Inline, as the marks below: every callback and hooked call asks.
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

// The outermost call of the program on this thread that CUPTI records, from its ENTER to its EXIT: while it lasts
// (within the subscription it began under), the hooks leave the calls made inside it, such as a runtime launch's
// driver launch, to CUPTI, so that a call CUPTI entered before a hand-over is not recorded again, in part, by them.
// Subscriptions are numbered from 1. began returns the number it marked the thread with (0: the thread has a mark of
// the current subscription already, or no slot lent yet: see below); ended the number of the mark it cleared (0: none). Inline: CUPTI's callback
// asks on every call.
//
// The marks are kept in slots of a static table, one per thread that made such a call (lent at its first, given
// back when it exits), so that giving CUPTI up can wait for the calls still open by reading them (open_cupti_calls)
// instead of every call changing a shared count twice. Until its first call a thread points to a mark that stays 0.
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

struct CallSite {
  CUpti_CallbackDomain domain;  // CUPTI_CB_DOMAIN_RUNTIME_API or CUPTI_CB_DOMAIN_DRIVER_API
  CUpti_CallbackId cbid;
  const void* params;           // the call's *_params struct (generated_*_meta.h), valid during the call
  const char* function;         // its name
};

// Before the call: returns what call_exited needs back (the launch count, for calls that prove completion).
uint64_t call_entered(const CallSite& site);
namespace detail {
extern bool launches_need_entering;  // breadcrumbs are written: set by start(), before recording begins
// Per callback id, whether the call is routine (below); filled by start().
struct RoutineCalls {
  bool runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
  bool driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
};
extern RoutineCalls routine_calls;
}  // namespace detail
// The calls whose success tells the recorder nothing, only their error: kErrorOnly and kNoErrorCode ones, and the
// kSyncOnly ones when recording began with breadcrumbs, which prove all a successful sync would (the breadcrumbs
// written before it ran before it returned); should they turn off later, syncs prove nothing more: fewer launches
// are known complete, never more. Inline, one load: every callback asks.
inline bool routine_runtime_call(CUpti_CallbackId cbid) {
  return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && detail::routine_calls.runtime[cbid];
}
inline bool routine_driver_call(CUpti_CallbackId cbid) {
  return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && detail::routine_calls.driver[cbid];
}
inline bool routine_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return routine_runtime_call(cbid);
  return domain == CUPTI_CB_DOMAIN_DRIVER_API && routine_driver_call(cbid);
}
// Whether call_entered has anything to do for the call: a kernel launch needs nothing before it but its breadcrumb
// slot. Asked first, inline, on every ENTER.
inline bool call_needs_entering(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return detail::launches_need_entering || !is_kernel_launch(domain, cbid);
}
// After it: kernel is the launched kernel's mangled name (launches), context the calling thread's current one,
// entered what call_entered returned (read only for the calls it matters to; null: not asked).
void call_exited(const CallSite& site, int code, const char* kernel, uintptr_t context, uint32_t correlation_id,
                 const uint64_t* entered);

}  // namespace firstassert::source
