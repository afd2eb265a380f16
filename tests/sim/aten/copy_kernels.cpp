// aten/src/ATen/native/cuda/Copy.cu: the device-to-device copies of copy_ (.contiguous(), .to(dtype), x.copy_(y))
// that are not a plain cudaMemcpy. copy_device_to_device memcpys same-dtype copies that TensorIterator finds
// contiguous; anything else runs direct_copy_kernel_cuda, which launches gpu_kernel over a TensorIterator (out, in)
// with one of these lambdas:
//   - converting_copy_kernel_cuda<SrcT, DstT>: gpu_kernel_nocast with [] (SrcT v) { return static_cast<DstT>(v); },
//     for float -> Half/BFloat16, Half/BFloat16 -> float, int -> long, bool -> long, bool -> double;
//   - otherwise, per output dtype T, [] (T x) { return x; }, under gpu_kernel: without casting when the input has
//     dtype T too (a strided or expanded copy), with dynamic casting (c10::fetch_and_cast from the input's dtype, then
//     c10::cast_and_store to the output's) when it does not (e.g. long -> int).
// These are the members of CUDALoops.cuh's shared elementwise kernels that this file models; every other member of
// those families (every other elementwise op) stays a no-op: the sizer answers SIMCUDA_NOT_MODELLED for it.
//
// Launches (CUDALoops.cuh; parameter sizes from torch 2.15's cubins, cubin_facts.py direct_copy_kernel_cuda
// converting_copy_kernel_cuda, all 304 instances):
//   vectorized_elementwise_kernel<vec, lambda, std::array<char*, 2>, false>(int N, lambda, data)    4, 1, 16
//     contiguous, no casting: element i of the input at data[1] + i * sizeof(in), of the output at data[0] + ...
//   unrolled_elementwise_kernel<lambda, array, 4, TrivialOffsetCalculator<1> x2, LoadWithoutCast,
//       StoreWithoutCast>(N, lambda, data, ic, oc, loader, storer)                                 4, 1, 16, 1, 1, 1, 1
//     the same, for operands not aligned to two elements.
//   unrolled_elementwise_kernel<..., LoadWithCast<1>, StoreWithCast<1>>(...)                       4, 1, 16, 1, 1, 8, 8
//     contiguous, dynamic casting (gpu_kernel_impl): MemoryAccess.cuh's LoadWithCast<1> {std::array<ScalarType, 1>
//     dtypes @0; std::array<uint32_t, 1> element_sizes @4} and StoreWithCast<1> {dtype @0; element_size @4}: element
//     i of the input at data[1] + i * element_sizes[0], converted from dtypes[0] to the lambda's type, the result
//     converted to the storer's dtype at data[0] + i * element_size.
//   elementwise_kernel<128, vt, gpu_kernel_impl_nocast<lambda>(...)::{lambda(int)#1}>(int N, closure)      4, 536
//     non-contiguous, no casting; vt 2 for 4- and 8-byte results, 4 for smaller ones. The closure: OffsetCalculator<2>
//     @0 (504 bytes: byte offsets of out and in), std::array<char*, 2> data @504, then the (empty) lambda and 16
//     bytes the device never reads.
//   elementwise_kernel<128, 4, gpu_kernel_impl<lambda>(...)::{lambda(int)#1}>(int N, closure)               4, 536
//     non-contiguous, dynamic casting: the same closure with the (empty) lambda @520 and std::array<ScalarType, 2>
//     dtypes (out, in) @521, the captures in the order the lambda first uses them (offset_calc, data, f, dtypes), as
//     torch's own launches on the simulator show (int32_out.copy_(long_in.t()): bytes 520-522 are 00 03 04).
// Every element is copied once; a copy never asserts, so which thread copies which element does not matter.
//
// Not modelled (no-ops): the 128-byte-per-thread vectorized_elementwise_kernel<8, ..., true> (sm_10.7 only, see
// binary_cross_entropy.cpp), conversions to or from Float8 types (float8_copy_kernel_cuda, converting_copy_kernel_cuda
// to Float8_*: their rounding and saturation are not written here), and neg/conj copies (neg_kernel_cuda,
// conj_kernel_cuda: other lambdas).
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "aten_device.h"
#include "running_member.h"
#include "scalar_cast.h"

