// gather/scatter: aten/src/ATen/native/cuda/ScatterGatherKernel.cu and its fast path in IndexKernelUtils.cu.
//
// vectorized_gather_kernel<Alignment, index_t>(char* out, char* inp, index_t* idx, int num_ind, int64_t slice_size,
//     int64_t ind_dim_size, int64_t inp_stride, int64_t out_stride, bool allow_neg_indices)   [IndexKernelUtils.cu]
//   gather along dim 0 of contiguous 16-byte aligned rows (fast_gather_kernel_eligible): index_select of more than 16
//   indices (so nn.Embedding over a batch), and advanced indexing x[idx] (IndexKernel.cu, allow_neg_indices). Block x
//   copies row idx[x]; all its threads assert `ind >=0 && ind < ind_dim_size && "vectorized gather kernel index out
//   of bounds"` (line 22 in torch 2.15's cubins).
//
// _scatter_gather_elementwise_kernel<nt, vt, func_t>(int N, func_t f)   [ScatterGatherKernel.cu]
//   idx = nt * vt * blockIdx.x + threadIdx.x, then vt steps of nt: f(idx) for idx < N. f is the [=] __device__
//   closure ("loop") of
//     _cuda_scatter_gather_internal_kernel<is_scatter_like, scalar_t, index_t>::operator()<func_t>  gather, scatter,
//       scatter_add, scatter_reduce: `idx_dim >= 0 && idx_dim < index_size && "scatter gather kernel index out of
//       bounds"`, line 257, function "operator()"
//     _cuda_scatter_fill_internal_kernel<scalar_t, index_t>::operator()<func_t>  scatter with a scalar value:
//       `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"`, line 504, function "operator()"
//
// The closure layout. Its captures, in the order nvcc lays them out, are the template arguments of the host-side
// __nv_dl_wrapper_t in torch's own host stub names (e.g. "__nv_dl_wrapper_t<__nv_dl_tag<...>,
// OffsetCalculator<3, unsigned int, false>, char*, long, at::native::TensorAssign const, char*, long, long, char*>"
// for gather), which is the first-use order in the lambda's body: offset_calc, index_ptr, index_size, f, self_ptr,
// index_stride, numel, then src_ptr (gather/scatter) or src_val (fill). Laid out with natural alignment:
//
//   gather/scatter: OffsetCalculator<3> @0 (604 bytes), index_ptr @608, index_size @616, f @624 (empty functor),
//                   self_ptr @632, index_stride @640, numel @648, src_ptr @656; 664 bytes
//   fill:           OffsetCalculator<2> @0 (504 bytes), index_ptr @504, index_size @512, f @520, self_ptr @528,
//                   index_stride @536, numel @544, src_val @552 rounded up to its alignment; 560 (576 for 16-byte
//                   scalars)
//
// The sizes are those of the cubins' parameter tables for all 336 instances in torch 2.15, and compiling a lambda of
// this shape with nvcc 13 puts each capture at these offsets (checked when this was written). Offsets of operands
// (offset_calc.get(i)) are in bytes: operand 0 self, 1 src (gather/scatter) or index (fill), 2 index.
#include <algorithm>
#include <vector>

#include "aten_device.h"

