// The randomized-schedule property on a GPU: the plan of tests/e2e/programs/schedule_plan.h (the simulator's
// schedule_job runs the same plans) carried out with real kernels. scripts/gpu-check runs it for a set of seeds under
// the shim and judges each report against the oracle it prints (scripts/lib/gpu_check_schedule.py).
//
// usage: schedule_property SEED [LAUNCHES]      prints the oracle of schedule_plan.h; exit 0, or 4 without CUDA
//
// The kernels are __global__ functions of at::native with the plan's PyTorch-like names. Every thread spins on
// %globaltimer for the launch's sleep_us; in the asserting launch, the one thread the plan names (block_x, thread_x)
// fails a device assert(), inside the kernel itself (the device's line names the kernel) or, for the plan's anonymous
// lines, inside a lambda within it (the line says `operator()`, as PyTorch's lambda kernels' lines do).
//
// Where it differs from the simulator's job, and why:
//   - the assertion line's file and line are this file's, and the kernels' mangled names nvcc's
//     (at::native::NAME(schedule::KernelArgs)); the oracle names the asserting launch by stream and shared_mem only;
//   - PyTorch's anonymous lines come from a lambda passed to a template kernel (--extended-lambda); a lambda defined
//     and called in the kernel prints the same operator() without that flag, and the kernel keeps its plain name.
//
// Run on the simulator (built against its libcudart, as scripts/gpu-check's tests do), the device code cannot run:
// schedule_on_simulator.h then gives each kernel a simulated body by its mangled name.
#include <cuda_runtime.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>

#include "../e2e/programs/schedule_plan.h"
#include "schedule_on_simulator.h"

namespace at::native {
namespace {

__device__ unsigned long long globaltimer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__device__ void spin_for_us(unsigned long long us) {
  const unsigned long long end = globaltimer_ns() + us * 1000;
  while (globaltimer_ns() < end) {
  }
}

__device__ bool is_the_asserting_thread(const schedule::KernelArgs& a) {
  return a.asserts != 0 && blockIdx.x == a.block_x && threadIdx.x == a.thread_x;
}

}  // namespace

// One kernel per name of the plan's table; the assert sits in the kernel (or a lambda of it) so that the device's
// line names the kernel's own function.
#define SCHEDULE_KERNEL(NAME)                                                \
  __global__ void NAME(schedule::KernelArgs a) {                             \
    spin_for_us(a.sleep_us);                                                 \
    if (!is_the_asserting_thread(a)) return;                                 \
    const long index = static_cast<long>(a.kernel) - schedule::kKernels;     \
    const long size = schedule::kKernels;                                    \
    if (a.anonymous != 0) {                                                  \
      [&] { assert(index >= 0 && index < size); }();                         \
    } else {                                                                 \
      assert(index >= 0 && index < size);                                    \
    }                                                                        \
  }

SCHEDULE_KERNEL(vectorized_elementwise_kernel)
SCHEDULE_KERNEL(reduce_kernel)
SCHEDULE_KERNEL(index_kernel)
SCHEDULE_KERNEL(gather_kernel)
SCHEDULE_KERNEL(softmax_warp_forward)
SCHEDULE_KERNEL(nll_loss_forward_reduce_cuda_kernel_2d)
#undef SCHEDULE_KERNEL

}  // namespace at::native

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: schedule_property SEED [LAUNCHES]\n");
    return 2;
  }
  uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  long launches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 0;
  // In the order of schedule::kKernelNames.
  const schedule::KernelTable kernels = {
      reinterpret_cast<const void*>(&at::native::vectorized_elementwise_kernel),
      reinterpret_cast<const void*>(&at::native::reduce_kernel),
      reinterpret_cast<const void*>(&at::native::index_kernel),
      reinterpret_cast<const void*>(&at::native::gather_kernel),
      reinterpret_cast<const void*>(&at::native::softmax_warp_forward),
      reinterpret_cast<const void*>(&at::native::nll_loss_forward_reduce_cuda_kernel_2d)};
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  schedule::give_simulated_bodies(kernels);
  schedule::Executor executor(kernels);
  return executor.run(seed, launches);
}
