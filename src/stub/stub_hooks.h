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

}  // namespace firstassert::stub
