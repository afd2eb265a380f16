// The preloaded half of the interposition hooks (stub_hooks.cpp).
#pragma once

namespace firstassert::stub {

// The real definition of a CUDA entry point, as the hooks call it (FirstassertStub::real).
void* real_entry_point(const char* name);
// How many objects the loader has loaded so far (FirstassertStub::loaded_generation).
unsigned long long loaded_generation();
// Hands every hook to the recorder's implementation in the loaded recorder library; false (and none handed over) when
// the recorder lacks one.
bool attach_recorder_hooks(void* recorder);
// From now on another tool's cuptiSubscribe and cuptiSubscribe_v2 call door first (the recorder's
// firstassert_recorder_cupti_subscribing), with the name the tool gives itself or null.
void route_cupti_subscriptions(void (*door)(const char* name));

}  // namespace firstassert::stub
