// libsimaten.so: device code for PyTorch's ATen CUDA kernels, for the simulated device. Each op family's .cpp
// registers kernel families (simcuda_register_kernel_family*) from a static initializer, so that loading the library
// (SIMCUDA_DEVICE_CODE at cuInit) brings the bodies, as torch's fatbinaries bring its device code to a real GPU.
//
// What is modelled is read from PyTorch's own sources and checked against the device code of the PyPI wheel
// torch 2.15.0+cu132 (libtorch_cuda.so, git d0f2af8b): the parameter layouts against the cubins' parameter tables
// (.nv.info EIATTR_KPARAM_INFO), the assert lines, conditions, file paths and function names against the strings
// and line immediates of the cubins' __assertfail calls (sm_90). See README.md beside this file.
//
// This header: reading launch arguments, kernel names, ATen's scalar types and parameter structs, and reporting
// device-side asserts as the device prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../simcuda.h"

namespace simaten {

// ---- where torch 2.15's device code says its asserts are -------------------------------------------------------

// __FILE__ of the .cu files as the wheel's build compiled them (the cubins' strings): the GitHub Actions workspace.
// Older wheels built in docker print "/pytorch/aten/..." (2.5-2.8) or "../aten/..." (2.0-2.4); 2.15 prints this.
#define SIMATEN_CUDA_SRC "/__w/pytorch/pytorch/aten/src/ATen/native/cuda/"

// CUDA_KERNEL_ASSERT (c10/macros/Macros.h) passes __func__ to __assert_fail, so the device prints the function's
// bare name ("nll_loss_forward_reduce_cuda_kernel_2d"), and "operator()" inside a lambda; not the
// __PRETTY_FUNCTION__ signature. The cubins of torch 2.15 hold exactly these bare names, and the logs of recent
// builds show them (e.g. "/pytorch/aten/src/ATen/native/cuda/Loss.cu:245: nll_loss_forward_reduce_cuda_kernel_2d:
// block: [0,0,0], thread: [893,0,0] Assertion `t >= 0 && t < n_classes` failed." in meta-pytorch/tritonbench#478).
// CUDA_KERNEL_ASSERT_VERBOSE prints nothing more unless C10_ENABLE_VERBOSE_ASSERT, which the wheel is not built with
// (its cubins hold none of the verbose format strings).
struct AssertSite {
  const char* file;
  unsigned line;
  const char* function;
  const char* condition;
};

// ---- launch arguments ----------------------------------------------------------------------------------------------

template <typename T>
T arg(void** args, int i) {
  T value;
  std::memcpy(&value, args[i], sizeof value);
  return value;
}

// A field of a struct parameter (closure, TensorInfo...) at a byte offset.
template <typename T>
T field(const unsigned char* base, size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof value);
  return value;
}

inline const unsigned char* arg_bytes(void** args, int i) { return static_cast<const unsigned char*>(args[i]); }

// ---- kernel names ----------------------------------------------------------------------------------------------------

// Splits a template argument or parameter list at its top-level commas (not inside <>, (), [] or {}).
std::vector<std::string> split_top_level(std::string_view list);

struct KernelName {
  std::string demangled;
  std::vector<std::string> template_args;  // of the kernel function itself
  std::vector<std::string> params;         // its parameter types
};

// Parses a mangled kernel name whose demangled function is `function` (e.g. "nll_loss_forward_reduce_cuda_kernel_2d",
// found after "::"): its template arguments and parameter types. nullopt when it is not such a name.
std::optional<KernelName> parse_kernel_name(const char* mangled, std::string_view function);

// The running kernel's parsed name (cached per name); nullopt outside a body or when it does not parse.
const KernelName* running_kernel(std::string_view function);

// "2ul", "-1", "16" -> the integer; nullopt when not an integer literal.
std::optional<int64_t> integer_literal(std::string_view text);

// The template arguments of the first class template named `name` in `text` (e.g. name
// "_cuda_scatter_gather_internal_kernel" in a lambda's enclosing scope).
std::optional<std::vector<std::string>> template_args_of(std::string_view text, std::string_view name);

