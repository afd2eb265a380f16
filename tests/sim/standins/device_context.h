// How the stand-ins reach the simulated GPU: as NVIDIA's libraries do, through the driver API of libcuda.so.1 (real
// cuBLAS loads its kernels as modules and launches them with cuLaunchKernel).
#pragma once

#include <cuda.h>

namespace standins {

// Makes sure the calling thread has a context to launch in: cuInit once per process, then the thread's current
// context, or else the device's primary context made current, which is what the CUDA runtime that NVIDIA's
// libraries carry inside would bind on a thread that has none.
CUresult bind_context();

}  // namespace standins
