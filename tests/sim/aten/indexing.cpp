// aten/src/ATen/native/cuda/Indexing.cu: index_select's kernels, indexSelectSmallIndex and (torch 2.4)
// indexSelectLargeIndex.
//
// In torch 2.15 index_select_out_cuda_impl launches indexSelectSmallIndex when out, self and index allow 32-bit index
// math and numIndices <= 16; otherwise it calls at::gather_out (ScatterGatherKernel.cu: vectorized_gather_kernel or
// _scatter_gather_elementwise_kernel, modelled in scatter_gather.cpp). indexSelectLargeIndex is gone: the 2.15 and 2.8
// wheels have no kernel of that name; torch 2.4 launches it where 2.15 gathers. nn.Embedding's forward (at::embedding)
// is weight.index_select(0, indices.reshape(-1)), so an embedding lookup of at most 16 tokens runs
// indexSelectSmallIndex, a larger one gather's kernels (2.15, 2.8) or indexSelectLargeIndex (2.4).
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

// What indexSelectSmallIndex and indexSelectLargeIndex share: their first six template arguments (T, IndicesType,
// IndexType, DstDim, SrcDim, IdxDim) and first five parameters (dst, src, indices, dstSelectDim, srcSelectDim).
struct IndexSelect {
  TypeLayout element;
  Integral indices_type;
  size_t index_size;  // sizeof(IndexType)
  uint64_t mask;      // IndexType's range: offsets wrap as IndexType arithmetic does
  int dst_dims, src_dims, idx_dims;
  TensorInfo dst, src, indices;
  int dst_select_dim, src_select_dim;

  // An IndexType argument (a size).
  uint64_t size_arg(void** args, int i) const {
    return index_size == 4 ? uint64_t{arg<uint32_t>(args, i)} : arg<uint64_t>(args, i);
  }
  // IndexType srcIndex = indices.data[...]: index number dst_index converted to IndexType.
  uint64_t src_index(uint64_t dst_index) const {
    uint64_t at = index_to_offset(dst_index, indices, idx_dims);
    return static_cast<uint64_t>(load_integral(indices_type, indices.data, static_cast<int64_t>(at))) & mask;
  }
  // CUDA_KERNEL_ASSERT(srcIndex < srcSelectDimSize): IndexType compared with int64_t.
  bool in_range(uint64_t src_index, int64_t src_select_dim_size) const {
    return index_size == 4 ? static_cast<int64_t>(src_index) < src_select_dim_size
                           : src_index < static_cast<uint64_t>(src_select_dim_size);
  }
  // dst's element in_slice of index dst_index = src's of index src_index.
  void copy(uint64_t in_slice, uint64_t dst_index, uint64_t src_index) const {
    uint64_t dst_offset = (index_to_offset(in_slice, dst, dst_dims) + dst_index * dst.strides[dst_select_dim]) & mask;
    uint64_t src_offset = (index_to_offset(in_slice, src, src_dims) + src_index * src.strides[src_select_dim]) & mask;
    std::memcpy(dst.data + dst_offset * element.size, src.data + src_offset * element.size, element.size);
  }
};

std::optional<IndexSelect> index_select_of(const KernelName& name, void** args) {
  if (name.template_args.size() < 6) return std::nullopt;
  auto element = type_layout(name.template_args[0]);
  auto indices_type = integral_type(name.template_args[1]);
  auto index_type = integral_type(name.template_args[2]);
  auto dst_dims = integer_literal(name.template_args[3]);
  auto src_dims = integer_literal(name.template_args[4]);
  auto idx_dims = integer_literal(name.template_args[5]);
  if (!element || !indices_type || !index_type || !dst_dims || !src_dims || !idx_dims) return std::nullopt;
  size_t index_size = size_of(*index_type);
  auto dst = read_tensor_info(arg_bytes(args, 0), index_size);
  auto src = read_tensor_info(arg_bytes(args, 1), index_size);
  auto indices = read_tensor_info(arg_bytes(args, 2), index_size);
  if (!dst || !src || !indices) return std::nullopt;
  int dst_select_dim = arg<int>(args, 3), src_select_dim = arg<int>(args, 4);
  if (dst_select_dim < 0 || dst_select_dim >= kMaxTensorInfoDims || src_select_dim < 0 ||
      src_select_dim >= kMaxTensorInfoDims)
    return std::nullopt;
  return IndexSelect{*element, *indices_type, index_size, index_size == 4 ? 0xffffffffull : ~0ull,
                     static_cast<int>(*dst_dims), static_cast<int>(*src_dims), static_cast<int>(*idx_dims), *dst, *src,
                     *indices, dst_select_dim, src_select_dim};
}