namespace simaten {
namespace {

enum class Launch { Vectorized, Unrolled, UnrolledCast, Legacy, LegacyCast };

struct CopyMember {
  Launch launch;
  ElementType in, out;  // the lambda's argument and result types
};

constexpr size_t kClosureData = 504;    // elementwise_kernel's closure: std::array<char*, 2> data
constexpr size_t kClosureDtypes = 521;  // gpu_kernel_impl's closure: std::array<ScalarType, 2> dtypes
constexpr size_t kClosureSize = 536;

// The lambda's argument type: "...::{lambda(float)#1}" -> "float".
std::optional<std::string> lambda_argument(const std::string& lambda) {
  size_t open = lambda.rfind("{lambda(");
  if (open == std::string::npos || !lambda.ends_with(")#1}")) return std::nullopt;
  open += 8;
  return lambda.substr(open, lambda.size() - 4 - open);
}

// The copy lambdas of Copy.cu: (argument, result) types, or nullopt for any other functor.
std::optional<std::pair<ElementType, ElementType>> copy_lambda(const std::string& lambda) {
  auto argument = lambda_argument(lambda);
  if (!argument) return std::nullopt;
  auto in = element_of_type(*argument);
  if (!in) return std::nullopt;
  if (lambda.starts_with("at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::")) return {{*in, *in}};
  if (lambda.starts_with("at::native::converting_copy_kernel_cuda<")) {
    auto args = template_args_of(lambda, "converting_copy_kernel_cuda");
    if (!args || args->size() != 2 || (*args)[0] != *argument) return std::nullopt;
    auto out = element_of_type((*args)[1]);
    // Float8 results round and saturate their own way (c10/util/Float8_*.h): not modelled.
    if (!out || out->kind == Element::Opaque) return std::nullopt;
    return {{*in, *out}};
  }
  return std::nullopt;
}

std::optional<CopyMember> vectorized_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "vectorized_elementwise_kernel");
  if (!name || name->template_args.size() != 4) return std::nullopt;
  const auto& t = name->template_args;
  if (t[2] != "std::array<char*, 2ul>" || t[3] != "false") return std::nullopt;
  auto types = copy_lambda(t[1]);
  if (!types) return std::nullopt;
  return CopyMember{Launch::Vectorized, types->first, types->second};
}

std::optional<CopyMember> unrolled_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "unrolled_elementwise_kernel");
  if (!name || name->template_args.size() != 7) return std::nullopt;
  const auto& t = name->template_args;
  if (t[1] != "std::array<char*, 2ul>" || t[2] != "4" || !t[3].ends_with("TrivialOffsetCalculator<1, unsigned int>") ||
      !t[4].ends_with("TrivialOffsetCalculator<1, unsigned int>"))
    return std::nullopt;
  auto types = copy_lambda(t[0]);
  if (!types) return std::nullopt;
  if (t[5] == "at::native::memory::LoadWithoutCast" && t[6] == "at::native::memory::StoreWithoutCast")
    return CopyMember{Launch::Unrolled, types->first, types->second};
  if (t[5] == "at::native::memory::LoadWithCast<1>" && t[6] == "at::native::memory::StoreWithCast<1>")
    return CopyMember{Launch::UnrolledCast, types->first, types->second};
  return std::nullopt;
}

std::optional<CopyMember> legacy_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "elementwise_kernel");
  if (!name || name->template_args.size() != 3 || name->template_args[0] != "128") return std::nullopt;
  const std::string& closure = name->template_args[2];
  if (!closure.ends_with("::{lambda(int)#1}")) return std::nullopt;
  bool nocast = closure.starts_with("at::native::gpu_kernel_impl_nocast<");
  if (!nocast && !closure.starts_with("at::native::gpu_kernel_impl<")) return std::nullopt;
  auto args = template_args_of(closure, nocast ? "gpu_kernel_impl_nocast" : "gpu_kernel_impl");
  if (!args || args->size() != 1) return std::nullopt;
  auto types = copy_lambda((*args)[0]);
  if (!types) return std::nullopt;
  return CopyMember{nocast ? Launch::Legacy : Launch::LegacyCast, types->first, types->second};
}

using MemberOf = std::optional<CopyMember> (*)(const char*);

template <MemberOf member_of>
int param_sizes(const char* mangled, size_t* sizes, unsigned max_count) {
  auto member = member_of(mangled);
  if (!member) return SIMCUDA_NOT_MODELLED;
  static constexpr size_t kVectorized[] = {sizeof(int), 1, 16};
  static constexpr size_t kUnrolled[] = {sizeof(int), 1, 16, 1, 1, 1, 1};
  static constexpr size_t kUnrolledCast[] = {sizeof(int), 1, 16, 1, 1, 8, 8};
  static constexpr size_t kLegacy[] = {sizeof(int), kClosureSize};
  auto copy = [&](const auto& table) {
    unsigned count = sizeof table / sizeof table[0];
    if (count > max_count) return -1;
    std::memcpy(sizes, table, sizeof table);
    return static_cast<int>(count);
  };
  switch (member->launch) {
    case Launch::Vectorized: return copy(kVectorized);
    case Launch::Unrolled: return copy(kUnrolled);
    case Launch::UnrolledCast: return copy(kUnrolledCast);
    case Launch::Legacy:
    case Launch::LegacyCast: return copy(kLegacy);
  }
  return -1;
}

