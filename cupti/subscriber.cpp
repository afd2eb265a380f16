// The CUPTI event source. Workflow in brief (the callbacks, their ENTER and EXIT sites and CUpti_CallbackData: the
// "Callback API" section of CUPTI's documentation):
//
// Enabled (enable_followed_calls; which ones and why: followed_calls.h): the runtime domain but the queries and
// settings a framework makes around every op; in the driver domain only the launches, the stream and graph calls
// and the checked copies, fills, allocations and frees (the whole domain where CUPTI cannot enable one callback);
// the resource domain, whose callbacks on_callback returns from at once. One function, on_callback, takes them all.
//
// Every callback, first: a driver call made inside a runtime call is that call's implementation and returns at one
// compare; a routine call (source::routine_call: only its error matters) takes the fast path, its result read at
// EXIT and only a failure passed on; firstassert's own calls (source::OurCall) and the calls the interposition hooks
// record during a hand-over (source::HookedCall) are left alone. What remains is the program's outermost call.
//
// At API ENTER (entered): the call is marked open for a hand-over to wait on (source::cupti_call_began), then
// source::call_entered, whose result is kept in CUPTI's correlationData for the EXIT:
// - a kernel launch: its breadcrumb slot taken and the queue marks read (the launch calls already queued, whose
//   breadcrumbs are ahead of it); without breadcrumbs nothing at all (source::call_needs_entering);
// - a sync (of the device, a stream or an event; a stream query, a blocking copy): the launch count, which its
//   success proves complete; with breadcrumbs a sync is routine and does nothing here;
// - a graph launch: its breadcrumb slot, and the slots of the executable graph's kernel nodes cleared.
// At API EXIT (left): source::call_exited with the return code, the kernel's name, the context and correlationData,
// then the call is marked closed (CallCloser):
// - a launch that succeeded: its device, stacks and number, its breadcrumb written after it, its record in the ring
//   (with its queue mark), or the forced sync FIRSTASSERT_SYNC asks for; one that failed: recorded as a candidate or
//   as refused;
// - a sync: recorded with the launch count from its ENTER, so the tracker knows those launches completed;
// - a graph launch: one launch of the ring, like any other (its nodes are read from the graph records later);
// - any other call: its error, if it failed; a graph call that succeeded updates the graph records.
//
// Where each job lives: which calls are followed, followed_calls; opening CUPTI, cupti_library; what a call means
// and does, src/source/observer.cpp, which hands on the device of a context (context_devices), the stacks
// (launch_stacks), the graph records (graph_calls), the forced syncs (forced_sync); whose call it is,
// src/source/call_guards.h; the open-call marks a hand-over waits on, src/source/cupti_call_marks.h; the ring and
// the evidence, src/core/tracker; the breadcrumbs, src/device/.
#include "subscriber.h"

#include <cuda.h>
#include <cupti.h>

#include <time.h>

#include <atomic>

#include "core/fast_tls.h"
#include "core/no_ipa.h"
#include "cupti_library.h"
#include "followed_calls.h"
#include "source/observer.h"

