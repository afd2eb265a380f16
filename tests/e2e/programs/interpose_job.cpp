// Launch paths that plain symbol interposition would miss, for the interposition fallback. Unless --no-profiler,
// the job first subscribes to CUPTI itself, as a profiler would, so firstassert cannot.
//
// usage: interpose_job PATH [--no-profiler]
//   runtime       cudaLaunchKernel
//   nvcc          __cudaGetKernel + __cudaLaunchKernel, what <<<>>> compiles to
//   dlsym         cuLaunchKernel fetched with dlopen("libcuda.so.1") + dlsym, as Triton fetches its launcher
//   procaddress   cuLaunchKernel fetched through cuGetProcAddress
// Each path launches a healthy kernel, then the failing nll_loss. Prints "launches: N".
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bad_labels.h"
#include "kernels/stock_kernels.h"

extern "C" {
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernel, const void* entry);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                         cudaStream_t stream);
}

namespace {

void CUPTIAPI profiler(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "";
  bool profile = !(argc > 2 && std::strcmp(argv[2], "--no-profiler") == 0);
  if (profile) {
    CUpti_SubscriberHandle handle;
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "stand-in profiler";
    if (cuptiSubscribe_v2(&handle, profiler, nullptr, &params) != CUPTI_SUCCESS) return 4;
  }
  if (cudaFree(nullptr) != cudaSuccess) return 4;

  BadLabelsLoss bad;
  void** loss_args = bad.args;
  unsigned long long us = 1000;
  void* busy_args[] = {&us};
  const void* busy_stub = simkernels_host_stub("busy");
  const void* loss_stub = simkernels_host_stub("nll_loss");

  int launches = 0;
  if (path == "runtime") {
    launches += cudaLaunchKernel(busy_stub, dim3{1}, dim3{1}, busy_args, 0, nullptr) == cudaSuccess;
    launches += cudaLaunchKernel(loss_stub, dim3{1}, dim3{32}, loss_args, 0, nullptr) == cudaSuccess;
  } else if (path == "nvcc") {
    cudaKernel_t busy = nullptr, nll = nullptr;
    __cudaGetKernel(&busy, busy_stub);
    __cudaGetKernel(&nll, loss_stub);
    launches += __cudaLaunchKernel(busy, dim3{1}, dim3{1}, busy_args, 0, nullptr) == cudaSuccess;
    launches += __cudaLaunchKernel(nll, dim3{1}, dim3{32}, loss_args, 0, nullptr) == cudaSuccess;
  } else if (path == "dlsym" || path == "procaddress") {
    LaunchFn launch = nullptr;
    if (path == "dlsym") {
      launch = reinterpret_cast<LaunchFn>(dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), "cuLaunchKernel"));
    } else {
      void* fn = nullptr;
      cuGetProcAddress("cuLaunchKernel", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
      launch = reinterpret_cast<LaunchFn>(fn);
    }
    if (launch == nullptr) return 5;
    CUmodule module;
    CUfunction busy, nll;
    cuModuleLoadData(&module, "cubin");
    cuModuleGetFunction(&busy, module, "_ZN10simkernels11busy_kernelEy");
    cuModuleGetFunction(&nll, module,
                        "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll");
    launches += launch(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, busy_args, nullptr) == CUDA_SUCCESS;
    launches += launch(nll, 1, 1, 1, 32, 1, 1, 0, nullptr, loss_args, nullptr) == CUDA_SUCCESS;
  } else {
    std::fprintf(stderr, "interpose_job: unknown path '%s' (runtime, nvcc, dlsym, procaddress)\n", path.c_str());
    return 2;
  }
  std::printf("launches: %d\n", launches);
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}
