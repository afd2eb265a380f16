// The interposition fallback's recording half: the CUDA entry points of interpose_hooks.h are defined in the
// preloaded stub (stub_hooks.cpp), so that the program's calls (direct, through dlsym as Triton does, through
// cuGetProcAddress as the runtime does) reach firstassert when CUPTI cannot be used; the stub hands them to the
// recorder's implementations here. Until start() they pass straight through.
#pragma once

#include "stub/recorder_abi.h"
#include "source/observer.h"

namespace firstassert::interpose {

// What the stub that loaded the recorder offers: whether it was preloaded, and how its hooks find the real functions.
void attach(const FirstassertStub& stub);
// Whether the hooks can see the program's calls: only when the stub was preloaded.
bool available();
// From now on the hooks feed the shared observer (source::start must have run), each call they wrap recorded by them
// alone (source::HookedCall); false (nothing started) when the stub could not route them here. Also while CUPTI
// records: that is how CUPTI is handed over.
bool start();
// The hooks only pass calls through again.
void stop();
bool active();

}  // namespace firstassert::interpose
