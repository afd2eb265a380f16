// aten/src/ATen/native/cuda/ForeachBinaryOpList.cu: torch._foreach_copy_(self, src) (torch.compile's CUDA graph trees
// copy a graph's inputs into its static buffers with it). On its fast path (tensors of one device, src of one dtype,
// self and src of equal sizes and strides) foreach_tensor_copy_list_kernel_cuda_ runs multi_tensor_apply<2> over the
// lists {src, self} with
//   UnaryOpFunctor<scalar_t, 2, 1, 1> and Copy<scalar_t, scalar_t>   when self and src share a dtype, or
//   CopyFunctor<scalar_t, src_t, 2, 1, 1> and Copy<scalar_t, src_t>   when they do not (static_cast, the real part
//                                                                     of a complex source for a real self),
// and self[i] = that of src[i], element by element. Those members of multi_tensor_apply_kernel are modelled here;
// every other foreach op's stays a no-op (SIMCUDA_NOT_MODELLED).
//
// multi_tensor_apply_kernel<TensorListMetadata<2>, functor, Copy<...>>(TensorListMetadata<2> tl, functor, Copy):
// parameters 24200, 1, 1 bytes (the cubins' table of all 256 instances in torch 2.15, cubin_facts.py 4CopyI).
// TensorListMetadata<2> (MultiTensorApply.cuh, the 32 KiB parameter variant that CUDA 13 builds take:
// depth_to_max_tensors[1] = 448, depth_to_max_blocks[1] = 2240, block_index_t = uint16_t):
//   const void* addresses[2][448] @0; int64_t numel_for_tensor[448] @7168; uint16_t block_to_tensor[2240] @10752;
//   int32_t block_to_chunk[2240] @15232; int32_t start_tensor_this_launch @24192; 24200 bytes in all.
// Block b copies chunk block_to_chunk[b] (kChunkSize = 65536 elements) of tensor block_to_tensor[b]: elements
// [chunk * 65536, min(numel, (chunk + 1) * 65536)) of addresses[0] (src) to addresses[1] (self).
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "aten_device.h"
#include "running_member.h"
#include "scalar_cast.h"

namespace simaten {
namespace {

constexpr int kMaxTensors = 448;
constexpr int kMaxBlocks = 2240;
constexpr size_t kAddresses = 0;
constexpr size_t kNumel = kAddresses + 2 * kMaxTensors * 8;
constexpr size_t kBlockToTensor = kNumel + kMaxTensors * 8;
constexpr size_t kBlockToChunk = kBlockToTensor + kMaxBlocks * 2;
constexpr size_t kMetadataSize = kBlockToChunk + kMaxBlocks * 4 + 8;  // start_tensor_this_launch, padded to 8
static_assert(kMetadataSize == 24200);
constexpr int64_t kChunkSize = 65536;

struct CopyMember {
  ElementType src, self;
};

std::optional<CopyMember> foreach_copy_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "multi_tensor_apply_kernel");
  if (!name || name->template_args.size() != 3) return std::nullopt;
  const auto& t = name->template_args;
  if (!t[0].ends_with("TensorListMetadata<2>")) return std::nullopt;
  auto op = template_args_of(t[2], "Copy");
  if (!t[2].starts_with("at::native::Copy<") || !op || op->size() != 2) return std::nullopt;
  auto dst = element_of_type((*op)[0]);
  auto src = element_of_type((*op)[1]);
  if (!dst || !src) return std::nullopt;
  if (auto unary = template_args_of(t[1], "UnaryOpFunctor")) {
    // self and src of the functor's scalar_t; Copy<opmath_t, opmath_t> between (an identity for a copy).
    if (unary->size() != 4 || (*unary)[1] != "2" || (*unary)[2] != "1" || (*unary)[3] != "1") return std::nullopt;
    auto scalar = element_of_type((*unary)[0]);
    if (!scalar || *dst != *src) return std::nullopt;
    return CopyMember{*scalar, *scalar};
  }
  if (auto copy = template_args_of(t[1], "CopyFunctor")) {
    if (copy->size() != 5 || (*copy)[0] != (*op)[0] || (*copy)[1] != (*op)[1]) return std::nullopt;
    // Conversions to or from Float8 types are not modelled (scalar_cast.h).
    if (dst->kind == Element::Opaque || src->kind == Element::Opaque) return std::nullopt;
    return CopyMember{*src, *dst};
  }
  return std::nullopt;
}

int param_sizes(const char* mangled, size_t* sizes, unsigned max_count) {
  if (!foreach_copy_member(mangled)) return SIMCUDA_NOT_MODELLED;
  if (max_count < 3) return -1;
  sizes[0] = kMetadataSize;
  sizes[1] = 1;  // the functor: an empty struct
  sizes[2] = 1;  // Copy<...>: an empty struct
  return 3;
}


void foreach_copy(void** args, dim3 grid, dim3) {
  auto member = running_member<CopyMember, foreach_copy_member>();
  if (!member) return;
  const unsigned char* tl = arg_bytes(args, 0);
  for (unsigned b = 0; b < grid.x && b < kMaxBlocks; ++b) {
    int tensor = field<uint16_t>(tl, kBlockToTensor + 2 * size_t{b});
    int64_t chunk = field<int32_t>(tl, kBlockToChunk + 4 * size_t{b});
    if (tensor >= kMaxTensors) return;
    const auto* src = field<const unsigned char*>(tl, kAddresses + 8 * static_cast<size_t>(tensor));
    auto* self = field<unsigned char*>(tl, kAddresses + 8 * static_cast<size_t>(kMaxTensors + tensor));
    int64_t n = field<int64_t>(tl, kNumel + 8 * static_cast<size_t>(tensor)) - chunk * kChunkSize;
    for (int64_t i = 0; i < n && i < kChunkSize; ++i) {
      int64_t element = chunk * kChunkSize + i;
      if (!cast_element(member->src, src + element * static_cast<int64_t>(member->src.size), member->self,
                        self + element * static_cast<int64_t>(member->self.size)))
        return;
    }
  }
}

const bool registered = [] {
  simcuda_register_kernel_family_with_params("at::native::multi_tensor_apply_kernel", foreach_copy, param_sizes);
  return true;
}();

}  // namespace

// For the tests: the parameter sizes of a multi_tensor_apply_kernel this file models, SIMCUDA_NOT_MODELLED otherwise.
extern "C" int simaten_foreach_copy_param_sizes(const char* mangled, size_t* sizes, unsigned max_count) {
  return param_sizes(mangled, sizes, max_count);
}

}  // namespace simaten
