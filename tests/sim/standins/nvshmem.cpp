// The stand-in libnvshmem_host.so.3 (libtorch_nvshmem.so needs it). NVSHMEM is not modelled: the library never
// initializes, so torch's symmetric memory over NVSHMEM fails at nvshmemx_init_attr (whose inline body calls
// nvshmemid_hostlib_init_attr) with this line on stderr. Symbols carry NVIDIA's version node, NVSHMEM, as torch
// imports them. nvshmem_init, which torch references weakly, is an inline function of NVSHMEM's headers, not a
// symbol of the host library, and is left undefined as there.
//
// The NVSHMEM headers are not part of the CUDA toolkit; signatures and codes are restated from the NVSHMEM API
// documentation (docs.nvidia.com/nvshmem/api: "Library Setup, Exit, and Query", "Memory Management", "Team
// Management", "nvshmemx_status"). Functions returning a status return NVSHMEMX_ERROR_NOT_SUPPORTED; void ones only
// say so; pointer-returning ones return NULL, as for memory NVSHMEM cannot provide.
#include <atomic>
#include <cstddef>

#include "unsupported.h"

namespace {

constexpr int kErrorNotSupported = 3;     // NVSHMEMX_ERROR_NOT_SUPPORTED (after SUCCESS, INVALID_VALUE, OUT_OF_MEMORY)
constexpr int kStatusNotInitialized = 0;  // NVSHMEM_STATUS_NOT_INITIALIZED, what nvshmemx_init_status reports first
constexpr int kTeamInvalid = -1;          // NVSHMEM_TEAM_INVALID

}  // namespace

// The not-supported line, once, for the hand-written entry points below.
#define SAY_ONCE(name)                  \
  static std::atomic<bool> said{false}; \
  ::standins::say_unsupported(said, name)

extern "C" {

// Which transport the device library should use; read by NVSHMEM device code linked into torch. Never selected here.
int nvshmem_selected_device_transport = 0;

// The OpenSHMEM specification version NVSHMEM implements (1.3), which is what this function reports.
void nvshmem_info_get_version(int* major, int* minor) {
  if (major != nullptr) *major = 1;
  if (minor != nullptr) *minor = 3;
}

// Truthfully: never initialized.
int nvshmemid_init_status(void) { return kStatusNotInitialized; }

void* nvshmem_malloc(size_t) {
  SAY_ONCE("nvshmem_malloc");
  return nullptr;
}

void* nvshmem_ptr(const void*, int) {
  SAY_ONCE("nvshmem_ptr");
  return nullptr;
}

void* nvshmemx_mc_ptr(int, const void*) {
  SAY_ONCE("nvshmemx_mc_ptr");
  return nullptr;
}

int nvshmem_team_n_pes(int) {
  SAY_ONCE("nvshmem_team_n_pes");
  return -1;  // documented for an invalid team
}

int nvshmem_team_split_strided(int, int, int, int, const void*, long, int* new_team) {
  SAY_ONCE("nvshmem_team_split_strided");
  if (new_team != nullptr) *new_team = kTeamInvalid;
  return kErrorNotSupported;
}

}  // extern "C"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, kErrorNotSupported, STANDIN_NO_NOTE)

// Setup and teardown
UNSUPPORTED(nvshmemid_hostlib_init_attr) UNSUPPORTED(nvshmemid_hostlib_finalize) UNSUPPORTED(nvshmemx_get_uniqueid)
UNSUPPORTED(nvshmemx_set_attr_uniqueid_args) UNSUPPORTED(nvshmemx_cumodule_init)
// Memory and synchronization (void functions: the status they return in a register is ignored)
UNSUPPORTED(nvshmem_free) UNSUPPORTED(nvshmem_barrier_all)
// Stream-ordered communication
UNSUPPORTED(nvshmemx_putmem_on_stream) UNSUPPORTED(nvshmemx_getmem_on_stream)
UNSUPPORTED(nvshmemx_putmem_signal_on_stream) UNSUPPORTED(nvshmemx_signal_wait_until_on_stream)
UNSUPPORTED(nvshmemx_alltoallmem_on_stream) UNSUPPORTED(nvshmemx_broadcastmem_on_stream)
