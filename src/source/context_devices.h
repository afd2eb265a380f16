// The device of each CUDA context a launch is made in (a launch's callback gives its context, not its device): found
// once per context with cuCtxGetDevice, with which GPU it is (name, UUID, PCI bus id), then a lock-free lookup, and
// first the thread's last context, since a thread mostly launches on one.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device_use.h"

#include "core/fast_tls.h"

namespace firstassert::source {

namespace detail {
struct LastContext {
  uintptr_t context;
  int32_t device;
};
extern constinit FIRSTASSERT_FAST_TLS thread_local LastContext last_context;  // constinit: no TLS wrapper call
}  // namespace detail

// The context's device from the table of contexts seen, asking the driver at a context's first launch, when the
// context is current on the calling thread; -1 when none is known.
int32_t find_device_of(uintptr_t context);

// The contexts seen so far (at their first launch) with their devices, in the order they were first seen: which GPU
// each is, as the driver named it then (the device's name, UUID and PCI bus id).
std::vector<DeviceIdentity> devices_seen();

// Inline: every launch asks.
inline int32_t device_of(uintptr_t context) {
  if (context == detail::last_context.context) return detail::last_context.device;
  int32_t device = find_device_of(context);
  detail::last_context = {context, device};
  return device;
}

}  // namespace firstassert::source
