// aten/src/ATen/native/cuda/NLLLoss2d.cu: the forward kernels of nll_loss2d (cross_entropy over (N, C, H, W) input,
// e.g. segmentation).
//
//   nll_loss2d_forward_kernel<scalar_t, accscalar_t, index_t>   'mean'/'sum'; index_t int or long (index math width)
//   nll_loss2d_forward_size_average_kernel<scalar_t>            'mean': *output /= *total_weight
//   nll_loss2d_forward_no_reduce_kernel<scalar_t>               'none'
//
// Asserts, lines as torch 2.15's cubins pass them to __assertfail: no_reduce 75 `cur_target >= 0 && cur_target <
// n_classes`; forward 108 `t >= 0 && t < n_classes` and 111 `input_index >= 0`.
#include <array>
#include <vector>

#include "aten_device.h"

namespace simaten {
namespace {

constexpr const char* kNllLoss2dCu = SIMATEN_CUDA_SRC "NLLLoss2d.cu";

const AssertSite kNoReduce{kNllLoss2dCu, 75, "nll_loss2d_forward_no_reduce_kernel",
                           "cur_target >= 0 && cur_target < n_classes"};
const AssertSite kTarget{kNllLoss2dCu, 108, "nll_loss2d_forward_kernel", "t >= 0 && t < n_classes"};
const AssertSite kInputIndex{kNllLoss2dCu, 111, "nll_loss2d_forward_kernel", "input_index >= 0"};

// nll_loss2d_forward_kernel(scalar_t* output, scalar_t* total_weight, const scalar_t* input, const int64_t* target,
//     const scalar_t* weight, int n_classes, int map_nelem, int blocks_per_sample, int64_t ignore_index)
// <<<blocks_per_sample * batch, CUDA_NUM_THREADS>>>: block b works on sample b / blocks_per_sample, its threads on
// pixels i = (b % blocks_per_sample) * blockDim.x + threadIdx.x, stepping blockDim.x * blocks_per_sample; each
// block's sums are reduced (BlockReduceSum) and thread 0 adds them to *total_weight and *output with atomicAdd
// (the host zeroed both before the launch).
void nll_loss2d_forward(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("nll_loss2d_forward_kernel");
  if (name == nullptr || name->template_args.size() != 3) return;
  auto scalar = floating_type(name->template_args[0]);
  auto acc = floating_type(name->template_args[1]);
  auto index = integral_type(name->template_args[2]);
  if (!scalar || !acc || !index) return;
  auto* output = arg<unsigned char*>(args, 0);
  auto* total_weight = arg<unsigned char*>(args, 1);
  const auto* input = arg<const unsigned char*>(args, 2);
  const auto* target = arg<const int64_t*>(args, 3);
  const auto* weight = arg<const unsigned char*>(args, 4);
  int n_classes = arg<int>(args, 5), map_nelem = arg<int>(args, 6), blocks_per_sample = arg<int>(args, 7);
  int64_t ignore_index = arg<int64_t>(args, 8);
  if (blocks_per_sample <= 0) return;

  FailedThreads failed(grid, block);
  std::vector<std::pair<double, double>> block_sums(grid.x, {0.0, 0.0});  // (input_sum, acc_weight)
  int64_t step = int64_t{block.x} * blocks_per_sample;
  for (unsigned b = 0; b < grid.x; ++b) {
    // index_t sample = blockIdx.x / blocks_per_sample; toffset = sample * map_nelem;
    // ioffset = sample * map_nelem * n_classes (index_t arithmetic).
    int64_t sample = wrap_to(*index, b / static_cast<unsigned>(blocks_per_sample));
    int64_t toffset = wrap_to(*index, sample * map_nelem);
    int64_t ioffset = wrap_to(*index, wrap_to(*index, sample * map_nelem) * n_classes);
    for (unsigned x = 0; x < block.x; ++x) {
      double input_sum = 0, acc_weight = 0;
      for (int64_t i = int64_t{b % static_cast<unsigned>(blocks_per_sample)} * block.x + x; i < map_nelem;
           i += step) {
        int64_t t = wrap_to(*index, target[toffset + i]);  // index_t t = target[toffset + i];
        if (t == ignore_index) continue;
        if (!(t >= 0 && t < n_classes)) {
          failed.fail(kTarget, dim3{b, 0, 0}, dim3{x, 0, 0});
          break;
        }
        double cur_weight = weight != nullptr ? load(*scalar, weight, t) : 1.0;
        // const auto input_index = ioffset + i + map_nelem * t; (index_t; int i, map_nelem)
        int64_t input_index = wrap_to(*index, ioffset + i + wrap_to(*index, int64_t{map_nelem} * t));
        if (!(input_index >= 0)) {
          failed.fail(kInputIndex, dim3{b, 0, 0}, dim3{x, 0, 0});
          break;
        }
        double product = round_to(*scalar, load(*scalar, input, input_index) * cur_weight);
        input_sum = round_to(*acc, input_sum - product);
        acc_weight = round_to(*acc, acc_weight + cur_weight);
      }
      block_sums[b].first = round_to(*acc, block_sums[b].first + input_sum);
      block_sums[b].second = round_to(*acc, block_sums[b].second + acc_weight);
    }
  }
  if (failed.any()) return;
  for (const auto& [input_sum, acc_weight] : block_sums) {
    // gpuAtomicAdd(total_weight, static_cast<scalar_t>(acc_weight_)); gpuAtomicAdd(output, ...(input_sum_));
    store(*scalar, total_weight, 0, load(*scalar, total_weight, 0) + round_to(*scalar, acc_weight));
    store(*scalar, output, 0, load(*scalar, output, 0) + round_to(*scalar, input_sum));
  }
}

// nll_loss2d_forward_size_average_kernel(scalar_t* output, const scalar_t* total_weight) <<<1, 1>>>
void nll_loss2d_size_average(void** args, dim3, dim3) {
  const KernelName* name = running_kernel("nll_loss2d_forward_size_average_kernel");
  if (name == nullptr || name->template_args.size() != 1) return;
  auto scalar = floating_type(name->template_args[0]);
  if (!scalar) return;
  auto* output = arg<unsigned char*>(args, 0);
  const auto* total_weight = arg<const unsigned char*>(args, 1);
  store(*scalar, output, 0, load(*scalar, output, 0) / load(*scalar, total_weight, 0));
}

// nll_loss2d_forward_no_reduce_kernel(int64_t n_threads, PackedTensorAccessor64<scalar_t, 4> input,
//     PackedTensorAccessor64<int64_t, 3> target, PackedTensorAccessor64<scalar_t, 3> output, const scalar_t* weight,
//     int64_t ignore_index)
// CUDA_KERNEL_LOOP(index, n_threads): b = index % batch, h = (index / batch) % H, w = (index / (batch * H)) % W.
void nll_loss2d_no_reduce(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("nll_loss2d_forward_no_reduce_kernel");
  if (name == nullptr || name->template_args.size() != 1) return;
  auto scalar = floating_type(name->template_args[0]);
  if (!scalar) return;
  int64_t n_threads = arg<int64_t>(args, 0);
  PackedAccessor input = read_packed_accessor(arg_bytes(args, 1), 4, 8);
  PackedAccessor target = read_packed_accessor(arg_bytes(args, 2), 3, 8);
  PackedAccessor output = read_packed_accessor(arg_bytes(args, 3), 3, 8);
  const auto* weight = arg<const unsigned char*>(args, 4);
  int64_t ignore_index = arg<int64_t>(args, 5);
  int64_t batch_size = input.sizes[0], n_classes = input.sizes[1], H = input.sizes[2], W = input.sizes[3];
  if (batch_size <= 0 || H <= 0 || W <= 0) return;

  FailedThreads failed(grid, block);
  auto coordinates = [&](int64_t index) {
    int64_t b = index % batch_size, h = (index / batch_size) % H, w = (index / (batch_size * H)) % W;
    return std::array<int64_t, 3>{b, h, w};
  };
  auto target_at = [&](int64_t b, int64_t h, int64_t w) {
    return reinterpret_cast<const int64_t*>(target.data)[b * target.strides[0] + h * target.strides[1] +
                                                         w * target.strides[2]];
  };
  for (int64_t index = 0; index < n_threads; ++index) {
    auto [b, h, w] = coordinates(index);
    int64_t t = target_at(b, h, w);
    if (t != ignore_index && !(t >= 0 && t < n_classes)) {
      auto [blk, thr] = grid_stride_owner(static_cast<uint64_t>(index), grid, block);
      failed.fail(kNoReduce, blk, thr);
    }
  }
  if (failed.any()) return;
  for (int64_t index = 0; index < n_threads; ++index) {
    auto [b, h, w] = coordinates(index);
    int64_t t = target_at(b, h, w);
    int64_t out = b * output.strides[0] + h * output.strides[1] + w * output.strides[2];
    if (t == ignore_index) {
      store(*scalar, output.data, out, 0.0);
      continue;
    }
    double value = load(*scalar, input.data,
                        b * input.strides[0] + t * input.strides[1] + h * input.strides[2] + w * input.strides[3]);
    double cur_weight = weight != nullptr ? load(*scalar, weight, t) : 1.0;
    store(*scalar, output.data, out, round_to(*scalar, -value * cur_weight));
  }
}

const bool registered = [] {
  simcuda_register_kernel_family("at::native::nll_loss2d_forward_kernel", nll_loss2d_forward);
  simcuda_register_kernel_family("at::native::nll_loss2d_forward_size_average_kernel", nll_loss2d_size_average);
  simcuda_register_kernel_family_with_params("at::native::nll_loss2d_forward_no_reduce_kernel", nll_loss2d_no_reduce,
                                             param_sizes_from_types);
  return true;
}();

}  // namespace
}  // namespace simaten
