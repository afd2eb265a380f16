#include "subscriber.h"

#include <cuda.h>
#include <cupti.h>

#include "cupti_library.h"
#include "source/observer.h"

namespace firstassert::cupti {
namespace {

// CUPTI's view of a call, handed to the shared observer: runtime calls at their outermost level, driver calls only
// when made directly (not as the implementation of a runtime call).
void on_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  source::CallSite site{domain, cbid, cb.functionParams, cb.functionName};
  bool enter = cb.callbackSite == CUPTI_API_ENTER;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (enter) {
      if (source::runtime_call_entered() && cb.correlationData != nullptr)
        *cb.correlationData = source::call_entered(site);
      return;
    }
    if (!source::runtime_call_exited()) return;
  } else {
    if (source::inside_runtime_call()) return;
    if (enter) {
      if (cb.correlationData != nullptr) *cb.correlationData = source::call_entered(site);
      return;
    }
  }
  if (cb.functionReturnValue == nullptr) return;
  source::call_exited(site, *static_cast<const int*>(cb.functionReturnValue), cb.symbolName,
                      reinterpret_cast<uintptr_t>(cb.context), cb.correlationId,
                      cb.correlationData != nullptr ? *cb.correlationData : 0);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (source::inside_our_call() || data == nullptr) return;
  try {
    on_api_call(domain, cbid, data);
  } catch (...) {
    // Nothing may unwind into CUPTI or the program: a failure of ours (out of memory) loses this call's record.
  }
}

}  // namespace

SubscribeResult start_recording(const source::Recording& r_in, const std::string& explicit_cupti_path) {
  SubscribeResult result;
  std::string why;
  CuptiLibrary lib = open_cupti(explicit_cupti_path, why);
  if (!lib) {
    result.message = why;
    return result;
  }
  result.cupti_path = lib.path;
  source::start(r_in);

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
  result.recording = true;
  result.message = "recording launches through CUPTI at " + lib.path;
  return result;
}

}  // namespace firstassert::cupti
