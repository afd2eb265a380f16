// gpu-check case: a custom kernel with assert(), launched with <<<>>>. nvcc 13 compiles the launch to
// __cudaLaunchKernel, earlier versions to cudaLaunchKernel. scripts/gpu-check builds it twice, against the shared and
// against the static CUDA runtime (nvcc's default, whose entry points no preloaded library can interpose).
//
// Exit status as tests/gpu/gpucase.py: 3 the job saw cudaErrorAssert, 0 no error, 4 another error, 5 no usable
// device (a driver older than this runtime, say).
#include <cuda_runtime.h>

#include <cassert>
#include <cstdio>

namespace {

constexpr int kExitNoError = 0, kExitAssert = 3, kExitOtherError = 4, kExitSkip = 5;
constexpr int kLabels = 32;
constexpr int kClasses = 10;

}  // namespace

__global__ void gpu_check_scale_kernel(float* values, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= factor;
}

__global__ void gpu_check_labels_kernel(const long long* labels, int n, int n_classes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(labels[i] >= 0 && labels[i] < n_classes);
}

int main() {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("gpu-check: skip: no usable CUDA device (%s)\n", cudaGetErrorName(e));
    return kExitSkip;
  }
  long long host[kLabels];
  for (int i = 0; i < kLabels; ++i) host[i] = i % kClasses;
  long long* labels = nullptr;
  float* values = nullptr;
  if (cudaMalloc(&labels, sizeof host) != cudaSuccess || cudaMalloc(&values, 256 * sizeof(float)) != cudaSuccess ||
      cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess) {
    std::printf("gpu-check: skip: set-up failed (%s)\n", cudaGetErrorName(cudaGetLastError()));
    return kExitSkip;
  }
  // Healthy launches of both kernels first: the culprit must be told from them.
  gpu_check_labels_kernel<<<1, kLabels>>>(labels, kLabels, kClasses);
  gpu_check_scale_kernel<<<2, 128>>>(values, 256, 2.0f);
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("gpu-check: caught %s before the failing op\n", cudaGetErrorName(e));
    return kExitOtherError;
  }
  host[5] = kClasses;  // one past the last class
  cudaMemcpy(labels, host, sizeof host, cudaMemcpyHostToDevice);
  std::printf("gpu-check: the failing op is next\n");
  std::fflush(stdout);
  gpu_check_labels_kernel<<<1, kLabels>>>(labels, kLabels, kClasses);  // FAILING_OP
  gpu_check_scale_kernel<<<2, 128>>>(values, 256, 0.5f);
  e = cudaDeviceSynchronize();
  if (e == cudaSuccess) {
    std::printf("gpu-check: no error\n");
    return kExitNoError;
  }
  std::printf("gpu-check: caught %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
  return e == cudaErrorAssert ? kExitAssert : kExitOtherError;
}
