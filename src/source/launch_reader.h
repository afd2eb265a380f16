// Reading a launch's *_params struct (api_table.h's launch tables) into the LaunchEvent the observer records, in
// place. Inline: every launch is read here.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "core/launch_record.h"
#include "source/api_table.h"

namespace firstassert::source {
namespace launch_readers {

inline Dim3 dims(const dim3& d) { return {d.x, d.y, d.z}; }

template <typename P>
void read_dim3_launch(const P& p, LaunchEvent& e) {
  e.grid = dims(p.gridDim);
  e.block = dims(p.blockDim);
  e.shared_mem = static_cast<uint32_t>(p.sharedMem);
  e.stream = reinterpret_cast<uintptr_t>(p.stream);
}

template <typename P>
void read_runtime_config_launch(const P& p, LaunchEvent& e) {
  if (p.config == nullptr) return;
  e.grid = dims(p.config->gridDim);
  e.block = dims(p.config->blockDim);
  e.shared_mem = static_cast<uint32_t>(p.config->dynamicSmemBytes);
  e.stream = reinterpret_cast<uintptr_t>(p.config->stream);
}

template <typename P>
void read_xyz_launch(const P& p, LaunchEvent& e) {
  e.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  e.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  e.shared_mem = p.sharedMemBytes;
  e.stream = reinterpret_cast<uintptr_t>(p.hStream);
}

template <typename P>
void read_driver_config_launch(const P& p, LaunchEvent& e) {
  if (p.config == nullptr) return;
  e.grid = {p.config->gridDimX, p.config->gridDimY, p.config->gridDimZ};
  e.block = {p.config->blockDimX, p.config->blockDimY, p.config->blockDimZ};
  e.shared_mem = p.config->sharedMemBytes;
  e.stream = reinterpret_cast<uintptr_t>(p.config->hStream);
}

// The runtime names the stream `stream`, the driver `hStream`.
template <typename P>
void read_graph_launch(const P& p, LaunchEvent& e) {
  e.graph = true;
  // The executable graph: graphExec (runtime), hGraphExec (cuGraphLaunch_ptsz), hGraph (cuGraphLaunch's params).
  if constexpr (requires { p.graphExec; }) e.graph_exec = reinterpret_cast<uintptr_t>(p.graphExec);
  else if constexpr (requires { p.hGraphExec; }) e.graph_exec = reinterpret_cast<uintptr_t>(p.hGraphExec);
  else e.graph_exec = reinterpret_cast<uintptr_t>(p.hGraph);
  if constexpr (requires { p.stream; }) e.stream = reinterpret_cast<uintptr_t>(p.stream);
  else e.stream = reinterpret_cast<uintptr_t>(p.hStream);
}

}  // namespace launch_readers

// Fills launch (api, stream flag, grid, block, shared memory, stream) when cbid is a launch of that domain.
__attribute__((always_inline)) inline bool describe_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, LaunchEvent& launch) {
  uint8_t entry = detail::launch_entry(domain, cbid);
  if (entry == 0 || params == nullptr) return false;
  unsigned number = entry & ~detail::kGraphLaunchBit;
  using namespace launch_readers;
#define FIRSTASSERT_LAUNCH_CASE(prefix, suffix, type, launch_api, per_thread, reader) \
  case detail::prefix##suffix:                                                        \
    launch.api = LaunchApi::launch_api;                                               \
    launch.per_thread_default_stream = per_thread;                                    \
    reader(*static_cast<const type*>(params), launch);                                \
    return true;
#define FIRSTASSERT_RUNTIME_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(runtime_, __VA_ARGS__)
#define FIRSTASSERT_DRIVER_LAUNCH_CASE(...) FIRSTASSERT_LAUNCH_CASE(driver_, __VA_ARGS__)
  // Numbered densely: each switch is one indexed jump.
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (number) { FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_RUNTIME_LAUNCH_CASE) default: return false; }
  }
  switch (number) { FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_DRIVER_LAUNCH_CASE) default: return false; }
#undef FIRSTASSERT_LAUNCH_CASE
#undef FIRSTASSERT_RUNTIME_LAUNCH_CASE
#undef FIRSTASSERT_DRIVER_LAUNCH_CASE
}

}  // namespace firstassert::source
