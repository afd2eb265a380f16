// Kernels the simulator tests launch, registered once per process, plus a launch helper that packs arguments the
// way a <<<>>> launch does (an array of pointers to each argument).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <vector>

namespace simtest {

// Host stubs (their addresses are the handles).
void record_kernel(int id);                                         // appends id to recorded_ids()
void wait_flag_kernel(std::atomic<int>* flag, int* saw);            // waits up to 5 s for *flag != 0
void set_flag_kernel(std::atomic<int>* flag, unsigned busy_us);     // busy, then *flag = 1
void read_flag_kernel(std::atomic<int>* flag, int* out);            // *out = *flag
void scale_kernel(float* data, long n, float factor);               // data[i] *= factor
void assert_kernel(unsigned thread);                                // a failing device assert
void store_int_kernel(int* out, int value);                         // *out = value

void register_test_kernels();
std::vector<int> recorded_ids();
void clear_recorded_ids();

template <typename... Args>
cudaError_t launch(const void* stub, cudaStream_t stream, Args... args) {
  void* pointers[sizeof...(Args) + 1] = {static_cast<void*>(&args)...};
  return cudaLaunchKernel(stub, dim3{1, 1, 1}, dim3{32, 1, 1}, sizeof...(Args) ? pointers : nullptr, 0, stream);
}

template <typename F, typename... Args>
cudaError_t launch(F* stub, cudaStream_t stream, Args... args) {
  return launch(reinterpret_cast<const void*>(stub), stream, args...);
}

}  // namespace simtest
