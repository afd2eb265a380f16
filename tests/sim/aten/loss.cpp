// aten/src/ATen/native/cuda/Loss.cu: the forward kernels of nll_loss (cross_entropy's last step on CUDA).
//
//   nll_loss_forward_reduce_cuda_kernel_2d<scalar_t, accscalar_t, index_t>  (N, C) input, 'mean'/'sum'
//   nll_loss_forward_reduce_cuda_kernel_1d<scalar_t, index_t>               (C) input, 'mean'/'sum'
//   nll_loss_forward_no_reduce_cuda_kernel<scalar_t, index_t>               (N, C) input, 'none'
//
// scalar_t: float, double, c10::Half, c10::BFloat16; index_t: long (int64 targets) or unsigned char (uint8 targets).
// Their asserts are CHECK_INDEX_IN_CLASS(t, n_classes): `INDEX >= 0 && INDEX < N_CLASSES` for signed index_t and
// `INDEX < N_CLASSES` for unsigned (one macro invocation, so one line for both). Lines as torch 2.15's cubins pass
// them to __assertfail: no_reduce 179, 1d 196 (`threadIdx.x == 0 && ...`) and 200, 2d 244.
#include <cmath>
#include <limits>
#include <vector>

#include "aten_device.h"

namespace simaten {
namespace {

constexpr const char* kLossCu = SIMATEN_CUDA_SRC "Loss.cu";

const AssertSite kNoReduceSigned{kLossCu, 179, "nll_loss_forward_no_reduce_cuda_kernel",
                                 "cur_target >= 0 && cur_target < n_classes"};
const AssertSite kNoReduceUnsigned{kLossCu, 179, "nll_loss_forward_no_reduce_cuda_kernel", "cur_target < n_classes"};
const AssertSite k1dThread{kLossCu, 196, "nll_loss_forward_reduce_cuda_kernel_1d",
                           "threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0"};
const AssertSite k1dSigned{kLossCu, 200, "nll_loss_forward_reduce_cuda_kernel_1d", "t >= 0 && t < n_classes"};
const AssertSite k1dUnsigned{kLossCu, 200, "nll_loss_forward_reduce_cuda_kernel_1d", "t < n_classes"};
const AssertSite k2dSigned{kLossCu, 244, "nll_loss_forward_reduce_cuda_kernel_2d", "t >= 0 && t < n_classes"};
const AssertSite k2dUnsigned{kLossCu, 244, "nll_loss_forward_reduce_cuda_kernel_2d", "t < n_classes"};

// CHECK_INDEX_IN_CLASS over a target already read as index_t (an unsigned char target cannot be negative).
bool in_class(int64_t t, int64_t n_classes) { return t >= 0 && t < n_classes; }

// nll_loss_forward_reduce_cuda_kernel_2d(scalar_t* output, scalar_t* total_weight, const scalar_t* input,
//     const index_t* target, const scalar_t* weights, bool size_average, int64_t nframe, int64_t ndim,
//     int64_t n_classes, int64_t ignore_index)
// <<<1, nll_loss_threads(nframe), ...>>>: thread x sums frames i = x, x + blockDim.x, ... into shared memory
// (accscalar_t), then a tree reduction (stride blockDim.x/2 ... 1) and thread 0 writes total_weight and output
// (divided by the total weight for 'mean'). Every block of a larger grid would do the same.
void nll_loss_2d(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("nll_loss_forward_reduce_cuda_kernel_2d");
  if (name == nullptr || name->template_args.size() != 3) return;
  auto scalar = floating_type(name->template_args[0]);
  auto acc = floating_type(name->template_args[1]);
  auto index = integral_type(name->template_args[2]);
  if (!scalar || !acc || !index) return;
  auto* output = arg<unsigned char*>(args, 0);
  auto* total_weight = arg<unsigned char*>(args, 1);
  const auto* input = arg<const unsigned char*>(args, 2);
  const auto* target = arg<const unsigned char*>(args, 3);
  const auto* weights = arg<const unsigned char*>(args, 4);
  bool size_average = arg<bool>(args, 5);
  int64_t nframe = arg<int64_t>(args, 6), ndim = arg<int64_t>(args, 7), n_classes = arg<int64_t>(args, 8);
  int64_t ignore_index = arg<int64_t>(args, 9);
  const AssertSite& site = is_unsigned(*index) ? k2dUnsigned : k2dSigned;

  FailedThreads failed(grid, block);
  unsigned threads = block.x;
  std::vector<double> sh_inputs(threads, 0.0), acc_weight(threads, 0.0);
  for (unsigned x = 0; x < threads; ++x) {
    for (int64_t i = x; i < nframe; i += threads) {
      int64_t t = load_integral(*index, target, i);
      if (t == ignore_index) continue;
      if (!in_class(t, n_classes)) {
        for (unsigned b = 0; b < grid.x; ++b) failed.fail(site, dim3{b, 0, 0}, dim3{x, 0, 0});
        break;  // the thread traps at its first failure
      }
      double cur_weight = weights != nullptr ? load(*scalar, weights, t) : 1.0;
      // sh_inputs[x] -= input[i * ndim + t] * cur_weight: the product is a scalar_t operation.
      double product = round_to(*scalar, load(*scalar, input, i * ndim + t) * cur_weight);
      sh_inputs[x] = round_to(*acc, sh_inputs[x] - product);
      acc_weight[x] = round_to(*acc, acc_weight[x] + cur_weight);
    }
  }
  if (failed.any()) return;
  for (unsigned stride = threads / 2; stride > 0; stride >>= 1) {
    for (unsigned x = 0; x < stride; ++x) {
      sh_inputs[x] = round_to(*acc, sh_inputs[x] + sh_inputs[x + stride]);
      acc_weight[x] = round_to(*acc, acc_weight[x] + acc_weight[x + stride]);
    }
  }
  if (threads == 0) return;
  store(*scalar, total_weight, 0, acc_weight[0]);
  store(*scalar, output, 0, size_average ? round_to(*acc, sh_inputs[0] / acc_weight[0]) : sh_inputs[0]);
}

// nll_loss_forward_reduce_cuda_kernel_1d(scalar_t* output, scalar_t* total_weight, const scalar_t* input,
//     const index_t* target, const scalar_t* weights, bool size_average, int64_t n_classes, int64_t ignore_index)
// <<<1, 1>>>; every thread runs the whole body, asserting first that it is thread (0,0,0).
void nll_loss_1d(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("nll_loss_forward_reduce_cuda_kernel_1d");
  if (name == nullptr || name->template_args.size() != 2) return;
  auto scalar = floating_type(name->template_args[0]);
  auto index = integral_type(name->template_args[1]);
  if (!scalar || !index) return;
  auto* output = arg<unsigned char*>(args, 0);
  auto* total_weight = arg<unsigned char*>(args, 1);
  const auto* input = arg<const unsigned char*>(args, 2);
  const auto* target = arg<const unsigned char*>(args, 3);
  const auto* weights = arg<const unsigned char*>(args, 4);
  bool size_average = arg<bool>(args, 5);
  int64_t n_classes = arg<int64_t>(args, 6), ignore_index = arg<int64_t>(args, 7);

  FailedThreads failed(grid, block);
  int64_t t = load_integral(*index, target, 0);
  bool bad_target = t != ignore_index && !in_class(t, n_classes);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              bool thread0 = tx == 0 && ty == 0 && tz == 0;
              if (!thread0)
                failed.fail(k1dThread, dim3{bx, by, bz}, dim3{tx, ty, tz});
              else if (bad_target)
                failed.fail(is_unsigned(*index) ? k1dUnsigned : k1dSigned, dim3{bx, by, bz}, dim3{0, 0, 0});
            }
  if (failed.any()) return;
  if (t == ignore_index) {
    // If the only element was omitted, we get 0 (pytorch#64572).
    store(*scalar, output, 0, 0.0);
    store(*scalar, total_weight, 0, 0.0);
    return;
  }
  double cur_weight = weights != nullptr ? load(*scalar, weights, t) : 1.0;
  store(*scalar, total_weight, 0, cur_weight);
  double x = load(*scalar, input, t);
  if (size_average)
    store(*scalar, output, 0, cur_weight == 0 ? std::numeric_limits<double>::quiet_NaN() : -x);
  else
    store(*scalar, output, 0, round_to(*scalar, -cur_weight * x));
}

// nll_loss_forward_no_reduce_cuda_kernel(int64_t batch_size, PackedTensorAccessor64<scalar_t, 2> input,
//     const index_t* target, scalar_t* output, const scalar_t* weights, int64_t n_classes, int64_t ignore_index)
// CUDA_KERNEL_LOOP(index, batch_size): output[index] = 0 for ignored targets, else -weight[t] * input[index][t].
void nll_loss_no_reduce(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("nll_loss_forward_no_reduce_cuda_kernel");
  if (name == nullptr || name->template_args.size() != 2) return;
  auto scalar = floating_type(name->template_args[0]);
  auto index = integral_type(name->template_args[1]);
  if (!scalar || !index) return;
  int64_t batch_size = arg<int64_t>(args, 0);
  PackedAccessor input = read_packed_accessor(arg_bytes(args, 1), 2, 8);
  const auto* target = arg<const unsigned char*>(args, 2);
  auto* output = arg<unsigned char*>(args, 3);
  const auto* weights = arg<const unsigned char*>(args, 4);
  int64_t n_classes = arg<int64_t>(args, 5), ignore_index = arg<int64_t>(args, 6);
  const AssertSite& site = is_unsigned(*index) ? kNoReduceUnsigned : kNoReduceSigned;

  FailedThreads failed(grid, block);
  for (int64_t i = 0; i < batch_size; ++i) {
    int64_t t = load_integral(*index, target, i);
    if (t != ignore_index && !in_class(t, n_classes)) {
      auto [b, x] = grid_stride_owner(static_cast<uint64_t>(i), grid, block);
      failed.fail(site, b, x);
    }
  }
  if (failed.any()) return;
  for (int64_t i = 0; i < batch_size; ++i) {
    int64_t t = load_integral(*index, target, i);
    if (t == ignore_index) {
      store(*scalar, output, i, 0.0);
      continue;
    }
    double cur_weight = weights != nullptr ? load(*scalar, weights, t) : 1.0;
    double x = load(*scalar, input.data, i * input.strides[0] + t * input.strides[1]);
    store(*scalar, output, i, round_to(*scalar, -cur_weight * x));
  }
}

// The no_reduce kernel's PackedTensorAccessor64 is a struct parameter: sized from its type in the name.
const bool registered = [] {
  simcuda_register_kernel_family("at::native::nll_loss_forward_reduce_cuda_kernel_2d", nll_loss_2d);
  simcuda_register_kernel_family("at::native::nll_loss_forward_reduce_cuda_kernel_1d", nll_loss_1d);
  simcuda_register_kernel_family_with_params("at::native::nll_loss_forward_no_reduce_cuda_kernel", nll_loss_no_reduce,
                                             param_sizes_from_types);
  return true;
}();

}  // namespace
}  // namespace simaten
