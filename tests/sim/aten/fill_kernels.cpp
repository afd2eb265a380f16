// aten/src/ATen/native/cuda/Fill.cu: fill_ (torch.ones_like, torch.full, x.fill_(v), and the ones autograd starts a
// backward with) runs gpu_kernel(iter, FillFunctor<scalar_t>(value)): an output and no input, every element set to
// the functor's value. (zero_ of a contiguous tensor is a cudaMemsetAsync, which the simulator runs already.)
//
// Launches (CUDALoops.cuh; parameter sizes from torch 2.15's cubins, cubin_facts.py FillFunctor):
//   vectorized_elementwise_kernel<vec, FillFunctor<T>, std::array<char*, 1>, false>(int N, FillFunctor<T>, data)
//     sizes 4, sizeof(T), 8: the contiguous case, the one torch's own fills take; element i at data[0] + i * sizeof(T).
//   unrolled_elementwise_kernel<FillFunctor<T>, std::array<char*, 1>, 4, TrivialOffsetCalculator<0>,
//       TrivialOffsetCalculator<1>, LoadWithoutCast, StoreWithoutCast>(N, functor, data, ic, oc, loader, storer)
//     the same for an output not aligned to two elements.
// FillFunctor<T> holds one T, the value converted on the host: the device copies its bytes into every element.
//
// Not modelled (no-ops): fills of non-contiguous outputs (elementwise_kernel over an OffsetCalculator<1>), the
// casting variants (LoadWithCast/StoreWithCast: a functor type other than the output's), and the sm_10.7-only
// vectorized_elementwise_kernel<8, ..., true>.
#include <cstring>
#include <optional>
#include <string>

#include "aten_device.h"
#include "running_member.h"
#include "scalar_cast.h"

namespace simaten {
namespace {

enum class Launch { Vectorized, Unrolled };

struct FillMember {
  Launch launch;
  ElementType type;
};

// "at::native::FillFunctor<float>" -> float's element type; nullopt for any other functor.
std::optional<ElementType> fill_functor(const std::string& functor) {
  auto args = template_args_of(functor, "FillFunctor");
  if (!functor.starts_with("at::native::FillFunctor<") || !args || args->size() != 1) return std::nullopt;
  return element_of_type((*args)[0]);
}

std::optional<FillMember> vectorized_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "vectorized_elementwise_kernel");
  if (!name || name->template_args.size() != 4) return std::nullopt;
  const auto& t = name->template_args;
  if (t[2] != "std::array<char*, 1ul>" || t[3] != "false") return std::nullopt;
  auto type = fill_functor(t[1]);
  if (!type) return std::nullopt;
  return FillMember{Launch::Vectorized, *type};
}

std::optional<FillMember> unrolled_member(const char* mangled) {
  auto name = parse_kernel_name(mangled, "unrolled_elementwise_kernel");
  if (!name || name->template_args.size() != 7) return std::nullopt;
  const auto& t = name->template_args;
  if (t[1] != "std::array<char*, 1ul>" || t[2] != "4" || t[5] != "at::native::memory::LoadWithoutCast" ||
      t[6] != "at::native::memory::StoreWithoutCast")
    return std::nullopt;
  auto type = fill_functor(t[0]);
  if (!type) return std::nullopt;
  return FillMember{Launch::Unrolled, *type};
}

using MemberOf = std::optional<FillMember> (*)(const char*);

template <MemberOf member_of>
int param_sizes(const char* mangled, size_t* sizes, unsigned max_count) {
  auto member = member_of(mangled);
  if (!member) return SIMCUDA_NOT_MODELLED;
  size_t value = member->type.size;
  // The offset calculators are empty structs, the loader and storer too: one byte each.
  const size_t vectorized[] = {sizeof(int), value, 8};
  const size_t unrolled[] = {sizeof(int), value, 8, 1, 1, 1, 1};
  const size_t* table = member->launch == Launch::Vectorized ? vectorized : unrolled;
  unsigned count = member->launch == Launch::Vectorized ? 3 : 7;
  if (count > max_count) return -1;
  std::memcpy(sizes, table, count * sizeof(size_t));
  return static_cast<int>(count);
}

template <MemberOf member_of>
void fill_body(void** args, dim3, dim3) {
  auto member = running_member<FillMember, member_of>();
  if (!member) return;
  int n = arg<int>(args, 0);
  const unsigned char* value = arg_bytes(args, 1);
  auto* out = field<unsigned char*>(arg_bytes(args, 2), 0);
  size_t size = member->type.size;
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * static_cast<int64_t>(size), value, size);
}

const bool registered = [] {
  simcuda_register_kernel_family_with_params("at::native::vectorized_elementwise_kernel",
                                             fill_body<vectorized_member>, param_sizes<vectorized_member>);
  simcuda_register_kernel_family_with_params("at::native::unrolled_elementwise_kernel", fill_body<unrolled_member>,
                                             param_sizes<unrolled_member>);
  return true;
}();

}  // namespace
}  // namespace simaten
