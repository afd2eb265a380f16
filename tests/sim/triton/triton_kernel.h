// A Triton kernel that the simulated device runs from its Triton GPU IR (TTGIR, the NAME.ttgir Triton's cache keeps
// beside NAME.cubin), since the simulator cannot run the cubin's SASS. TTGIR says what each program (block) computes
// over whole tensors, and the layout of each tensor says which of the block's threads holds each element: enough to
// compute the kernel's real results from its real arguments and to name the threads whose tt.assert fails.
#pragma once

#include <vector_types.h>  // dim3, from the CUDA toolkit

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simtriton {

// One failing tt.assert, as one thread of one block raises it (__assertfail's arguments: Triton passes the
// assert's source location and the function "unknown").
struct AssertFailure {
  std::string file;
  unsigned line = 0;
  std::string message;
  dim3 block;
  dim3 thread;
};

// What a kernel needs from the device it runs on.
struct DeviceHooks {
  // True when [address, address + bytes) is memory the device may read or write.
  std::function<bool(const void* address, size_t bytes)> accessible;
  // Called once per failing thread, in (block, thread) order; the kernel stops after the block that failed.
  std::function<void(const AssertFailure&)> assert_failed;
  // A device fault with this CUDA error code (700: a load or store outside device memory); the kernel stops.
  std::function<void(int cuda_error)> fault;
};

class TritonKernel {
 public:
  virtual ~TritonKernel() = default;
  // The text of NAME.ttgir; nullptr (and why in *error) when it holds no kernel or uses what this cannot run.
  static std::unique_ptr<TritonKernel> parse(std::string_view ttgir, std::string* error);

  virtual const std::string& name() const = 0;
  // The sizes of the function's parameters in launch order (pointers 8, i32 4, ...). The cubin may add parameters
  // after these (Triton's scratch pointers); they are passed but not read.
  virtual std::vector<size_t> parameter_sizes() const = 0;
  // Threads per block the kernel was compiled for (ttg.num-warps x ttg.threads-per-warp).
  virtual unsigned threads_per_block() const = 0;
  // Runs every program of grid (x fastest) over args: args[i] points at parameter i's bytes. Returns false, with
  // why in *error, when the kernel uses an operation this cannot run (nothing is written after that point).
  virtual bool run(void* const* args, dim3 grid, const DeviceHooks& hooks, std::string* error) const = 0;
};

}  // namespace simtriton
