// A training step two calls deep, for host stacks: main() -> train_step() -> the failing launch. Built with -g; the
// marker comments give the test the lines to expect.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "kernels/stock_kernels.h"

namespace {

float* input;
float* loss;
float* weight_sum;
long* labels;

__attribute__((noinline)) cudaError_t train_step(int step) {
  long nframe = 4, ndim = 4, classes = 4, ignore = -100;
  bool average = true;
  const float* no_weights = nullptr;
  void* args[] = {&loss, &weight_sum, &input, &labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};
  cudaError_t launched =
      cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, args, 0, nullptr);  // LAUNCH_LINE
  std::printf("step %d launched: %s\n", step, cudaGetErrorName(launched));
  return launched;
}

}  // namespace

int main() {
  cudaMalloc(reinterpret_cast<void**>(&input), sizeof(float) * 16);
  cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&weight_sum), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&labels), sizeof(long) * 4);
  long bad[4] = {0, 1, 9, 2};
  cudaMemcpy(labels, bad, sizeof bad, cudaMemcpyHostToDevice);
  train_step(1);  // CALL_LINE
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}
