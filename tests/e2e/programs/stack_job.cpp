// A training step two calls deep, for host stacks: main() -> train_step() -> the failing launch. Built with -g; the
// marker comments give the test the lines to expect.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "bad_labels.h"
#include "kernels/stock_kernels.h"

namespace {

BadLabelsLoss* bad;

__attribute__((noinline)) cudaError_t train_step(int step) {
  cudaError_t launched =
      cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, bad->args, 0, nullptr);  // LAUNCH_LINE
  std::printf("step %d launched: %s\n", step, cudaGetErrorName(launched));
  return launched;
}

}  // namespace

int main() {
  BadLabelsLoss tensors;
  bad = &tensors;
  train_step(1);  // CALL_LINE
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}