namespace simaten {
namespace {

const AssertSite kVectorizedGather{SIMATEN_CUDA_SRC "IndexKernelUtils.cu", 22, "vectorized_gather_kernel",
                                   "ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\""};
const AssertSite kScatterGather{SIMATEN_CUDA_SRC "ScatterGatherKernel.cu", 257, "operator()",
                                "idx_dim >= 0 && idx_dim < index_size && \"scatter gather kernel index out of bounds\""};
const AssertSite kScatterFill{SIMATEN_CUDA_SRC "ScatterGatherKernel.cu", 504, "operator()",
                              "idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\""};

// ---- vectorized_gather_kernel ----------------------------------------------------------------------------------------

void vectorized_gather(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("vectorized_gather_kernel");
  if (name == nullptr || name->template_args.size() != 2) return;
  auto alignment = integer_literal(name->template_args[0]);
  auto index = integral_type(name->template_args[1]);
  if (!alignment || *alignment <= 0 || !index) return;
  auto* out = arg<unsigned char*>(args, 0);
  const auto* inp = arg<const unsigned char*>(args, 1);
  const auto* idx = arg<const unsigned char*>(args, 2);
  int64_t slice_size = arg<int64_t>(args, 4), ind_dim_size = arg<int64_t>(args, 5);
  int64_t inp_stride = arg<int64_t>(args, 6), out_stride = arg<int64_t>(args, 7);
  bool allow_neg_indices = arg<bool>(args, 8);

  FailedThreads failed(grid, block);
  std::vector<int64_t> rows(grid.x);
  for (unsigned x = 0; x < grid.x; ++x) {
    int64_t ind = load_integral(*index, idx, x);  // int64_t ind = idx[blockIdx.x];
    if (allow_neg_indices) ind = ind < 0 ? ind + ind_dim_size : ind;
    if (!(ind >= 0 && ind < ind_dim_size)) failed.fail_blocks_x(kVectorizedGather, x);
    rows[x] = ind;
  }
  if (failed.any()) return;
  // for (int32_t off = (blockDim.x * blockIdx.y + threadIdx.x) * Alignment; off < slice_size;
  //      off += blockDim.x * gridDim.y * Alignment): every multiple of Alignment below slice_size, once.
  for (unsigned x = 0; x < grid.x; ++x)
    for (int64_t off = 0; off < slice_size; off += *alignment)
      std::memcpy(out + static_cast<int64_t>(x) * static_cast<int32_t>(out_stride) + off,
                  inp + rows[x] * inp_stride + off, static_cast<size_t>(*alignment));
}

// ---- _scatter_gather_elementwise_kernel ------------------------------------------------------------------------------

enum class Variant { GatherScatter, Fill };

struct Closure {
  Variant variant;
  bool is_scatter_like = false;  // gather/scatter only
  TypeLayout scalar{};           // scalar_t (OpaqueType<N> when the kernel copies bytes)
  std::optional<Floating> floating;
  std::optional<Integral> integral;
  Integral index{};
  std::string op;  // at::native::TensorAssign, ReduceAdd, ReduceMean, ReduceMultiply, ReduceMinimum, ReduceMaximum
  int nt = 0, vt = 0;
  // byte offsets in the closure
  size_t index_ptr = 0, index_size = 0, self_ptr = 0, index_stride = 0, numel = 0, src = 0, size = 0;
};

size_t align_up(size_t offset, size_t align) { return (offset + align - 1) / align * align; }

// The closure of a _scatter_gather_elementwise_kernel instance, from its demangled template arguments.
std::optional<Closure> closure_of(const std::vector<std::string>& template_args) {
  if (template_args.size() != 3) return std::nullopt;
  Closure c;
  auto nt = integer_literal(template_args[0]);
  auto vt = integer_literal(template_args[1]);
  if (!nt || !vt || *nt <= 0 || *vt <= 0) return std::nullopt;
  c.nt = static_cast<int>(*nt);
  c.vt = static_cast<int>(*vt);
  std::string_view lambda = template_args[2];
  if (!lambda.ends_with("::{lambda(int)#1}")) return std::nullopt;
  // torch 2.4's structs have no index_t: its gather and scatter take int64 indices only (the same closure sizes in
  // its cubins: 664, 560 and 576 bytes).
  std::vector<std::string> outer;
  if (auto gs = template_args_of(lambda, "_cuda_scatter_gather_internal_kernel");
      gs && (gs->size() == 3 || gs->size() == 2)) {
    c.variant = Variant::GatherScatter;
    if ((*gs)[0] != "true" && (*gs)[0] != "false") return std::nullopt;
    c.is_scatter_like = (*gs)[0] == "true";
    outer = {(*gs)[1], gs->size() == 3 ? (*gs)[2] : "long"};
  } else if (auto fill = template_args_of(lambda, "_cuda_scatter_fill_internal_kernel");
             fill && (fill->size() == 2 || fill->size() == 1)) {
    c.variant = Variant::Fill;
    outer = {(*fill)[0], fill->size() == 2 ? (*fill)[1] : "long"};
  } else {
    return std::nullopt;
  }
  auto scalar = type_layout(outer[0]);
  auto index = integral_type(outer[1]);
  if (!scalar || !index) return std::nullopt;
  c.scalar = *scalar;
  c.floating = floating_type(outer[0]);
  c.integral = integral_type(outer[0]);
  c.index = *index;
  auto op = template_args_of(lambda, "operator()");
  if (!op || op->size() != 1) return std::nullopt;
  c.op = (*op)[0];
  // Captures in layout order (see the top of this file).
  size_t at = offset_calculator_size(c.variant == Variant::Fill ? 2 : 3);
  c.index_ptr = at = align_up(at, 8);
  c.index_size = at = align_up(at + 8, 8);
  at += 8;      // index_size
  at += 1;      // f: an empty functor
  c.self_ptr = at = align_up(at, 8);
  c.index_stride = at = align_up(at + 8, 8);
  c.numel = at = align_up(at + 8, 8);
  at += 8;
  size_t max_align = 8;
  if (c.variant == Variant::GatherScatter) {
    c.src = at = align_up(at, 8);
    at += 8;
  } else {
    c.src = at = align_up(at, c.scalar.align);
    at += c.scalar.size;
    max_align = std::max(max_align, c.scalar.align);
  }
  c.size = align_up(at, max_align);
  return c;
}

int scatter_gather_param_sizes(const char* mangled_name, size_t* sizes, unsigned max_count) {
  auto name = parse_kernel_name(mangled_name, "_scatter_gather_elementwise_kernel");
  if (!name || max_count < 2) return -1;
  auto closure = closure_of(name->template_args);
  if (!closure) return -1;
  sizes[0] = sizeof(int);
  sizes[1] = closure->size;
  return 2;
}

// f(self_data_start, index, numel, src_data): *(self + index) op= *src, in scalar_t.
bool apply(const Closure& c, unsigned char* self, int64_t index, const unsigned char* src) {
  unsigned char* target = self + index * static_cast<int64_t>(c.scalar.size);
  if (c.op == "at::native::TensorAssign") {
    std::memcpy(target, src, c.scalar.size);
    return true;
  }
  bool add = c.op == "at::native::ReduceAdd" || c.op == "at::native::ReduceMean";
  bool multiply = c.op == "at::native::ReduceMultiply";
  if (!add && !multiply) return false;  // ReduceMinimum/ReduceMaximum: not computed (see README.md)
  if (c.floating) {
    double a = load(*c.floating, target, 0), b = load(*c.floating, src, 0);
    store(*c.floating, target, 0, add ? a + b : a * b);
    return true;
  }
  if (c.integral) {
    int64_t a = load_integral(*c.integral, target, 0), b = load_integral(*c.integral, src, 0);
    int64_t r = wrap_to(*c.integral, static_cast<int64_t>(add ? static_cast<uint64_t>(a) + static_cast<uint64_t>(b)
                                                              : static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
    std::memcpy(target, &r, size_of(*c.integral));  // little-endian: the low bytes
    return true;
  }
  return false;
}

void scatter_gather_elementwise(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("_scatter_gather_elementwise_kernel");
  if (name == nullptr) return;
  auto c = closure_of(name->template_args);
  if (!c) return;
  int n = arg<int>(args, 0);
  const unsigned char* f = arg_bytes(args, 1);
  int nargs = c->variant == Variant::Fill ? 2 : 3;
  auto offset_calc = read_offset_calculator(f, nargs);
  if (!offset_calc) return;
  auto* index_ptr = field<const unsigned char*>(f, c->index_ptr);
  int64_t index_size = field<int64_t>(f, c->index_size);
  auto* self_ptr = field<unsigned char*>(f, c->self_ptr);
  int64_t index_stride = field<int64_t>(f, c->index_stride);
  const AssertSite& site = c->variant == Variant::Fill ? kScatterFill : kScatterGather;
  unsigned nv = static_cast<unsigned>(c->nt * c->vt);

  FailedThreads failed(grid, block);
  uint32_t offsets[3];
  for (int i = 0; i < n; ++i) {
    offset_calc->get(static_cast<uint32_t>(i), offsets);
    int64_t idx_dim = load_integral(c->index, index_ptr + offsets[nargs - 1], 0);
    if (!(idx_dim >= 0 && idx_dim < index_size)) {
      // idx = nv * blockIdx.x + threadIdx.x + k * nt
      unsigned u = static_cast<unsigned>(i);
      failed.fail(site, dim3{u / nv, 0, 0}, dim3{u % nv % static_cast<unsigned>(c->nt), 0, 0});
    }
  }
  if (failed.any()) return;
  for (int i = 0; i < n; ++i) {
    offset_calc->get(static_cast<uint32_t>(i), offsets);
    int64_t idx_dim = load_integral(c->index, index_ptr + offsets[nargs - 1], 0);
    unsigned char* self = self_ptr + offsets[0];
    if (c->variant == Variant::Fill) {
      // f((scalar_t*)(self_ptr + offsets[0]), idx_dim * index_stride, numel, (scalar_t*)&src_val)
      if (!apply(*c, self, idx_dim * index_stride, f + c->src)) return;
    } else if (c->is_scatter_like) {
      // f(self + offsets[0], idx_dim * index_stride, numel, (scalar_t*)(src_ptr + offsets[1]))
      const unsigned char* src = field<const unsigned char*>(f, c->src) + offsets[1];
      if (!apply(*c, self, idx_dim * index_stride, src)) return;
    } else {
      // gather: f(self + offsets[0], 0, numel, (scalar_t*)(src_ptr + offsets[1]) + idx_dim * index_stride)
      const unsigned char* src = field<const unsigned char*>(f, c->src) + offsets[1] +
                                 idx_dim * index_stride * static_cast<int64_t>(c->scalar.size);
      if (!apply(*c, self, 0, src)) return;
    }
  }
}

const bool registered = [] {
  simcuda_register_kernel_family("at::native::vectorized_gather_kernel", vectorized_gather);
  simcuda_register_kernel_family_with_params("at::native::_scatter_gather_elementwise_kernel",
                                             scatter_gather_elementwise, scatter_gather_param_sizes);
  return true;
}();

}  // namespace

// For the tests: the closure size this library gives a _scatter_gather_elementwise_kernel instance (-1: none).
extern "C" long simaten_scatter_gather_closure_size(const char* mangled_name) {
  size_t sizes[2];
  return scatter_gather_param_sizes(mangled_name, sizes, 2) == 2 ? static_cast<long>(sizes[1]) : -1;
}

}  // namespace simaten
