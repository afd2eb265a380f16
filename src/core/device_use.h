// The GPUs a job used, as the report names them: each CUDA context the shim saw launches or calls in, its device,
// and what that device did after the first error. Each device has its own context and its own sticky error (CUDA
// Runtime API, cudaErrorAssert: "The context cannot be used anymore"), so a fault on one says nothing of the
// others: what they did after it is what the calls made on them showed.
#pragma once

#include <cstdint>
#include <string>

#include "cuda_errors.h"

namespace firstassert {

// Which GPU a context is on: the process's ordinal (cuda:N, counted after CUDA_VISIBLE_DEVICES), its name, and what
// names the board itself across processes and hosts: its UUID as nvidia-smi writes it, and its PCI bus id.
struct DeviceIdentity {
  uintptr_t context = 0;
  int32_t ordinal = -1;  // -1: not known
  std::string name;
  std::string uuid;        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; empty: not known
  std::string pci_bus_id;  // "0000:1b:00.0"; empty: not known
};

// What calls on a context showed after the first sticky error (Tracker: counted from then on).
struct AfterFirstError {
  uint64_t syncs_succeeded = 0;  // synchronizing calls that returned success: its work was still completing
  // Its launches numbered after the error that the stream breadcrumbs prove complete (where a sync that succeeds is
  // not recorded, since the breadcrumbs prove what it would).
  uint64_t launches_completed = 0;
  uint64_t sticky_errors = 0;    // calls that returned a sticky error from it
  int first_code = 0;            // the first of those errors
  ApiDomain first_domain = ApiDomain::runtime;
  std::string first_api;         // and the call that returned it
};

// "failed" (a call on it returned a sticky error), "working" (a synchronization on it succeeded, or launches made
// after the error completed, and nothing failed), or "not_synchronized" (nothing shows that work on it completed
// since: whether it still works is not known).
inline const char* after_state(const AfterFirstError& a) {
  if (a.sticky_errors > 0) return "failed";
  return a.syncs_succeeded > 0 || a.launches_completed > 0 ? "working" : "not_synchronized";
}

struct DeviceUse {
  DeviceIdentity identity;
  bool failed_first = false;  // the context the first error came from
  AfterFirstError after;
};

}  // namespace firstassert
