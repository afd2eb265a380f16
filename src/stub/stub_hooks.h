// The preloaded half of the interposition hooks (stub_hooks.cpp).
#pragma once

namespace firstassert::stub {

// The real definition of a CUDA entry point, as the hooks call it (FirstassertStub::real).
void* real_entry_point(const char* name);
// How many objects the loader has loaded so far (FirstassertStub::loaded_generation).
unsigned long long loaded_generation();
// Finds the recorder's implementation of every hook in the loaded recorder library, once, when it is loaded; false
// (and interposition impossible) when it lacks one.
bool find_recorder_hooks(void* recorder);
// Hands every hook to the recorder's implementation found before: plain stores, so that routing (in a hand-over of
// CUPTI, under the recorder's locks) never takes the loader's lock. False when they were not found.
bool route_recorder_hooks();
// From now on another tool's cuptiSubscribe and cuptiSubscribe_v2 call door first (the recorder's
// firstassert_recorder_cupti_subscribing), with the name the tool gives itself or null.
void route_cupti_subscriptions(void (*door)(const char* name));

}  // namespace firstassert::stub