namespace firstassert::cupti {
namespace {

// The program's runtime calls on this thread as CUPTI showed them, within one subscription (a call whose EXIT never
// came, because CUPTI was given up while it ran, must not make every call after a new subscription look nested):
// their depth and, while it is above 0, the subscription in `inside`, so that a driver call made inside one (the
// most frequent callback: every runtime call makes one or more) is known by one compare.
struct RuntimeCalls {
  unsigned subscription;
  int depth;
  unsigned inside;  // the subscription while depth > 0, else 0
};
constinit FIRSTASSERT_FAST_TLS thread_local RuntimeCalls runtime_calls{0, 0, 0};

inline RuntimeCalls& runtime_calls_now(unsigned now) {
  if (runtime_calls.subscription != now) runtime_calls = {now, 0, 0};
  return runtime_calls;
}
// True for the outermost call.
inline bool runtime_call_entered(unsigned now) {
  RuntimeCalls& calls = runtime_calls_now(now);
  if (calls.depth++ != 0) return false;
  calls.inside = now;
  return true;
}
inline bool runtime_call_exited(unsigned now) {
  RuntimeCalls& calls = runtime_calls_now(now);
  if (calls.depth > 0) --calls.depth;  // a call entered before recording began has no ENTER
  if (calls.depth != 0) return false;
  calls.inside = 0;
  return true;
}
// Subscriptions are numbered from 1: no thread is inside a call of subscription 0.
inline bool inside_runtime_call(unsigned now) { return runtime_calls.inside == now; }

// While stop_recording waits, calls entering are left alone (not opened, not recorded), so that the wait ends under
// steady traffic; the calls already open are recorded whole.
std::atomic<bool> draining{false};

// The program's calls CUPTI showed entering and not yet leaving, for stop_recording to wait on: one at most per
// thread (the outermost), marked on the thread by source::cupti_call_began with the subscription it began in, so
// that a leave whose enter came before recording began, or under another subscription, miscounts none
// (source::open_cupti_calls reads the marks). Closed once the call is recorded, however the recording ends.
struct CallCloser {
  ~CallCloser() { source::cupti_call_ended(); }
};

source::CallSite site_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  return {domain, cbid, cb.functionParams, cb.functionName, reinterpret_cast<uintptr_t>(cb.context)};
}

// The hot paths below make their calls last (tail calls) so that none of them saves registers: each takes
// on_callback's arguments as they are (FIRSTASSERT_NO_IPA keeps the compiler from dropping the unused one, which
// would move the others).

// What the observer is told of a call's ENTER. Nothing may unwind into CUPTI or the program: a failure of ours (out of
// memory) loses what the call would have told.
FIRSTASSERT_NO_IPA __attribute__((cold)) void enter(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                                    const void* data) {
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  try {
    *cb.correlationData = source::call_entered(site_of(domain, cbid, cb));
  } catch (...) {
  }
}

// A call of the program CUPTI shows entering, at its outermost level (driver calls only when made directly): marked
// open, then told to the observer when it has something to do before the call (record only: nothing, for a launch).
void entered(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
FIRSTASSERT_NO_IPA __attribute__((cold)) void entered_first(void* userdata, CUpti_CallbackDomain domain,
                                                            CUpti_CallbackId cbid, const void* data) {
  source::lend_cupti_call_mark();
  entered(userdata, domain, cbid, data);
}
FIRSTASSERT_NO_IPA void entered(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (draining.load(std::memory_order_relaxed)) return;
  if (!source::cupti_call_mark_lent()) return entered_first(userdata, domain, cbid, data);
  source::cupti_call_began();
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  if (cb.correlationData != nullptr && source::call_needs_entering(domain, cbid)) enter(userdata, domain, cbid, data);
}

// The same call leaving: recorded, then closed.
FIRSTASSERT_NO_IPA void left(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  // Entered while the subscription was being given up: left alone.
  if (draining.load(std::memory_order_relaxed) && !source::inside_cupti_call()) return;
  CallCloser closer;
  if (cb.functionReturnValue == nullptr) return;
  try {
    source::call_exited(site_of(domain, cbid, cb), *static_cast<const int*>(cb.functionReturnValue), cb.symbolName,
                        reinterpret_cast<uintptr_t>(cb.context), cb.correlationId, cb.correlationData);
  } catch (...) {
  }
}

// CUPTI's view of a call, handed to the shared observer: runtime calls at their outermost level, driver calls only
// when made directly (not as the implementation of a runtime call: on_callback has returned for those already).
template <bool kRuntime>
FIRSTASSERT_NO_IPA void handle(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  // The interposition hooks record a call they wrap themselves (a hand-over in progress): never both.
  if (source::inside_our_call() || source::inside_hooked_call() || data == nullptr) return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  if (cb.callbackSite == CUPTI_API_ENTER) {
    // A runtime call counts as entered even while draining: its nested driver calls are its own all the same.
    if (!kRuntime || runtime_call_entered(source::cupti_subscription_now())) entered(userdata, domain, cbid, data);
    return;
  }
  if (!kRuntime || runtime_call_exited(source::cupti_subscription_now())) left(userdata, domain, cbid, data);
}

// A routine call (source::routine_call: only its error matters) that failed: recorded, after the checks handle()
// makes first.
FIRSTASSERT_NO_IPA __attribute__((cold, noinline)) void routine_failed(void* userdata, CUpti_CallbackDomain domain,
                                                                       CUpti_CallbackId cbid, const void* data) {
  if (source::call_meaning(domain, cbid) == source::kNoErrorCode) return;
  if (source::inside_our_call() || source::inside_hooked_call()) return;
  left(userdata, domain, cbid, data);
}

inline bool failed(const void* data) {
  const auto* result = static_cast<const int*>(static_cast<const CUpti_CallbackData*>(data)->functionReturnValue);
  return result != nullptr && *result != 0;
}

// The most frequent callbacks first, on their own: a driver call made inside a runtime call CUPTI recorded the start
// of (every runtime call makes one or more) is its implementation, left to the runtime call; then the routine calls.
// A routine runtime call never holds another runtime call, nor is held by one (runtime callbacks do not nest): while
// it runs, `inside` alone says so, for its own driver calls; only its result is checked.
void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (!source::routine_runtime_call(cbid)) return handle<true>(userdata, domain, cbid, data);
    if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER) {
      runtime_calls.inside = source::cupti_subscription_now();
      return;
    }
    runtime_calls.inside = 0;
    if (failed(data)) routine_failed(userdata, domain, cbid, data);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;  // the resource domain's callbacks tell the recorder nothing
  if (inside_runtime_call(source::cupti_subscription_now())) return;
  if (!source::routine_driver_call(cbid)) return handle<false>(userdata, domain, cbid, data);
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_ENTER && failed(data))
    routine_failed(userdata, domain, cbid, data);
}

