// simcuda.h: the test programs' handle on the simulated device.
#include "../simcuda.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "device.h"
#include "driver_state.h"
#include "kernel_registry.h"

namespace simcuda {
Kernel* current_device_kernel();
bool current_kernel_trapped();
}

extern "C" {

void simcuda_register_kernel(const void* host_stub, const char* mangled_name, simcuda_kernel_fn body) {
  if (mangled_name == nullptr) return;
  simcuda::register_kernel(host_stub, mangled_name, body, simcuda::param_sizes_from_mangled_name(mangled_name));
}

void simcuda_register_kernel_with_params(const void* host_stub, const char* name, simcuda_kernel_fn body,
                                         unsigned param_count, const size_t* param_sizes) {
  if (name == nullptr || (param_count > 0 && param_sizes == nullptr)) return;
  simcuda::register_kernel(host_stub, name, body, std::vector<size_t>(param_sizes, param_sizes + param_count));
}

void simcuda_register_kernel_family(const char* function_name, simcuda_kernel_fn body) {
  if (function_name == nullptr || body == nullptr) return;
  simcuda::register_family(function_name, body, nullptr);
}

void simcuda_register_kernel_family_with_params(const char* function_name, simcuda_kernel_fn body,
                                                simcuda_param_sizes_fn param_sizes) {
  if (function_name == nullptr || body == nullptr || param_sizes == nullptr) return;
  simcuda::register_family(function_name, body, param_sizes);
}

const char* simcuda_running_kernel_name(void) {
  simcuda::Kernel* kernel = simcuda::current_device_kernel();
  return kernel != nullptr ? kernel->name.c_str() : nullptr;
}

void simcuda_sleep_us(unsigned us) {
  // The device whose stream runs this body; off a worker (a body called directly), the calling thread's.
  simcuda::Device* running = simcuda::Device::running();
  if (running == nullptr) running = simcuda::Device::current();
  if (running == nullptr) {
    std::this_thread::sleep_for(std::chrono::microseconds(us));
    return;
  }
  auto& device = *running;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  // Sliced, so that a fault anywhere on the device stops this kernel too.
  while (!device.faulted() && !device.shutting_down() && !simcuda::current_kernel_trapped()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now,
                                                                              std::chrono::microseconds(500)));
  }
}

void simcuda_device_assert(const char* file, unsigned line, const char* function, const char* condition,
                           dim3 block_idx, dim3 thread_idx) {
  if (simcuda::current_device_kernel() == nullptr) {
    simcuda::say_unsupported_once("simcuda_device_assert outside a kernel body");
    return;
  }
  char text[4096];
  std::snprintf(text, sizeof text, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
                file ? file : "", line, function ? function : "", block_idx.x, block_idx.y, block_idx.z,
                thread_idx.x, thread_idx.y, thread_idx.z, condition ? condition : "");
  simcuda::Device::running()->raise_fault(710, text);
}

void simcuda_device_fault(int cuda_error) {
  if (simcuda::current_device_kernel() == nullptr) {
    simcuda::say_unsupported_once("simcuda_device_fault outside a kernel body");
    return;
  }
  simcuda::Device::running()->raise_fault(cuda_error, {});
}

}  // extern "C"
