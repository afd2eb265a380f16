// The randomized launch schedule of schedule_plan.h on the simulator: its kernels are host stubs registered with
// simulated bodies that sleep for the launch's time, and the one launch told to asserts.
//
// usage: schedule_job SEED [LAUNCHES]
//   LAUNCHES: the number of launches (default: drawn from the seed, 20 to 1,500). A long run (say 1,000,000) puts
//   the assert near the end, after the ring has wrapped many times.
// Prints the oracle of schedule_plan.h.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "schedule_plan.h"
#include "simcuda.h"

namespace {

using schedule::KernelArgs;
using schedule::kKernelNames;
using schedule::kKernels;

char kernel_stubs[kKernels];  // one address per kernel: the host stubs launches name
std::string mangled_names[kKernels];

void kernel_body(void** args, dim3, dim3) {
  KernelArgs a;
  std::memcpy(&a, args[0], sizeof a);
  simcuda_sleep_us(static_cast<unsigned>(a.sleep_us));
  if (a.asserts != 0)
    simcuda_device_assert("/pytorch/aten/src/ATen/native/cuda/Schedule.cu", 97,
                          a.anonymous != 0 ? "operator()" : kKernelNames[a.kernel], "index >= 0 && index < size",
                          dim3{a.block_x, 0, 0}, dim3{a.thread_x, 0, 0});
}

schedule::KernelTable register_kernels() {
  schedule::KernelTable table{};
  for (int k = 0; k < kKernels; ++k) {
    std::string name = kKernelNames[k];
    mangled_names[k] = "_ZN2at6native" + std::to_string(name.size()) + name + "ENS0_10KernelArgsE";
    const size_t sizes[] = {sizeof(KernelArgs)};
    simcuda_register_kernel_with_params(&kernel_stubs[k], mangled_names[k].c_str(), kernel_body, 1, sizes);
    table[k] = &kernel_stubs[k];
  }
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: schedule_job SEED [LAUNCHES]\n");
    return 2;
  }
  uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  long launches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 0;
  schedule::Executor executor(register_kernels());
  return executor.run(seed, launches);
}
