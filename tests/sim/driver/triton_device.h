// The body every kernel with a Triton program runs: the program, over the launch's arguments, on the simulated
// device, its asserts and faults raised as the device raises a compiled kernel's.
#pragma once

#include <vector_types.h>

namespace simcuda {

void run_triton_kernel(void** args, dim3 grid, dim3 block);

}  // namespace simcuda
