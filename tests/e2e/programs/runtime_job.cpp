// A job on the CUDA runtime, as PyTorch's are: a few healthy steps, then an nll_loss launch with a label out of
// range among other work, then the calls a framework makes while it fails.
//
// usage: runtime_job [--healthy] [--graph] [--enable-before | --enable-after]
//   --healthy        no bad label: the job ends well
//   --graph          the last step is captured into a CUDA graph and replayed, as torch.cuda.graphs do
//   --enable-*       dlopen $FIRSTASSERT_TEST_SHIM and call firstassert_enable() before or after CUDA starts
// Prints "launches: N" (launches the runtime accepted) and "failing calls after the first: M".
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/stock_kernels.h"

namespace {

int launches = 0;

void launch(const char* kernel, dim3 block, void** args) {
  if (cudaLaunchKernel(simkernels_host_stub(kernel), dim3{1}, block, args, 0, nullptr) == cudaSuccess) ++launches;
}

bool enable_shim() {
  const char* path = std::getenv("FIRSTASSERT_TEST_SHIM");
  void* shim = path != nullptr ? dlopen(path, RTLD_NOW) : nullptr;
  auto enable = shim != nullptr ? reinterpret_cast<int (*)()>(dlsym(shim, "firstassert_enable")) : nullptr;
  if (enable == nullptr) {
    std::fprintf(stderr, "runtime_job: cannot load firstassert_enable from %s\n", path ? path : "(unset)");
    return false;
  }
  return enable() == 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool healthy = false, enable_before = false, enable_after = false, graph = false;
  for (int i = 1; i < argc; ++i) {
    healthy |= std::strcmp(argv[i], "--healthy") == 0;
    graph |= std::strcmp(argv[i], "--graph") == 0;
    enable_before |= std::strcmp(argv[i], "--enable-before") == 0;
    enable_after |= std::strcmp(argv[i], "--enable-after") == 0;
  }
  if (enable_before && !enable_shim()) return 3;
  if (cudaFree(nullptr) != cudaSuccess) return 4;  // initializes CUDA, as torch.cuda.init() does
  if (enable_after && !enable_shim()) return 3;

  constexpr long kBatch = 8, kClasses = 4;
  float *input, *out, *loss, *weight_sum;
  long* labels;
  cudaMalloc(reinterpret_cast<void**>(&input), sizeof(float) * kBatch * kClasses);
  cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float) * kBatch * kClasses);
  cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&weight_sum), sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&labels), sizeof(long) * kBatch);
  float host_input[kBatch * kClasses] = {};
  cudaMemcpy(input, host_input, sizeof host_input, cudaMemcpyHostToDevice);

  long n = kBatch * kClasses, nframe = kBatch, ndim = kClasses, classes = kClasses, ignore = -100;
  float alpha = 1.0f;
  bool average = true;
  const float* no_weights = nullptr;
  void* add_args[] = {&out, &input, &input, &alpha, &n};
  void* loss_args[] = {&loss, &weight_sum, &out, &labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};
  unsigned long long busy_us = 20000;
  void* busy_args[] = {&busy_us};

  for (int step = 0; step < 3; ++step) {
    long host_labels[kBatch] = {0, 1, 2, 3, 0, 1, 2, 3};
    if (step == 2 && !healthy) host_labels[6] = kClasses;  // the bad label
    cudaMemcpy(labels, host_labels, sizeof host_labels, cudaMemcpyHostToDevice);
    if (graph && step == 2) {
      // The step's kernels captured once and replayed: the graph launch is what the runtime accepted.
      cudaStream_t stream;
      cudaGraph_t captured;
      cudaGraphExec_t exec;
      cudaStreamCreate(&stream);
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
      cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, busy_args, 0, stream);
      cudaLaunchKernel(simkernels_host_stub("nll_loss"), dim3{1}, dim3{32}, loss_args, 0, stream);
      cudaStreamEndCapture(stream, &captured);
      cudaGraphInstantiate(&exec, captured, 0);
      if (cudaGraphLaunch(exec, stream) == cudaSuccess) ++launches;
      cudaStreamSynchronize(stream);  // the failing sync: every later call is secondary
      continue;
    }
    launch("elementwise_add", dim3{128}, add_args);
    launch("busy", dim3{1}, busy_args);
    launch("nll_loss", dim3{32}, loss_args);
    launch("elementwise_add", dim3{128}, add_args);
  }
  std::printf("launches: %d\n", launches);
  cudaError_t first = cudaDeviceSynchronize();
  if (first == cudaSuccess) {
    std::printf("job finished\n");
    return 0;
  }

  // What a framework does next: each of these fails with the sticky error.
  int failing = 0;
  void* more = nullptr;
  failing += cudaMalloc(&more, 64) != cudaSuccess;
  failing += cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{1}, busy_args, 0, nullptr) != cudaSuccess;
  failing += cudaGetLastError() != cudaSuccess;
  failing += cudaStreamQuery(nullptr) != cudaSuccess;
  float host_loss = 0;
  failing += cudaMemcpy(&host_loss, loss, sizeof host_loss, cudaMemcpyDeviceToHost) != cudaSuccess;
  std::printf("failing calls after the first: %d\n", failing);
  std::printf("error: %s\n", cudaGetErrorString(first));
  return 1;
}