void index_select_small_index(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("indexSelectSmallIndex");
  if (name == nullptr || name->template_args.size() != 6) return;
  auto s = index_select_of(*name, args);
  if (!s) return;
  uint64_t inner_size = s->size_arg(args, 5);
  int64_t src_select_dim_size = arg<int64_t>(args, 6);

  FailedThreads failed(grid, block);
  for (uint64_t dst_index = 0; dst_index < s->indices.sizes[0]; ++dst_index) {
    uint64_t src_index = s->src_index(dst_index);
    if (!s->in_range(src_index, src_select_dim_size)) {
      failed.fail_all(kSmallIndex);  // every thread reads the same index
      return;
    }
    for (uint64_t linear = 0; linear < inner_size; ++linear) s->copy(linear, dst_index, src_index);
  }
}

// template <typename T, typename IndicesType, typename IndexType, int DstDim, int SrcDim, int IdxDim,
//           bool IndexIsMajor>
// __global__ void indexSelectLargeIndex(TensorInfo<T, IndexType> dst, TensorInfo<const T, IndexType> src,
//     TensorInfo<const IndicesType, IndexType> indices, int dstSelectDim, int srcSelectDim, IndexType totalSize,
//     IndexType innerSize, int64_t srcSelectDimSize)
// (torch 2.4's Indexing.cu; 2.4.1's cubins: parameters 216/416-byte TensorInfos by IndexType, assert line 1284.) One
// output element per linearIndex (grid-stride over totalSize = every element of the output): with IndexIsMajor, its
// index is linearIndex / innerSize (innerSize = the slice size), its element in the slice linearIndex % innerSize;
// otherwise the other way round (innerSize = the number of indices). Each asserts `srcIndex < srcSelectDimSize` for
// its index before copying its element: the threads of the elements of a bad index fail.
const AssertSite kLargeIndex{SIMATEN_CUDA_SRC "Indexing.cu", 1284, "indexSelectLargeIndex",
                             "srcIndex < srcSelectDimSize"};

void index_select_large_index(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("indexSelectLargeIndex");
  if (name == nullptr || name->template_args.size() != 7) return;
  auto s = index_select_of(*name, args);
  if (!s) return;
  bool index_is_major = name->template_args[6] == "true";
  uint64_t total_size = s->size_arg(args, 5), inner_size = s->size_arg(args, 6);
  int64_t src_select_dim_size = arg<int64_t>(args, 7);
  if (inner_size == 0) return;

  FailedThreads failed(grid, block);
  for (uint64_t linear = 0; linear < total_size; ++linear) {
    uint64_t dst_index = index_is_major ? linear / inner_size : linear % inner_size;
    uint64_t in_slice = index_is_major ? linear % inner_size : linear / inner_size;
    uint64_t src_index = s->src_index(dst_index);
    if (!s->in_range(src_index, src_select_dim_size)) {
      auto [b, t] = grid_stride_owner(linear, grid, block);
      failed.fail(kLargeIndex, b, t);
      continue;
    }
    if (!failed.any()) s->copy(in_slice, dst_index, src_index);  // once stopping, what is copied is never read
  }
}

const bool registered = [] {
  simcuda_register_kernel_family_with_params("at::native::indexSelectSmallIndex", index_select_small_index,
                                             param_sizes_from_types);
  simcuda_register_kernel_family_with_params("at::native::indexSelectLargeIndex", index_select_large_index,
                                             param_sizes_from_types);
  return true;
}();

}  // namespace
}  // namespace simaten
