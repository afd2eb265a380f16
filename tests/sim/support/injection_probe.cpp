// A stand-in for a tool named by CUDA_INJECTION64_PATH: counts the driver's InitializeInjection calls, and checks
// that the driver is usable from inside them (a real tool subscribes to CUPTI there).
#include <cuda.h>

#include <atomic>

namespace {
std::atomic<int> initialize_calls{0};
std::atomic<int> driver_calls_ok{0};
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
  initialize_calls.fetch_add(1);
  int count = 0;
  if (cuDeviceGetCount(&count) == CUDA_SUCCESS && count == 1) driver_calls_ok.fetch_add(1);
  return 1;
}

__attribute__((visibility("default"))) int injection_probe_initialize_calls(void) { return initialize_calls.load(); }
__attribute__((visibility("default"))) int injection_probe_driver_calls_ok(void) { return driver_calls_ok.load(); }

}  // extern "C"
