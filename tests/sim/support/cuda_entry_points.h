// Entry points libcudart exports that the toolkit headers declare only for nvcc-compiled code (__cudaLaunchKernel)
// or under CUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptsz variants). Tests call them by their exported names.
#pragma once

#include <cuda_runtime_api.h>

extern "C" {
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernel, const void* entry);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                         cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                              size_t shared, cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                            cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args);
cudaError_t CUDARTAPI cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                                       size_t shared, cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream);
}
