// A training loop as PyTorch runs one, on one stream and without a host read inside the loop: the main thread queues
// the forward pass and the loss, autograd's thread the backward pass, the main thread the optimizer step. The threads
// take turns: the main thread waits for the backward pass before its optimizer step, as loss.backward() does. One
// step's loss kernel asserts with an anonymous line (operator(), as PyTorch's lambda kernels print) whose block and
// thread every launch of the loop could hold (all have the same dimensions): the device's line tells nothing apart.
//
// usage: training_loop_job STEPS FAILING_STEP fresh|persistent legacy|created [runtime|driver]
//   fresh: a new backward thread each step; persistent: one for the whole loop (autograd's device thread).
//   legacy: the legacy default stream; created: a stream the program made.
//   runtime (the default): cudaLaunchKernel; driver: cuLaunchKernel, as Triton's launchers call it.
// Prints "asserting: N", the asserting launch's shared_mem (each launch has its own), and "sync: <error name>" of the
// sync after the loop.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "simcuda.h"

namespace {

struct Args {
  unsigned asserts;  // 1 for the asserting launch
};

// One host stub per kernel; the names are the layers' kernels a small classifier's step runs.
constexpr const char* kNames[] = {"_Z14linear_forwardv", "_Z4reluv", "_Z4lossv", "_Z15linear_backwardv",
                                  "_Z13loss_backwardv", "_Z8sgd_stepv"};
enum Kernel { kLinear, kRelu, kLoss, kLinearBackward, kLossBackward, kSgd, kKernels };
char stubs[kKernels];

void body(void** args, dim3, dim3) {
  Args a;
  std::memcpy(&a, args[0], sizeof a);
  simcuda_sleep_us(200);  // the device behind the host: the loop queues steps ahead of it
  if (a.asserts != 0)
    simcuda_device_assert("/pytorch/aten/src/ATen/native/cuda/Loss.cu", 244, "operator()", "t >= 0 && t < n_classes",
                          dim3{0, 0, 0}, dim3{17, 0, 0});
}

unsigned next_shared = 1;  // each launch's own shared_mem, so the oracle can name it
std::mutex launches;       // next_shared is the threads' in turn; kept honest all the same

// Through the driver: the primary context (made current on each launching thread) and each kernel's function.
bool through_driver = false;
CUcontext context = nullptr;
CUfunction functions[kKernels];

unsigned launch(Kernel k, cudaStream_t stream, bool asserts = false) {
  unsigned shared;
  {
    std::lock_guard lock(launches);
    shared = next_shared++;
  }
  Args a{asserts ? 1u : 0u};
  void* argv[] = {&a};
  if (through_driver) {
    cuCtxSetCurrent(context);
    cuLaunchKernel(functions[k], 1, 1, 1, 64, 1, 1, shared, reinterpret_cast<CUstream>(stream), argv, nullptr);
  } else {
    cudaLaunchKernel(&stubs[k], dim3{1}, dim3{64}, argv, shared, stream);
  }
  return shared;
}

void backward(cudaStream_t stream) {
  launch(kLossBackward, stream);
  for (int layer = 0; layer < 3; ++layer) launch(kLinearBackward, stream);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: training_loop_job STEPS FAILING_STEP fresh|persistent legacy|created [runtime|driver]\n");
    return 2;
  }
  int steps = std::atoi(argv[1]), failing = std::atoi(argv[2]);
  bool fresh = std::strcmp(argv[3], "fresh") == 0;
  for (int k = 0; k < kKernels; ++k) {
    const size_t sizes[] = {sizeof(Args)};
    simcuda_register_kernel_with_params(&stubs[k], kNames[k], body, 1, sizes);
  }
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  through_driver = argc > 5 && std::strcmp(argv[5], "driver") == 0;
  CUmodule module = nullptr;
  if (through_driver &&
      (cuCtxGetCurrent(&context) != CUDA_SUCCESS || cuModuleLoadData(&module, "cubin") != CUDA_SUCCESS))
    return 4;
  for (int k = 0; through_driver && k < kKernels; ++k) {
    if (cuModuleGetFunction(&functions[k], module, kNames[k]) != CUDA_SUCCESS) return 4;
  }
  cudaStream_t stream = nullptr;
  if (std::strcmp(argv[4], "created") == 0) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  // The persistent backward thread: one backward pass per turn, handed over and back through a mutex.
  std::mutex m;
  std::condition_variable cv;
  bool backward_due = false, finished = false;
  std::thread autograd;
  if (!fresh) {
    autograd = std::thread([&] {
      std::unique_lock lock(m);
      for (;;) {
        cv.wait(lock, [&] { return backward_due || finished; });
        if (!backward_due) return;
        backward(stream);
        backward_due = false;
        cv.notify_all();
      }
    });
  }
  for (int step = 0; step < steps; ++step) {
    for (int layer = 0; layer < 3; ++layer) {
      launch(kLinear, stream);
      launch(kRelu, stream);
    }
    unsigned loss = launch(kLoss, stream, step == failing);
    if (step == failing) {
      std::printf("asserting: %u\n", loss);  // its shared_mem
      std::fflush(stdout);
    }
    if (fresh) {
      std::thread(backward, stream).join();
    } else {
      std::unique_lock lock(m);
      backward_due = true;
      cv.notify_all();
      cv.wait(lock, [&] { return !backward_due; });
    }
    for (int layer = 0; layer < 3; ++layer) launch(kSgd, stream);
  }
  if (autograd.joinable()) {
    {
      std::lock_guard lock(m);
      finished = true;
    }
    cv.notify_all();
    autograd.join();
  }
  std::printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
