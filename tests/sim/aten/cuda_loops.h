// Which thread of an ATen elementwise launch (gpu_kernel over a TensorIterator) computes which element, for the three
// kernels gpu_kernel launches on CUDA: vectorized_elementwise_kernel, unrolled_elementwise_kernel and
// elementwise_kernel. A model of a gpu_kernel lambda that asserts walks these to know which (block, thread) prints.
//
// Sources: aten/src/ATen/native/cuda/CUDALoops.cuh, MemoryAccess.cuh, Loops.cuh and thread_constants.h as the newest
// text in the reference store has them (the cyyever/pytorch fork, which carries the 2.15-era vectorized kernel split
// into <vec_size, ..., use_128b_tws>: torch 2.15's cubins hold that kernel's "128-byte-per-thread" assert). Checked
// against torch 2.15.0 itself: the template arguments of its kernel names (vec_size 2, 4, 8; unrolled
// elems_per_thread 4; elementwise_kernel<128, 2 or 4>), its cubins' parameter sizes, and the launches its host code
// makes on the simulator for binary_cross_entropy (block 128; grid ceil(N / 1024) for the vectorized kernel of 2-,
// 4- and 8-byte types, so 8 elements per thread; ceil(N / 512) for the unrolled one; ceil(N / (128 * vt)) for
// elementwise_kernel). What is not checked against 2.15's own machine code (no disassembler here): the order inside
// a block below, i.e. that the device-side loops are those of the fork's MemoryAccess.cuh. Whatever that order, a
// thread named here is one of the launch's own (b < gridDim.x, t < blockDim.x), so a reader that narrows candidate
// launches by the printed block and thread is never misled about which launch could have printed it.
#pragma once

#include <cstdint>

namespace simaten::cuda_loops {

// num_threads() = C10_WARP_SIZE * 4 (thread_constants.h): the block size of all three kernels, and the stride
// between a thread's elements in the device-side loops (a compile-time constant there, not blockDim.x).
constexpr int64_t kNumThreads = 128;

// elems_per_thread<io_size>() (CUDALoops.cuh, CUDA): 16 when an element's inputs and output together take one byte,
// else 8. io_size = sum of the functor's argument sizes + its result's size.
constexpr int elems_per_thread(int64_t io_size) { return io_size == 1 ? 16 : 8; }

// elementwise_thread_work_size() = 4: unrolled_elementwise_kernel's elems_per_thread when launch_vectorized_kernel
// falls back to it (vec_size 1: a misaligned pointer) and in launch_unrolled_kernel; the `4` in its names' template
// arguments.
constexpr int kUnrolledThreadWork = 4;

// elementwise_kernel_helper (Loops.cuh) loads a thread's tws elements, then calls the functor on args[0..tws-1] in
// order (skipping those check_inbounds rejects), then stores. The visitors below call visit(element) in that order,
// with the element's linear index in the iterator; visit returns false to stop (the thread trapped).

// memory::policies::unroll (unroll_base<num_threads(), ..., tws>): block b owns elements [b * tws * 128, +tws * 128);
// thread t takes t, t + 128, ... of them (tws steps) while below remaining = n - b * tws * 128.
template <typename Visit>
void unroll_thread(int64_t n, int tws, uint64_t b, uint64_t t, Visit&& visit) {
  int64_t base = static_cast<int64_t>(b) * tws * kNumThreads;
  for (int i = 0; i < tws; ++i) {
    int64_t element = base + static_cast<int64_t>(t) + i * kNumThreads;
    if (element >= n) return;  // check_inbounds: threadIdx.x + i * num_threads() < remaining, rising with i
    if (!visit(element)) return;
  }
}

// vectorized_elementwise_kernel<vec_size, func_t, array_t, false> (vectorized_elementwise_kernel_impl<vec_size,
// tws>): a block whose tws * 128 elements all lie below n uses memory::policies::vectorized<vec_size, array_t, tws>:
// thread t loads vectors t, t + 128, ... (tws / vec_size of them) of vec_size consecutive elements each, and computes
// results[vec_size * i + j] = element (t + 128 * i) * vec_size + j of the block, in that order. The last block, when
// partial, uses the unroll policy with the same tws.
template <typename Visit>
void vectorized_thread(int64_t n, int vec_size, int tws, uint64_t b, uint64_t t, Visit&& visit) {
  int64_t block_work = tws * kNumThreads;
  int64_t base = static_cast<int64_t>(b) * block_work;
  if (n - base < block_work) {
    unroll_thread(n, tws, b, t, visit);
    return;
  }
  for (int i = 0; i < tws / vec_size; ++i) {
    for (int j = 0; j < vec_size; ++j) {
      int64_t element = base + (static_cast<int64_t>(t) + i * kNumThreads) * vec_size + j;
      if (element >= n) return;  // only for threads beyond num_threads(), which torch does not launch
      if (!visit(element)) return;
    }
  }
}

// elementwise_kernel<nt, vt, func_t> (launch_legacy_kernel, the non-contiguous path of gpu_kernel_impl_nocast):
// idx = nt * vt * blockIdx.x + threadIdx.x, then vt steps of nt while idx < n.
template <typename Visit>
void legacy_thread(int64_t n, int nt, int vt, uint64_t b, uint64_t t, Visit&& visit) {
  int64_t idx = static_cast<int64_t>(b) * nt * vt + static_cast<int64_t>(t);
  for (int i = 0; i < vt && idx < n; ++i, idx += nt)
    if (!visit(idx)) return;
}

}  // namespace simaten::cuda_loops
