// gpu-check probe 3, on the real driver and without the shim: do stream breadcrumbs read back correctly after a
// device-side assert? The shim writes each launch's number into host-mapped pinned memory with cuStreamWriteValue64
// after the launch (src/device/breadcrumbs.cpp) and, once the device has faulted, reads which launch last completed
// on each stream. That rests on three things checked here: the writes ordered before the failing kernel land, the
// ones after it never do (nor later), and another stream's slot keeps its value.
//
// usage: probe_breadcrumbs
// Prints "probe3: ..." lines. Exit status 0 when it probed, 2 when the driver entry point is missing, 5 when there is
// no usable device.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cassert>
#include <cstdint>
#include <cstdio>

#include "probe_support.h"

namespace {

using StreamWriteValue64Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
constexpr long long kSpinCycles = 2000000;  // about a millisecond

}  // namespace

__global__ void probe_spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void probe_assert_kernel(int bad_thread) { assert(static_cast<int>(threadIdx.x) != bad_thread); }

int main() {
  if (!have_device()) return kNoDevice;
  cudaFree(nullptr);
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  StreamWriteValue64Fn write_value = nullptr;
  if (libcuda != nullptr) {
    write_value = reinterpret_cast<StreamWriteValue64Fn>(dlsym(libcuda, "cuStreamWriteValue64_v2"));
    if (write_value == nullptr)
      write_value = reinterpret_cast<StreamWriteValue64Fn>(dlsym(libcuda, "cuStreamWriteValue64"));
  }
  if (write_value == nullptr) {
    std::printf("probe: cuStreamWriteValue64 is not in libcuda.so.1\n");
    return 2;
  }
  volatile uint64_t* slots = nullptr;
  void* device_slots = nullptr;
  cudaStream_t failing = nullptr, other = nullptr;
  if (cudaHostAlloc(const_cast<uint64_t**>(&slots), 2 * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer(&device_slots, const_cast<uint64_t*>(slots), 0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&failing, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("probe: set-up failed (%s)\n", cudaGetErrorName(cudaGetLastError()));
    return 2;
  }
  slots[0] = slots[1] = 0;
  CUdeviceptr failing_slot = reinterpret_cast<CUdeviceptr>(device_slots);
  CUdeviceptr other_slot = failing_slot + sizeof(uint64_t);
  auto crumb = [&](cudaStream_t s, CUdeviceptr slot, uint64_t value) {
    return static_cast<int>(write_value(reinterpret_cast<CUstream>(s), slot, value, 0));
  };

  // The other stream completes its work, breadcrumb included, before anything fails.
  probe_spin_kernel<<<1, 1, 0, other>>>(kSpinCycles);
  int other_write = crumb(other, other_slot, 10);
  cudaStreamSynchronize(other);

  // launches 1 and 2 complete, 3 asserts, 4 never runs
  probe_spin_kernel<<<1, 1, 0, failing>>>(kSpinCycles);
  int write1 = crumb(failing, failing_slot, 1);
  probe_spin_kernel<<<1, 1, 0, failing>>>(kSpinCycles);
  int write2 = crumb(failing, failing_slot, 2);
  probe_assert_kernel<<<1, 32, 0, failing>>>(7);
  int write3 = crumb(failing, failing_slot, 3);
  probe_spin_kernel<<<1, 1, 0, failing>>>(kSpinCycles);
  int write4 = crumb(failing, failing_slot, 4);
  cudaError_t e = cudaStreamSynchronize(failing);
  uint64_t after_sync = slots[0];
  int write_after_fault = crumb(failing, failing_slot, 99);
  usleep(100000);
  uint64_t later = slots[0];

  std::printf("probe3: stream writes returned %d %d %d %d (other stream %d); the sync returned %s (%d)\n", write1,
              write2, write3, write4, other_write, cudaGetErrorName(e), static_cast<int>(e));
  std::printf(
      "probe3: failing stream's slot after the fault: %llu (expected 2: launch 3 asserted, the writes after it "
      "never landed); 100 ms later: %llu\n",
      static_cast<unsigned long long>(after_sync), static_cast<unsigned long long>(later));
  std::printf("probe3: other stream's slot: %llu (expected 10)\n", static_cast<unsigned long long>(slots[1]));
  std::printf("probe3: a stream write after the fault returned %d\n", write_after_fault);
  bool as_designed = e == cudaErrorAssert && after_sync == 2 && later == 2 && slots[1] == 10;
  std::printf("probe3: answer: %s\n", as_designed ? "yes, breadcrumbs read back as designed after a device assert"
                                                  : "no, breadcrumbs do not read back as designed (see above)");
  return 0;
}
