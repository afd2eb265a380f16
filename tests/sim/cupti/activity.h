// The activity API of the simulated CUPTI (activity.cpp), and what it shares with the callback API (cupti_api.cpp):
// both listen to the same API ENTER/EXIT sink in the driver, which is installed while either needs it.
#pragma once

#include <cupti.h>

#include "../common/private_table.h"

namespace simcuda::cupti {

// ---- cupti_api.cpp ----

// The driver's private table, linked at the first use; nullptr when libcuda.so.1 cannot be loaded.
const PrivateTable* linked_driver();
// Installs the API sink in the driver while a subscriber or the activity API needs API events, detaches it otherwise.
void refresh_tool_dispatch();
// "simcuda: <what> is not supported by the simulator" on stderr, once per distinct what.
void say_once(const char* what);

// ---- activity.cpp ----

// True while an enabled activity kind needs API events: API records, or the correlation ids of device records.
bool activity_wants_api_events();
// A runtime or driver API call entering (before the subscribers' callbacks) and leaving (after them).
void activity_api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& call);
void activity_api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& call);
// cuptiFinalize: every kind disabled, callbacks and settings forgotten, records not yet delivered dropped.
void activity_finalize();

}  // namespace simcuda::cupti
