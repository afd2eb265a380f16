// The stand-in libcufft.so.12 (libcufft.so.11 for CUDA 12). cuFFT is not modelled: each entry point PyTorch imports
// says so once and returns CUFFT_NOT_SUPPORTED (cufft.h: "operation is not supported for parameters given"), so the
// first FFT torch plans (cufftCreate) raises a clear error.
#include <cufft.h>

#include "unsupported.h"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, CUFFT_NOT_SUPPORTED, STANDIN_NO_NOTE)

UNSUPPORTED(cufftCreate) UNSUPPORTED(cufftDestroy) UNSUPPORTED(cufftSetAutoAllocation) UNSUPPORTED(cufftSetStream)
UNSUPPORTED(cufftSetWorkArea) UNSUPPORTED(cufftXtExec) UNSUPPORTED(cufftXtMakePlanMany)
