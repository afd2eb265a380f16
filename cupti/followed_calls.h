// Which CUPTI callbacks the subscriber enables. Every enabled callback costs, inside CUPTI on a GPU and in our own
// handler, on every call the program makes; so only the calls the recorder needs are followed:
// - runtime: every call but the queries and settings a framework makes around each op (cudaGetDevice in a device
//   guard, cudaStreamIsCapturing and cudaStreamGetCaptureInfo in an allocator, attribute and version queries): none
//   of them launches, syncs or orders work, and a sticky error one of them returns first is returned again by the
//   next call that is followed (the launch's own cudaGetLastError check, the next launch, the next sync), which then
//   reports it;
// - driver: the launches, the stream and graph calls (api_table.h), and the copies, fills, allocations and frees a
//   driver-API program checks (the runtime's own driver calls are folded into the runtime call anyway).
#pragma once

#include <cupti.h>

#include <vector>

namespace firstassert::cupti {

// The runtime callbacks left disabled (the rest of the domain is enabled).
const std::vector<CUpti_CallbackId>& unfollowed_runtime_calls();
// The driver callbacks enabled (the rest of the domain is not).
std::vector<CUpti_CallbackId> followed_driver_calls();

}  // namespace firstassert::cupti
