// schedule_property.cu on the CUDA simulator (tests/sim), where device code cannot run: each kernel is given a
// simulated body by its mangled name, as schedule_job's are. The simulator is recognized at run time by its hook
// (simcuda_register_kernel_with_params in the loaded libcuda.so.1) and nothing is linked against it; on a GPU the
// driver has no such symbol and this does nothing.
#ifndef FIRSTASSERT_SCHEDULE_ON_SIMULATOR_H
#define FIRSTASSERT_SCHEDULE_ON_SIMULATOR_H

#include <dlfcn.h>

#include <cstring>

#include "../e2e/programs/schedule_plan.h"
#include "../sim/simcuda.h"

namespace schedule {

struct SimulatorHooks {
  decltype(&simcuda_register_kernel_with_params) register_kernel = nullptr;
  decltype(&simcuda_sleep_us) sleep_us = nullptr;
  decltype(&simcuda_device_assert) device_assert = nullptr;
};

inline SimulatorHooks& simulator_hooks() {
  static SimulatorHooks hooks;
  return hooks;
}

// What a kernel of schedule_property.cu does, for the simulated device: it keeps its stream busy, and the asserting
// launch fails the assert the real kernel would, naming the block and thread the plan says.
inline void simulated_body(void** args, dim3, dim3) {
  KernelArgs a;
  std::memcpy(&a, args[0], sizeof a);
  const SimulatorHooks& hooks = simulator_hooks();
  hooks.sleep_us(static_cast<unsigned>(a.sleep_us));
  if (a.asserts != 0)
    hooks.device_assert("schedule_property.cu", 0, a.anonymous != 0 ? "operator()" : kKernelNames[a.kernel],
                        "index >= 0 && index < size", dim3{a.block_x, 0, 0}, dim3{a.thread_x, 0, 0});
}

// Call after CUDA started (the driver is loaded then).
inline void give_simulated_bodies(const KernelTable& kernels) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return;
  SimulatorHooks& hooks = simulator_hooks();
  hooks.register_kernel = reinterpret_cast<decltype(hooks.register_kernel)>(
      dlsym(driver, "simcuda_register_kernel_with_params"));
  hooks.sleep_us = reinterpret_cast<decltype(hooks.sleep_us)>(dlsym(driver, "simcuda_sleep_us"));
  hooks.device_assert = reinterpret_cast<decltype(hooks.device_assert)>(dlsym(driver, "simcuda_device_assert"));
  if (hooks.register_kernel == nullptr || hooks.sleep_us == nullptr || hooks.device_assert == nullptr) return;
  for (const void* kernel : kernels) {
    const char* mangled = nullptr;
    if (cudaFuncGetName(&mangled, kernel) != cudaSuccess || mangled == nullptr) continue;
    const size_t sizes[] = {sizeof(KernelArgs)};
    hooks.register_kernel(kernel, mangled, simulated_body, 1, sizes);
  }
}

}  // namespace schedule

#endif
