// A stand-in for NVIDIA's CUPTI where no GPU driver is: it loads, and every subscription fails with
// CUPTI_ERROR_UNKNOWN, as the real libcupti.so.13 does on a machine without libcuda (seen on the developers'
// machines). Tests name it in FIRSTASSERT_CUPTI to make CUPTI unusable without depending on what the toolkit holds.
#include <cupti.h>

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) { return CUPTI_ERROR_UNKNOWN; }

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) {
  return CUPTI_ERROR_UNKNOWN;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) { return CUPTI_ERROR_INVALID_PARAMETER; }

EXPORT CUptiResult cuptiEnableDomain(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) {
  return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_ERROR_UNKNOWN ? "CUPTI_ERROR_UNKNOWN" : "CUPTI_ERROR_INVALID_PARAMETER";
  return CUPTI_SUCCESS;
}
