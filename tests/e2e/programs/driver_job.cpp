// A job on the driver API, as Triton's launcher drives it: module, function by mangled name, cuLaunchKernel.
// Prints "launches: N" and "failing calls after the first: M".
#include <cuda.h>

#include <cstdio>

#include "kernels/stock_kernels.h"

int main() {
  if (simkernels_host_stub("nll_loss") == nullptr) return 4;  // loads the stock kernels
  CUcontext context;
  CUmodule module;
  CUfunction nll_loss, busy;
  if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&context, 0) != CUDA_SUCCESS ||
      cuCtxSetCurrent(context) != CUDA_SUCCESS || cuModuleLoadData(&module, "cubin") != CUDA_SUCCESS ||
      cuModuleGetFunction(&nll_loss, module,
                          "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll") !=
          CUDA_SUCCESS ||
      cuModuleGetFunction(&busy, module, "_ZN10simkernels11busy_kernelEy") != CUDA_SUCCESS)
    return 4;

  CUdeviceptr input, loss, weight_sum, labels;
  cuMemAlloc(&input, 4 * sizeof(float));
  cuMemAlloc(&loss, sizeof(float));
  cuMemAlloc(&weight_sum, sizeof(float));
  cuMemAlloc(&labels, 2 * sizeof(long));
  float host_input[4] = {};
  long host_labels[2] = {1, 9};  // 9: out of range for 2 classes
  cuMemcpyHtoD(input, host_input, sizeof host_input);
  cuMemcpyHtoD(labels, host_labels, sizeof host_labels);

  int launches = 0;
  unsigned long long busy_us = 10000;
  void* busy_args[] = {&busy_us};
  launches += cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, busy_args, nullptr) == CUDA_SUCCESS;
  long nframe = 2, ndim = 2, classes = 2, ignore = -100;
  bool average = true;
  CUdeviceptr no_weights = 0;
  void* loss_args[] = {&loss, &weight_sum, &input, &labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  launches += cuLaunchKernelEx(&config, nll_loss, loss_args, nullptr) == CUDA_SUCCESS;
  std::printf("launches: %d\n", launches);

  CUresult first = cuCtxSynchronize();
  if (first == CUDA_SUCCESS) return 0;
  int failing = 0;
  failing += cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, busy_args, nullptr) != CUDA_SUCCESS;
  failing += cuMemcpyDtoH(host_input, input, sizeof host_input) != CUDA_SUCCESS;
  failing += cuStreamSynchronize(nullptr) != CUDA_SUCCESS;
  std::printf("failing calls after the first: %d\n", failing);
  return 1;
}
