#include "context_devices.h"

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "call_guards.h"
#include "device/driver_calls.h"

namespace firstassert::source {

namespace detail {
constinit FIRSTASSERT_FAST_TLS thread_local LastContext last_context{0, -1};
}  // namespace detail

namespace {

// Contexts seen so far and their devices, in the order they were first seen: read without the lock, added under
// it (the fields first, then the context, released).
constexpr int kMaxContexts = 64;
struct ContextDevice {
  std::atomic<uintptr_t> context{0};
  std::atomic<int32_t> device{-1};
  char name[128] = {};
  char uuid[48] = {};
  char pci_bus_id[32] = {};
};
ContextDevice context_devices[kMaxContexts];
std::mutex context_mutex;

// nvidia-smi's form of a GPU's UUID: GPU-8-4-4-4-12 hex digits.
void uuid_text(const CUuuid& uuid, char (&out)[48]) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

// Which GPU the device is, from the driver: what it cannot tell stays empty.
void learn_identity(const DriverCalls& calls, CUdevice device, ContextDevice& c) {
  if (calls.device_get_name != nullptr && calls.device_get_name(c.name, sizeof c.name, device) != CUDA_SUCCESS)
    c.name[0] = '\0';
  CUuuid uuid{};
  if (calls.device_get_uuid != nullptr && calls.device_get_uuid(&uuid, device) == CUDA_SUCCESS) uuid_text(uuid, c.uuid);
  if (calls.device_get_pci_bus_id != nullptr &&
      calls.device_get_pci_bus_id(c.pci_bus_id, sizeof c.pci_bus_id, device) != CUDA_SUCCESS)
    c.pci_bus_id[0] = '\0';
}

}  // namespace

int32_t find_device_of(uintptr_t context) {
  if (context == 0) return -1;
  for (const ContextDevice& c : context_devices) {
    uintptr_t seen = c.context.load(std::memory_order_acquire);
    if (seen == context) return c.device.load(std::memory_order_relaxed);
    if (seen == 0) break;
  }
  std::lock_guard lock(context_mutex);
  for (ContextDevice& c : context_devices) {
    if (c.context.load() == context) return c.device.load();
    if (c.context.load() != 0) continue;
    int32_t device = -1;
    const DriverCalls* calls = driver_calls();
    if (calls != nullptr && calls->ctx_get_device != nullptr) {
      OurCall guard;
      CUdevice d = 0;
      // During a launch callback the launch's context is current on this thread.
      if (calls->ctx_get_device(&d) == CUDA_SUCCESS) {
        device = static_cast<int32_t>(d);
        learn_identity(*calls, d, c);
      }
    }
    c.device.store(device, std::memory_order_relaxed);
    c.context.store(context, std::memory_order_release);
    return device;
  }
  return -1;  // more contexts than the table holds: not named
}

std::vector<DeviceIdentity> devices_seen() {
  std::vector<DeviceIdentity> seen;
  for (const ContextDevice& c : context_devices) {
    uintptr_t context = c.context.load(std::memory_order_acquire);
    if (context == 0) break;
    seen.push_back({context, c.device.load(std::memory_order_relaxed), c.name, c.uuid, c.pci_bus_id});
  }
  return seen;
}

}  // namespace firstassert::source
