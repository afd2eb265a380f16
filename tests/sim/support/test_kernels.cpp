#include "test_kernels.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "../simcuda.h"

namespace simtest {
namespace {

std::mutex ids_mutex;
std::vector<int> ids;

template <typename T>
T arg(void** args, int i) {
  T value;
  std::memcpy(&value, args[i], sizeof value);
  return value;
}

// Distinct bodies keep the stubs at distinct addresses.
volatile int stub_calls = 0;

}  // namespace

void record_kernel(int) { stub_calls = 1; }
void wait_flag_kernel(std::atomic<int>*, int*) { stub_calls = 2; }
void set_flag_kernel(std::atomic<int>*, unsigned) { stub_calls = 3; }
void read_flag_kernel(std::atomic<int>*, int*) { stub_calls = 4; }
void scale_kernel(float*, long, float) { stub_calls = 5; }
void assert_kernel(unsigned) { stub_calls = 6; }
void store_int_kernel(int*, int) { stub_calls = 7; }

void register_test_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    const size_t int_arg[] = {sizeof(int)};
    simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&record_kernel), "_ZN7simtest13record_kernelEi",
                                        [](void** a, dim3, dim3) {
                                          std::lock_guard lock(ids_mutex);
                                          ids.push_back(arg<int>(a, 0));
                                        },
                                        1, int_arg);
    const size_t two_pointers[] = {sizeof(void*), sizeof(void*)};
    simcuda_register_kernel_with_params(
        reinterpret_cast<const void*>(&wait_flag_kernel), "_ZN7simtest16wait_flag_kernelEPSt6atomicIiEPi",
        [](void** a, dim3, dim3) {
          auto* flag = arg<std::atomic<int>*>(a, 0);
          auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
          while (flag->load() == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          *arg<int*>(a, 1) = flag->load();
        },
        2, two_pointers);
    const size_t pointer_uint[] = {sizeof(void*), sizeof(unsigned)};
    simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&set_flag_kernel),
                                        "_ZN7simtest15set_flag_kernelEPSt6atomicIiEj",
                                        [](void** a, dim3, dim3) {
                                          simcuda_sleep_us(arg<unsigned>(a, 1));
                                          arg<std::atomic<int>*>(a, 0)->store(1);
                                        },
                                        2, pointer_uint);
    simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&read_flag_kernel),
                                        "_ZN7simtest16read_flag_kernelEPSt6atomicIiEPi",
                                        [](void** a, dim3, dim3) {
                                          *arg<int*>(a, 1) = arg<std::atomic<int>*>(a, 0)->load();
                                        },
                                        2, two_pointers);
    // Plain scalar and pointer parameters: sized from the mangled name, as stock kernels are.
    simcuda_register_kernel(reinterpret_cast<const void*>(&scale_kernel), "_ZN7simtest12scale_kernelEPflf",
                            [](void** a, dim3, dim3) {
                              auto* data = arg<float*>(a, 0);
                              long n = arg<long>(a, 1);
                              float factor = arg<float>(a, 2);
                              for (long i = 0; i < n; ++i) data[i] *= factor;
                            });
    simcuda_register_kernel(reinterpret_cast<const void*>(&assert_kernel), "_ZN7simtest13assert_kernelEj",
                            [](void** a, dim3, dim3) {
                              simcuda_device_assert("train.cu", 42, "assert_kernel", "label < n_classes",
                                                    dim3{1, 0, 0}, dim3{arg<unsigned>(a, 0), 0, 0});
                            });
    simcuda_register_kernel(reinterpret_cast<const void*>(&store_int_kernel), "_ZN7simtest16store_int_kernelEPii",
                            [](void** a, dim3, dim3) { *arg<int*>(a, 0) = arg<int>(a, 1); });
  });
}

std::vector<int> recorded_ids() {
  std::lock_guard lock(ids_mutex);
  return ids;
}

void clear_recorded_ids() {
  std::lock_guard lock(ids_mutex);
  ids.clear();
}

}  // namespace simtest
