#include "context_devices.h"

#include <cuda.h>

#include <atomic>
#include <mutex>

#include "call_guards.h"
#include "device/driver_calls.h"

namespace firstassert::source {

namespace detail {
constinit FIRSTASSERT_FAST_TLS thread_local LastContext last_context{0, -1};
}  // namespace detail

namespace {

// Contexts seen so far and their device ordinals, in the order they were first seen: read without the lock, added
// under it.
constexpr int kMaxContexts = 64;
struct ContextDevice {
  std::atomic<uintptr_t> context{0};
  std::atomic<int32_t> device{-1};
};
ContextDevice context_devices[kMaxContexts];
std::mutex context_mutex;

}  // namespace

int32_t find_device_of(uintptr_t context) {
  if (context == 0) return -1;
  for (const ContextDevice& c : context_devices) {
    uintptr_t seen = c.context.load(std::memory_order_acquire);
    if (seen == context) return c.device.load(std::memory_order_relaxed);
    if (seen == 0) break;
  }
  std::lock_guard lock(context_mutex);
  int32_t device = -1;
  const DriverCalls* calls = driver_calls();
  if (calls != nullptr && calls->ctx_get_device != nullptr) {
    OurCall guard;
    CUdevice d = 0;
    // During a launch callback the launch's context is current on this thread.
    if (calls->ctx_get_device(&d) == CUDA_SUCCESS) device = static_cast<int32_t>(d);
  }
  for (ContextDevice& c : context_devices) {
    if (c.context.load() == context) return c.device.load();
    if (c.context.load() == 0) {
      c.device.store(device, std::memory_order_relaxed);
      c.context.store(context, std::memory_order_release);
      break;
    }
  }
  return device;
}

}  // namespace firstassert::source