// ---- scalar types ----------------------------------------------------------------------------------------------------

struct TypeLayout {
  size_t size;
  size_t align;
};

// Size and alignment of a demangled type as the device stores it: builtin scalars, pointers, c10 scalar types
// (Half, BFloat16, complex<...>, Float8_*, qint*), at::native::OpaqueType<N> (alignas(N)). nullopt otherwise.
std::optional<TypeLayout> type_layout(std::string_view type);

// The floating types ATen's loss kernels are instantiated for; arithmetic is done the device's way: each operation on
// Half/BFloat16 values rounds its result to Half/BFloat16 (c10's operators return Half), float ops round to float.
enum class Floating { Float, Double, Half, BFloat16 };
std::optional<Floating> floating_type(std::string_view type);

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);  // round to nearest even
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);  // round to nearest even, as c10::BFloat16

double load(Floating type, const void* data, int64_t index);
void store(Floating type, void* data, int64_t index, double value);
// value rounded to the type (what a Half/BFloat16/float operation result holds).
double round_to(Floating type, double value);
// at::acc_type<scalar_t, /*is_cuda=*/true>: float for float, Half and BFloat16, double for double.
inline Floating acc_type(Floating type) { return type == Floating::Double ? Floating::Double : Floating::Float; }

// Integral index types (index_t, IndicesType, IndexType) by name; value read sign- or zero-extended.
enum class Integral { Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64 };
std::optional<Integral> integral_type(std::string_view type);
size_t size_of(Integral type);
bool is_unsigned(Integral type);
int64_t load_integral(Integral type, const void* data, int64_t index);
// value wrapped to the type's width (its arithmetic on the device), returned sign- or zero-extended.
int64_t wrap_to(Integral type, int64_t value);

// ---- ATen's parameter structs --------------------------------------------------------------------------------------

// at::cuda::detail::TensorInfo<T, IndexType> (ATen/cuda/detail/TensorInfo.cuh): T* data; IndexType
// sizes[MAX_TENSORINFO_DIMS]; IndexType strides[MAX_TENSORINFO_DIMS]; int dims; with MAX_TENSORINFO_DIMS = 25.
// torch 2.15's cubins: 216 bytes for IndexType unsigned int.
constexpr int kMaxTensorInfoDims = 25;
size_t tensor_info_size(size_t index_size);

struct TensorInfo {
  unsigned char* data = nullptr;
  uint64_t sizes[kMaxTensorInfoDims] = {};
  uint64_t strides[kMaxTensorInfoDims] = {};
  int dims = 0;
  size_t index_size = 4;  // sizeof(IndexType)
};
// nullopt when dims is out of range (a layout that is not a TensorInfo).
std::optional<TensorInfo> read_tensor_info(const unsigned char* bytes, size_t index_size);
// at::cuda::detail::IndexToOffset<T, IndexType, Dims>::get with IndexType arithmetic (wrapping at its width):
// Dims > 0 static, -1 dynamic (info.dims), -2 contiguous (the linear index itself).
uint64_t index_to_offset(uint64_t linear, const TensorInfo& info, int dims_template);

// at::GenericPackedTensorAccessor<T, N, PtrTraits, index_t> (torch 2.15:
// torch::headeronly::detail::GenericPackedTensorAccessor<TensorAccessor<...>, at::detail::IndexBoundsCheck<N, index_t>,
// T, N, PtrTraits, index_t>): PtrType data_; index_t sizes_[N]; index_t strides_[N]. PackedTensorAccessor64: 8+16N
// bytes (the cubins: 24, 40, 56, 72 for N = 1..4). IndexBoundsCheck is a stateless host-side check.
struct PackedAccessor {
  unsigned char* data = nullptr;
  int64_t sizes[8] = {};
  int64_t strides[8] = {};  // in elements
  int dims = 0;
};
PackedAccessor read_packed_accessor(const unsigned char* bytes, int dims, size_t index_size);
size_t packed_accessor_size(int dims, size_t index_size);

