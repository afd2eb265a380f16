#include "subscriber.h"

#include <cuda.h>
#include <cupti.h>

#include <time.h>

#include <atomic>

#include "core/clock.h"
#include "core/fast_tls.h"
#include "cupti_library.h"
#include "source/observer.h"

namespace firstassert::cupti {
namespace {

// The program's runtime calls on this thread as CUPTI showed them, within one subscription: a call whose EXIT never
// came (CUPTI was given up while it ran) must not make every call after a new subscription look nested.
struct SubscriptionNesting {
  unsigned subscription;
  source::RuntimeNesting calls;
};
FIRSTASSERT_FAST_TLS thread_local SubscriptionNesting nesting;

source::RuntimeNesting& runtime_calls() {
  unsigned now = source::cupti_subscription_now();
  if (nesting.subscription != now) nesting = {now, {0}};
  return nesting.calls;
}

// The program's calls CUPTI showed entering and not yet leaving, for stop_recording to wait on: one at most per
// thread (the outermost, marked on the thread by source::cupti_call_began), counted under the subscription it began
// in, so that a leave whose enter came before recording began, or under another subscription, miscounts none. Striped
// by thread, so that threads launching at once do not share one cache line.
constexpr unsigned kSubscriptions = 16;  // counts kept for the latest few: a straggler's leave lands in its own
constexpr unsigned kStripes = 16;
struct alignas(64) Stripe {
  std::atomic<long> open{0};
};
Stripe open_calls[kSubscriptions][kStripes];

FIRSTASSERT_FAST_TLS thread_local unsigned thread_stripe;  // the thread's stripe + 1; 0: not chosen yet

Stripe& stripe(unsigned subscription) {
  if (thread_stripe == 0) thread_stripe = static_cast<unsigned>(current_thread_id()) % kStripes + 1;
  return open_calls[subscription % kSubscriptions][thread_stripe - 1];
}

long open_in(unsigned subscription) {
  long open = 0;
  for (Stripe& s : open_calls[subscription % kSubscriptions]) open += s.open.load(std::memory_order_acquire);
  return open;
}

// While stop_recording waits, calls entering are left alone (not opened, not recorded), so that the wait ends under
// steady traffic; the calls already open are recorded whole.
std::atomic<bool> draining{false};

__attribute__((always_inline)) inline void call_opened() {
  if (unsigned subscription = source::cupti_call_began()) stripe(subscription).open.fetch_add(1, std::memory_order_relaxed);
}

// Closed once the call is recorded, however the recording ends.
struct CallCloser {
  ~CallCloser() {
    if (unsigned subscription = source::cupti_call_ended())
      stripe(subscription).open.fetch_sub(1, std::memory_order_release);
  }
};

// A driver call made inside a runtime call CUPTI recorded the start of: its implementation, left to the runtime
// call. Asked first: every runtime call makes one or more of them.
bool nested_driver_call(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_DRIVER_API && nesting.calls.inside() &&
         nesting.subscription == source::cupti_subscription_now();
}

source::CallSite site_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  return {domain, cbid, cb.functionParams, cb.functionName};
}

// CUPTI's view of a call, handed to the shared observer: runtime calls at their outermost level, driver calls only
// when made directly (not as the implementation of a runtime call).
void on_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  bool enter = cb.callbackSite == CUPTI_API_ENTER;
  source::RuntimeNesting& calls = runtime_calls();
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (enter) {
      if (calls.entered() && !draining.load(std::memory_order_relaxed)) {
        call_opened();
        if (cb.correlationData != nullptr && source::call_needs_entering(domain, cbid))
          *cb.correlationData = source::call_entered(site_of(domain, cbid, cb));
      }
      return;
    }
    if (!calls.exited()) return;
  } else {
    if (calls.inside()) return;
    if (enter) {
      if (draining.load(std::memory_order_relaxed)) return;
      call_opened();
      if (cb.correlationData != nullptr && source::call_needs_entering(domain, cbid))
        *cb.correlationData = source::call_entered(site_of(domain, cbid, cb));
      return;
    }
  }
  // Entered while the subscription was being given up: left alone.
  if (draining.load(std::memory_order_relaxed) && !source::inside_cupti_call()) return;
  CallCloser closer;
  if (cb.functionReturnValue == nullptr) return;
  source::call_exited(site_of(domain, cbid, cb), *static_cast<const int*>(cb.functionReturnValue), cb.symbolName,
                      reinterpret_cast<uintptr_t>(cb.context), cb.correlationId,
                      cb.correlationData != nullptr ? *cb.correlationData : 0);
}

// Apart from on_callback, so that the calls it returns from at once (most of them) save no registers.
__attribute__((noinline)) void handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  try {
    on_api_call(domain, cbid, data);
  } catch (...) {
    // Nothing may unwind into CUPTI or the program: a failure of ours (out of memory) loses this call's record.
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (nested_driver_call(domain)) return;
  // The interposition hooks record a call they wrap themselves (a hand-over in progress): never both.
  if (source::inside_our_call() || source::inside_hooked_call() || data == nullptr) return;
  handle(domain, cbid, data);
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
    result.message = "recording launches through CUPTI at " + library.path;
    return result;
  }
  if (!lib) {
    result.message = why_not_opened;
    return result;
  }
  result.cupti_path = lib.path;
  // Our own subscription: the preloaded stub's hook of cuptiSubscribe (which hands CUPTI over to another tool) lets
  // it through.
  source::OurCall ours;
  for (Stripe& s : open_calls[source::cupti_subscription_now() % kSubscriptions]) s.open.store(0);
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
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE}) {
    r = lib.enable_domain(1, subscriber, domain);
    if (r != CUPTI_SUCCESS) {
      lib.unsubscribe(subscriber);
      result.message = "cuptiEnableDomain failed with " + lib.describe(r);
      return result;
    }
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
  for (; waited < wait_ms && open_in(now) > 0; ++waited) nanosleep(&tick, nullptr);
  bool drained = open_in(now) <= 0;
  {
    source::OurCall ours;
    library.unsubscribe(held);
  }
  subscription.store(nullptr);
  source::cupti_subscription_ended();
  return drained;
}

}  // namespace firstassert::cupti
