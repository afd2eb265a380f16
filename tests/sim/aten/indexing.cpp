// aten/src/ATen/native/cuda/Indexing.cu: index_select's kernel, indexSelectSmallIndex.
//
// In torch 2.15 index_select_out_cuda_impl launches indexSelectSmallIndex when out, self and index allow 32-bit index
// math and numIndices <= 16; otherwise it calls at::gather_out (ScatterGatherKernel.cu: vectorized_gather_kernel or
// _scatter_gather_elementwise_kernel, modelled in scatter_gather.cpp). indexSelectLargeIndex is gone: the 2.15 wheel
// has no kernel of that name. nn.Embedding's forward (at::embedding) is weight.index_select(0, indices.reshape(-1)),
// so an embedding lookup of at most 16 tokens runs indexSelectSmallIndex, a larger one gather's kernels.
//
// template <typename T, typename IndicesType, typename IndexType, int DstDim, int SrcDim, int IdxDim>
// __global__ void indexSelectSmallIndex(TensorInfo<T, IndexType> dst, TensorInfo<const T, IndexType> src,
//     TensorInfo<const IndicesType, IndexType> indices, int dstSelectDim, int srcSelectDim, IndexType innerSize,
//     int64_t srcSelectDimSize)
// Every thread walks all indices (dstIndex = 0 .. indices.sizes[0] - 1) and asserts `srcIndex < srcSelectDimSize`
// (line 1582 in torch 2.15's cubins) before copying its share (linearIndex = blockIdx.x * blockDim.x + threadIdx.x,
// grid-stride, < innerSize) of the selected slice. srcIndex is IndexType (unsigned int): a negative index wraps to a
// huge value and fails the assert.
#include "aten_device.h"

namespace simaten {
namespace {

const AssertSite kSmallIndex{SIMATEN_CUDA_SRC "Indexing.cu", 1582, "indexSelectSmallIndex",
                             "srcIndex < srcSelectDimSize"};

void index_select_small_index(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("indexSelectSmallIndex");
  if (name == nullptr || name->template_args.size() != 6) return;
  auto element = type_layout(name->template_args[0]);
  auto indices_type = integral_type(name->template_args[1]);
  auto index_type = integral_type(name->template_args[2]);
  auto dst_dims = integer_literal(name->template_args[3]);
  auto src_dims = integer_literal(name->template_args[4]);
  auto idx_dims = integer_literal(name->template_args[5]);
  if (!element || !indices_type || !index_type || !dst_dims || !src_dims || !idx_dims) return;
  size_t index_size = size_of(*index_type);
  auto dst = read_tensor_info(arg_bytes(args, 0), index_size);
  auto src = read_tensor_info(arg_bytes(args, 1), index_size);
  auto indices = read_tensor_info(arg_bytes(args, 2), index_size);
  if (!dst || !src || !indices) return;
  int dst_select_dim = arg<int>(args, 3), src_select_dim = arg<int>(args, 4);
  if (dst_select_dim < 0 || dst_select_dim >= kMaxTensorInfoDims || src_select_dim < 0 ||
      src_select_dim >= kMaxTensorInfoDims)
    return;
  uint64_t inner_size = index_size == 4 ? arg<uint32_t>(args, 5) : arg<uint64_t>(args, 5);
  int64_t src_select_dim_size = arg<int64_t>(args, 6);
  uint64_t mask = index_size == 4 ? 0xffffffffull : ~0ull;

  FailedThreads failed(grid, block);
  for (uint64_t dst_index = 0; dst_index < indices->sizes[0]; ++dst_index) {
    uint64_t at = index_to_offset(dst_index, *indices, static_cast<int>(*idx_dims));
    // IndexType srcIndex = indices.data[...]: the index value converted to IndexType.
    uint64_t src_index = static_cast<uint64_t>(load_integral(*indices_type, indices->data, static_cast<int64_t>(at))) &
                         mask;
    // CUDA_KERNEL_ASSERT(srcIndex < srcSelectDimSize): IndexType compared with int64_t.
    bool ok = index_size == 4 ? static_cast<int64_t>(src_index) < src_select_dim_size
                              : src_index < static_cast<uint64_t>(src_select_dim_size);
    if (!ok) {
      failed.fail_all(kSmallIndex);  // every thread reads the same index
      return;
    }
    for (uint64_t linear = 0; linear < inner_size; ++linear) {
      uint64_t dst_offset =
          (index_to_offset(linear, *dst, static_cast<int>(*dst_dims)) + dst_index * dst->strides[dst_select_dim]) &
          mask;
      uint64_t src_offset =
          (index_to_offset(linear, *src, static_cast<int>(*src_dims)) + src_index * src->strides[src_select_dim]) &
          mask;
      std::memcpy(dst->data + dst_offset * element->size, src->data + src_offset * element->size, element->size);
    }
  }
}

const bool registered = [] {
  simcuda_register_kernel_family_with_params("at::native::indexSelectSmallIndex", index_select_small_index,
                                             param_sizes_from_types);
  return true;
}();

}  // namespace
}  // namespace simaten