// at::cuda::detail::OffsetCalculator<NARGS, uint32_t, false> (ATen/cuda/detail/OffsetCalculator.cuh): int dims;
// IntDivider<uint32_t> sizes_[MAX_DIMS] ({divisor, m1, shift}); uint32_t strides_[MAX_DIMS][NARGS], with MAX_DIMS = 25.
// Strides are in bytes. get() is exact division (IntDivider's magic numbers give exact quotients).
constexpr int kOffsetCalculatorMaxDims = 25;
size_t offset_calculator_size(int nargs);

struct OffsetCalculator {
  int nargs = 0;
  int dims = 0;
  uint32_t divisors[kOffsetCalculatorMaxDims] = {};
  uint32_t strides[kOffsetCalculatorMaxDims][4] = {};
  // offsets of the nargs operands for linear index i; nullopt when a divisor is 0 (not an OffsetCalculator).
  bool get(uint32_t linear, uint32_t* offsets) const;
};
std::optional<OffsetCalculator> read_offset_calculator(const unsigned char* bytes, int nargs);

// Sizes of a parameter of these types, in the demangled spelling of torch 2.15's kernel names: scalars, pointers,
// TensorInfo, GenericPackedTensorAccessor. nullopt otherwise.
std::optional<size_t> param_size(std::string_view type);
// simcuda_param_sizes_fn for families whose parameters param_size sizes: -1 when one is unknown.
int param_sizes_from_types(const char* mangled_name, size_t* sizes, unsigned max_count);

// ---- device-side asserts ---------------------------------------------------------------------------------------------

// A failing CUDA_KERNEL_ASSERT traps the thread that failed; every thread that reaches a failing assert before the
// trap ends the kernel prints its own line. The simulated kernel records each thread's first failure and prints one
// line per failing thread, in (block, thread) order, at most kMaxAssertLines of them (a real device prints as many as
// raced to the assert: one or two warps' worth of lines is typical of the logs).
constexpr size_t kMaxAssertLines = 32;

class FailedThreads {
 public:
  explicit FailedThreads(dim3 grid, dim3 block) : grid_(grid), block_(block) {}
  // Thread `thread` of block `block_idx` fails `site` (ignored when that thread already failed: it stopped there).
  void fail(const AssertSite& site, dim3 block_idx, dim3 thread_idx);
  // Every thread of every block fails `site` at the same point (a value all threads read).
  void fail_all(const AssertSite& site);
  // Every thread of the blocks with x == block_x fails `site`.
  void fail_blocks_x(const AssertSite& site, unsigned block_x);
  bool any() const { return any_; }
  // Prints the lines (simcuda_device_assert); the kernel is then stopped by the device.
  void report() const;
  ~FailedThreads() { report(); }
  FailedThreads(const FailedThreads&) = delete;
  FailedThreads& operator=(const FailedThreads&) = delete;

 private:
  // (linear block, linear thread): only the kMaxAssertLines smallest are kept.
  std::map<std::pair<uint64_t, uint64_t>, const AssertSite*> failed_;
  dim3 grid_, block_;
  bool any_ = false;
  mutable bool reported_ = false;
  uint64_t linear_block(dim3 b) const { return (uint64_t{b.z} * grid_.y + b.y) * grid_.x + b.x; }
  uint64_t linear_thread(dim3 t) const { return (uint64_t{t.z} * block_.y + t.y) * block_.x + t.x; }
};

// Grid-stride loops (CUDA_KERNEL_LOOP): element e of a loop starting at blockIdx.x * blockDim.x + threadIdx.x and
// striding blockDim.x * gridDim.x belongs to this thread of this block.
inline std::pair<dim3, dim3> grid_stride_owner(uint64_t element, dim3 grid, dim3 block) {
  uint64_t stride = uint64_t{block.x} * grid.x;
  uint64_t start = element % stride;
  return {dim3{static_cast<unsigned>(start / block.x), 0, 0}, dim3{static_cast<unsigned>(start % block.x), 0, 0}};
}

}  // namespace simaten
