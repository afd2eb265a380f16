// The stand-in libcurand.so.10. PyTorch's CUDA 12 builds (torch 2.8.0 and 2.4.1: libtorch_cuda.so) name the
// library among their needed ones but import none of its symbols: torch draws its random numbers in its own kernels,
// with cuRAND's device-side headers (curand_kernel.h), not through the host API. So the stand-in only has to be
// there, under its soname, for torch to load; it exports nothing.
