// A program built by nvcc 13 with <<<>>>, run on the simulator: its host code registers the fat binary and the
// kernel's host stub (__cudaRegisterFunction), and each launch goes through __cudaPushCallConfiguration,
// __cudaPopCallConfiguration, __cudaGetKernel and __cudaLaunchKernel, as on a GPU. The device code cannot run on
// the CPU, so main() gives the kernel a body by its mangled name.
//
// usage: triple_chevron [BAD_INDEX]   exits 0 when the simulator behaved as CUDA does, 1 otherwise
#include <cuda_runtime_api.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "simcuda.h"

__global__ void check_labels_kernel(const long* labels, int n, int n_classes) {
  int i = threadIdx.x;
  if (i < n) assert(labels[i] >= 0 && labels[i] < n_classes);
}

namespace {

// What the device code does, for the simulated device; it takes a while, as a real kernel would, so that the host's
// check right after the launch runs while the kernel is still going.
void check_labels_body(void** args, dim3, dim3 block) {
  simcuda_sleep_us(20000);
  const long* labels = *static_cast<const long**>(args[0]);
  int n = *static_cast<int*>(args[1]);
  int n_classes = *static_cast<int*>(args[2]);
  for (int i = 0; i < n && i < static_cast<int>(block.x); ++i) {
    if (!(labels[i] >= 0 && labels[i] < n_classes))
      simcuda_device_assert("triple_chevron.cu", 18, "check_labels_kernel",
                            "labels[i] >= 0 && labels[i] < n_classes", dim3{0, 0, 0},
                            dim3{static_cast<unsigned>(i), 0, 0});
  }
}

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "triple_chevron: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int bad_index = argc > 1 ? std::atoi(argv[1]) : 3;
  const char* name = nullptr;
  expect(cudaFuncGetName(&name, check_labels_kernel) == cudaSuccess, "cudaFuncGetName knows the nvcc kernel");
  expect(name != nullptr && std::strcmp(name, "_Z19check_labels_kernelPKlii") == 0, "the registered name is mangled");
  if (name == nullptr) return 1;
  simcuda_register_kernel(nullptr, name, check_labels_body);

  const int n = 8;
  long host[n] = {0, 1, 2, 3, 4, 5, 6, 7};
  long* labels = nullptr;
  expect(cudaMalloc(&labels, sizeof host) == cudaSuccess, "cudaMalloc");
  expect(cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess, "copy of good labels");
  check_labels_kernel<<<1, 32>>>(labels, n, 10);
  expect(cudaDeviceSynchronize() == cudaSuccess, "good labels pass");

  if (bad_index >= 0 && bad_index < n) host[bad_index] = 10;
  expect(cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess, "copy of bad labels");
  check_labels_kernel<<<1, 32>>>(labels, n, 10);
  expect(cudaGetLastError() == cudaSuccess, "the <<<>>> launch itself succeeds");
  cudaError_t sync = cudaDeviceSynchronize();
  if (bad_index >= 0 && bad_index < n) {
    expect(sync == cudaErrorAssert, "the sync reports the device-side assert");
    expect(cudaGetLastError() == cudaErrorAssert, "the error is sticky");
  } else {
    expect(sync == cudaSuccess, "no bad label, no error");
  }
  std::printf("triple_chevron: sync returned %s\n", cudaGetErrorName(sync));
  return failures == 0 ? 0 : 1;
}
