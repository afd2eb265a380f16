#include "triton_device.h"

#include <cstdio>
#include <string>

#include "../simcuda.h"
#include "driver_state.h"
#include "kernel_registry.h"

namespace simcuda {
Kernel* current_device_kernel();

void run_triton_kernel(void** args, dim3 grid, dim3 block) {
  Kernel* kernel = current_device_kernel();
  if (kernel == nullptr || kernel->triton == nullptr) return;
  const simtriton::TritonKernel& program = *kernel->triton;
  if (block.x * block.y * block.z != program.threads_per_block()) {
    // Triton's launchers pass num_warps x 32 threads; a kernel run with others would not be Triton's.
    std::fprintf(stderr, "simcuda: %s was compiled for %u threads per block and launched with %u: not run\n",
                 kernel->name.c_str(), program.threads_per_block(), block.x * block.y * block.z);
    return;
  }
  simtriton::DeviceHooks hooks;
  hooks.accessible = [](const void* address, size_t bytes) { return device_accessible(address, bytes); };
  // __assertfail's function argument for a Triton assert is "unknown" (the PTX Triton writes passes that string).
  hooks.assert_failed = [](const simtriton::AssertFailure& failure) {
    simcuda_device_assert(failure.file.c_str(), failure.line, "unknown", failure.message.c_str(), failure.block,
                          failure.thread);
  };
  hooks.fault = [](int cuda_error) { simcuda_device_fault(cuda_error); };
  std::string error;
  if (!program.run(args, grid, hooks, &error))
    std::fprintf(stderr, "simcuda: %s stopped where the simulator cannot run it: %s\n", kernel->name.c_str(),
                 error.c_str());
}

}  // namespace simcuda