template <MemberOf member_of>
void copy_body(void** args, dim3, dim3) {
  auto member = running_member<CopyMember, member_of>();
  if (!member) return;
  int n = arg<int>(args, 0);
  const ElementType lambda_in = member->in, lambda_out = member->out;

  // Where element i is and which types it converts through: the input's dtype -> the lambda's argument (the lambda:
  // identity or static_cast) -> the output's dtype.
  unsigned char* out_base = nullptr;
  const unsigned char* in_base = nullptr;
  ElementType in_type = lambda_in, out_type = lambda_out;
  size_t in_stride = lambda_in.size, out_stride = lambda_out.size;
  std::optional<OffsetCalculator> offsets;
  switch (member->launch) {
    case Launch::Vectorized:
    case Launch::Unrolled:
    case Launch::UnrolledCast:
      out_base = field<unsigned char*>(arg_bytes(args, 2), 0);
      in_base = field<unsigned char*>(arg_bytes(args, 2), 8);
      break;
    case Launch::Legacy:
    case Launch::LegacyCast:
      offsets = read_offset_calculator(arg_bytes(args, 1), 2);
      if (!offsets) return;
      out_base = field<unsigned char*>(arg_bytes(args, 1), kClosureData);
      in_base = field<unsigned char*>(arg_bytes(args, 1), kClosureData + 8);
      break;
  }
  if (member->launch == Launch::UnrolledCast) {
    auto loaded = element_of_scalar_type(field<int8_t>(arg_bytes(args, 5), 0));
    auto stored = element_of_scalar_type(field<int8_t>(arg_bytes(args, 6), 0));
    if (!loaded || !stored) return;  // quantized dtypes: cast_and_store has no case for them
    in_type = *loaded;
    out_type = *stored;
    in_stride = field<uint32_t>(arg_bytes(args, 5), 4);
    out_stride = field<uint32_t>(arg_bytes(args, 6), 4);
  } else if (member->launch == Launch::LegacyCast) {
    auto stored = element_of_scalar_type(field<int8_t>(arg_bytes(args, 1), kClosureDtypes));
    auto loaded = element_of_scalar_type(field<int8_t>(arg_bytes(args, 1), kClosureDtypes + 1));
    if (!loaded || !stored) return;
    in_type = *loaded;
    out_type = *stored;
  }

  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* src;
    unsigned char* dst;
    if (offsets) {
      uint32_t off[2];
      offsets->get(static_cast<uint32_t>(i), off);
      dst = out_base + off[0];
      src = in_base + off[1];
    } else {
      dst = out_base + i * static_cast<int64_t>(out_stride);
      src = in_base + i * static_cast<int64_t>(in_stride);
    }
    alignas(16) unsigned char argument[16], result[16];
    if (!cast_element(in_type, src, lambda_in, argument)) return;
    if (!cast_element(lambda_in, argument, lambda_out, result)) return;
    if (!cast_element(lambda_out, result, out_type, dst)) return;
  }
}

const bool registered = [] {
  simcuda_register_kernel_family_with_params("at::native::vectorized_elementwise_kernel",
                                             copy_body<vectorized_member>, param_sizes<vectorized_member>);
  simcuda_register_kernel_family_with_params("at::native::unrolled_elementwise_kernel", copy_body<unrolled_member>,
                                             param_sizes<unrolled_member>);
  simcuda_register_kernel_family_with_params("at::native::elementwise_kernel", copy_body<legacy_member>,
                                             param_sizes<legacy_member>);
  return true;
}();

}  // namespace

// For the tests: the parameter sizes this file gives a kernel of the three families, SIMCUDA_NOT_MODELLED for one it
// does not model.
extern "C" int simaten_copy_param_sizes(const char* mangled, size_t* sizes, unsigned max_count) {
  for (auto sizer : {&param_sizes<vectorized_member>, &param_sizes<unrolled_member>, &param_sizes<legacy_member>})
    if (int count = sizer(mangled, sizes, max_count); count != SIMCUDA_NOT_MODELLED) return count;
  return SIMCUDA_NOT_MODELLED;
}

}  // namespace simaten
