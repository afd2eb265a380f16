// A stand-in for a profiler named by CUDA_INJECTION64_PATH: it takes the CUPTI subscriber slot at cuInit, as Nsight
// Systems or compute-sanitizer do, and keeps it.
#include <cupti.h>

namespace {
void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  CUpti_SubscriberHandle handle = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "slot-holder";
  return cuptiSubscribe_v2(&handle, ignore, nullptr, &params) == CUPTI_SUCCESS ? 1 : 0;
}
