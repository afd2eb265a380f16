// CUpti_SubscriberParams as CUPTI 13.2 extends it, with allowMultipleSubscribers (the several-subscriber mode of
// CUPTI 13.3 with driver r610); the CUDA 13.0 headers here end it at oldSubscriberSize. A caller built against the
// older header passes the shorter structSize, and so never set the new field. Shared by the simulated CUPTI and the
// programs that ask it for that mode.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace simcuda {

struct SubscriberParams132 {
  size_t structSize;
  const char* subscriberName;
  char* oldSubscriberName;
  size_t oldSubscriberSize;
  uint8_t allowMultipleSubscribers;
};
// CUPTI_SUBSCRIBER_NAME_MAX_LEN of CUPTI 13's cupti_callbacks.h.
constexpr size_t kSubscriberNameMaxLen = 53;

#if CUPTI_API_VERSION >= 130000  // CUPTI 12 has no cuptiSubscribe_v2 and no subscriber parameters
static_assert(kSubscriberNameMaxLen == CUPTI_SUBSCRIBER_NAME_MAX_LEN);
static_assert(offsetof(SubscriberParams132, oldSubscriberSize) == offsetof(CUpti_SubscriberParams, oldSubscriberSize));
static_assert(offsetof(SubscriberParams132, allowMultipleSubscribers) >= CUpti_SubscriberParams_STRUCT_SIZE);
#endif

}  // namespace simcuda
