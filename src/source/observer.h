// What both event sources (the CUPTI subscriber and the interposition hooks) do with an API call of the program:
// each source only translates its own view of a call into a CallSite (CUPTI's callback id and the call's *_params
// struct, the vocabulary of api_table.h) and calls call_entered / call_exited, so launches, breadcrumbs, forced
// synchronization, stacks and errors are handled once, here. Whose call it is (call_guards.h) and which calls CUPTI
// has open (cupti_call_marks.h) are asked by both sources before they call in; observer.cpp says what each call does.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "core/fast_tls.h"
#include "core/sync_policy.h"
#include "core/tracker.h"
#include "source/api_table.h"
#include "source/call_guards.h"
#include "source/cupti_call_marks.h"
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

struct CallSite {
  CUpti_CallbackDomain domain;  // CUPTI_CB_DOMAIN_RUNTIME_API or CUPTI_CB_DOMAIN_DRIVER_API
  CUpti_CallbackId cbid;
  const void* params;           // the call's *_params struct (generated_*_meta.h), valid during the call
  const char* function;         // its name
  uintptr_t context = 0;        // the context current when the call began (0: none, or not known)
};

// Before the call: returns what call_exited needs back (the launch count, for calls that prove completion; the queue
// marks, for a launch: Tracker::queue_marks).
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
// slot and the queue marks, both for the breadcrumbs only. Asked first, inline, on every ENTER.
inline bool call_needs_entering(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return detail::launches_need_entering || !is_kernel_launch(domain, cbid);
}
// After it: kernel is the launched kernel's mangled name (launches), context the calling thread's current one,
// entered what call_entered returned (read only for the calls it matters to; null: not asked).
void call_exited(const CallSite& site, int code, const char* kernel, uintptr_t context, uint32_t correlation_id,
                 const uint64_t* entered);

}  // namespace firstassert::source
