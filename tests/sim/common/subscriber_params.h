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
static_assert(offsetof(SubscriberParams132, oldSubscriberSize) == offsetof(CUpti_SubscriberParams, oldSubscriberSize));
static_assert(offsetof(SubscriberParams132, allowMultipleSubscribers) >= CUpti_SubscriberParams_STRUCT_SIZE);

}  // namespace simcuda
