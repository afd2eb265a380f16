// The interposition fallback: the CUDA entry points of interpose_hooks.h defined in the preloaded shim, so that the
// program's calls (direct, through dlsym as Triton does, through cuGetProcAddress as the runtime does) reach
// firstassert when CUPTI cannot be used. Until start() they pass straight through.
#pragma once

#include "source/observer.h"

namespace firstassert::interpose {

// Whether the hooks can see the program's calls: only when the shim was preloaded.
bool available();
// From now on the hooks feed the shared observer.
void start(const source::Recording& recording);
bool active();

}  // namespace firstassert::interpose