// Sets each callback of ids. The ids are CUPTI 13's (the headers firstassert is built against); an older CUPTI refuses
// the ids its table does not reach (CUPTI 12.8's driver table ends at 782) with CUPTI_ERROR_INVALID_PARAMETER: calls
// newer than that CUPTI's CUDA, which its runtime never makes, so they are passed over. Any other refusal, or every id
// refused, is an error.
CUptiResult set_callbacks(const CuptiLibrary& lib, CUpti_SubscriberHandle subscriber, uint32_t enable,
                          CUpti_CallbackDomain domain, const std::vector<CUpti_CallbackId>& ids) {
  size_t refused = 0;
  for (CUpti_CallbackId cbid : ids) {
    CUptiResult r = lib.enable_callback(enable, subscriber, domain, cbid);
    if (r == CUPTI_ERROR_INVALID_PARAMETER) {
      ++refused;
    } else if (r != CUPTI_SUCCESS) {
      return r;
    }
  }
  return !ids.empty() && refused == ids.size() ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_SUCCESS;
}

// The callbacks the recorder follows (followed_calls.h); whole domains where CUPTI cannot enable one callback.
CUptiResult enable_followed_calls(const CuptiLibrary& lib, CUpti_SubscriberHandle subscriber) {
  CUptiResult r = lib.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (r == CUPTI_SUCCESS && lib.enable_callback != nullptr)
    r = set_callbacks(lib, subscriber, 0, CUPTI_CB_DOMAIN_RUNTIME_API, unfollowed_runtime_calls());
  if (r == CUPTI_SUCCESS && lib.enable_callback != nullptr) {
    r = set_callbacks(lib, subscriber, 1, CUPTI_CB_DOMAIN_DRIVER_API, followed_driver_calls());
  } else if (r == CUPTI_SUCCESS) {
    r = lib.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  }
  if (r == CUPTI_SUCCESS) r = lib.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE);
  return r;
}

CuptiLibrary library;
// Written under the caller's serialization, read from any thread (recording()).
std::atomic<CUpti_SubscriberHandle> subscription{nullptr};

}  // namespace

SubscribeResult start_recording(const CuptiLibrary& lib, const std::string& why_not_opened) {
  SubscribeResult result;
  if (subscription.load() != nullptr) {
    result.recording = true;
    result.cupti_path = library.path;
    result.cupti_api_version = library.api_version;
    result.message = "recording launches through CUPTI at " + library.path;
    return result;
  }
  if (!lib) {
    result.message = why_not_opened;
    return result;
  }
  result.cupti_path = lib.path;
  result.cupti_api_version = lib.api_version;
  // Our own subscription: the preloaded stub's hook of cuptiSubscribe (which hands CUPTI over to another tool) lets
  // it through.
  source::OurCall ours;
  draining.store(false);

  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (lib.subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "firstassert";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    r = lib.subscribe_v2(&subscriber, on_callback, nullptr, &params);
  } else {
    r = lib.subscribe(&subscriber, on_callback, nullptr);
  }
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    result.message = std::string("the CUPTI subscriber slot is taken") +
                     (holder[0] != '\0' ? std::string(" by ") + holder : std::string(" by another tool")) +
                     " (a profiler, compute-sanitizer or cuda-gdb?)";
    return result;
  }
  if (r != CUPTI_SUCCESS) {
    result.message = "cuptiSubscribe failed with " + lib.describe(r) + " using " + lib.path;
    return result;
  }
  r = enable_followed_calls(lib, subscriber);
  if (r != CUPTI_SUCCESS) {
    lib.unsubscribe(subscriber);
    result.message = "enabling CUPTI's callbacks failed with " + lib.describe(r);
    return result;
  }
  library = lib;
  subscription.store(subscriber);
  result.recording = true;
  result.message = "recording launches through CUPTI at " + lib.path;
  return result;
}

bool recording() { return subscription.load() != nullptr; }

bool stop_recording(int grace_ms, int wait_ms) {
  CUpti_SubscriberHandle held = subscription.load();
  if (held == nullptr) return true;
  const timespec tick{0, 1000000};
  int waited = 0;
  for (; waited < grace_ms && waited < wait_ms; ++waited) nanosleep(&tick, nullptr);  // still recording
  draining.store(true);
  unsigned now = source::cupti_subscription_now();
  // In a forked child the other threads are gone, and their calls with them: nothing to wait for.
  auto open = [now] { return source::stopped() ? 0 : source::open_cupti_calls(now); };
  for (; waited < wait_ms && open() > 0; ++waited) nanosleep(&tick, nullptr);
  bool drained = open() == 0;
  {
    source::OurCall ours;
    library.unsubscribe(held);
  }
  subscription.store(nullptr);
  source::cupti_subscription_ended();
  return drained;
}

}  // namespace firstassert::cupti
