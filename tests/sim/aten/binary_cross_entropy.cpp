// aten/src/ATen/native/cuda/Loss.cu: binary_cross_entropy's forward. binary_cross_entropy_out_cuda runs gpu_kernel
// over a TensorIterator (out = loss, inputs: input, target) with a [] GPU_LAMBDA (scalar_t input_val, scalar_t
// target_val) -> scalar_t that asserts both are in [0, 1] and returns
//   (target - 1) * max(log1p(-input), -100) - target * max(log(input), -100),
// every operation in scalar_t (float, double, c10::Half, c10::BFloat16). The weight multiply and the mean/sum that
// follow are other kernels (no-ops here).
//
// The asserts, as torch 2.15's cubins pass them to __assertfail (cubin_facts.py ... 29binary_cross_entropy_out_cuda):
// Loss.cu line 89 `input_val >= zero && input_val <= one` and line 90 `target_val >= zero && target_val <= one`,
// function "operator()" (2.8's and 2.4's lines: wheel_facts.cpp). A NaN fails them (the comparisons are false).
//
// gpu_kernel launches the lambda as one of these (cuda_loops.h says which thread computes which element):
//   vectorized_elementwise_kernel<vec_size, lambda, std::array<char*, 3>, false>(int N, lambda f, array data)
//     contiguous operands: vec_size = min(16 / sizeof(scalar_t), what the pointers' alignment allows); 8 elements
//     per thread. Parameters (cubin): 4, 1 (the empty lambda), 24 bytes.
//   unrolled_elementwise_kernel<lambda, array, 4, TrivialOffsetCalculator<2>, TrivialOffsetCalculator<1>,
//       LoadWithoutCast, StoreWithoutCast>(int N, f, data, ic, oc, loader, storer)
//     contiguous but misaligned (vec_size 1). Parameters: 4, 1, 24, 1, 1, 1, 1 bytes (all but data empty structs).
//   elementwise_kernel<128, vt, gpu_kernel_impl_nocast<lambda>(...)::{lambda(int)#1}>(int N, closure)
//     non-contiguous operands; vt 2 for 4- and 8-byte scalar_t, 4 for 2-byte ones. The closure (648 bytes in the
//     cubins): OffsetCalculator<3, uint32_t> offset_calc @0 (604 bytes, byte strides of out, input, target),
//     std::array<char*, 3> data @608, and 16 bytes @632 that the device never reads (the lambda is empty; on the
//     simulator torch 2.15 leaves its host-side __nv_hdl_wrapper_t there: host pointers). The data pointers at 608,
//     616 and 624 were read from torch's own launches of it on the simulator.
//
// Not registered (they stay no-ops), of the 32 forward instances in the wheel:
//   - vectorized_elementwise_kernel<8, ..., true> (4): the 128-byte-per-thread variant, launched only on sm_10.7
//     (launch_vectorized_kernel's use_sm107_optimizations); in the sm_90 cubin its body is only the assert
//     "Fatal! ... supports only sm_10x" (CUDALoops.cuh:232). The simulated GPU is sm_90: torch never launches it.
//   - the dynamic-casting instances (4 unrolled with LoadWithCast<2>/StoreWithCast<1>, 4 elementwise_kernel<128, 4,
//     gpu_kernel_impl<...>>): gpu_kernel_impl takes them only when an operand's dtype differs from scalar_t, and BCE's
//     TensorIteratorConfig keeps check_all_same_dtype (its default), so they are unreachable from binary_cross_entropy.
// The kernel family (every elementwise op of torch) is not registered: only these exact names are, as their
// parameters are sized for certain.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>

#include "aten_device.h"
#include "cuda_loops.h"

namespace simaten {
namespace {

constexpr const char* kLossCu = SIMATEN_CUDA_SRC "Loss.cu";
const AssertSite kInputOutOfRange{kLossCu, 89, "operator()", "input_val >= zero && input_val <= one"};
const AssertSite kTargetOutOfRange{kLossCu, 90, "operator()", "target_val >= zero && target_val <= one"};

enum class Launch { Vectorized, Unrolled, Elementwise };

struct Instance {
  Floating type;
  Launch launch;
  int per_thread;  // vec_size (vectorized) or vt (elementwise_kernel); unused for unrolled
};

constexpr size_t kClosureData = 608;  // elementwise_kernel's closure: std::array<char*, 3> data
constexpr size_t kClosureSize = 648;

std::unordered_map<std::string, Instance>& instances() {
  static auto* map = new std::unordered_map<std::string, Instance>;
  return *map;
}

size_t scalar_size(Floating type) {
  return type == Floating::Double ? 8 : type == Floating::Float ? 4 : 2;
}

struct Outcome {
  const AssertSite* failed = nullptr;
  double loss = 0;
};

// The lambda on one element. Half/BFloat16: c10's operators compute in float and round to scalar_t; std::log and
// std::log1p of them compute in float. The device's logf/log1pf/log/log1p may differ from the host's in the last
// place.
Outcome bce(Floating type, double input, double target) {
  if (!(input >= 0 && input <= 1)) return {&kInputOutOfRange};
  if (!(target >= 0 && target <= 1)) return {&kTargetOutOfRange};
  auto r = [type](double value) { return round_to(type, value); };
  bool wide = type == Floating::Double;
  double log_input = r(wide ? std::log(input) : std::log(static_cast<float>(input)));
  double log_1_minus_input = r(wide ? std::log1p(-input) : std::log1p(-static_cast<float>(input)));
  log_input = std::max(log_input, -100.0);  // std::max(log_input_val, neg_100)
  log_1_minus_input = std::max(log_1_minus_input, -100.0);
  return {nullptr, r(r(r(target - 1) * log_1_minus_input) - r(target * log_input))};
}

void bce_forward(void** args, dim3 grid, dim3 block) {
  const char* name = simcuda_running_kernel_name();
  if (name == nullptr) return;
  auto it = instances().find(name);
  if (it == instances().end()) return;
  const Instance& instance = it->second;
  int n = arg<int>(args, 0);
  size_t size = scalar_size(instance.type);

  // Operands 0 out, 1 input, 2 target: linear element indices (TrivialOffsetCalculator), or byte offsets from the
  // closure's OffsetCalculator.
  std::array<unsigned char*, 3> data{};
  std::optional<OffsetCalculator> offset_calc;
  const unsigned char* array = instance.launch == Launch::Elementwise ? arg_bytes(args, 1) + kClosureData
                                                                      : arg_bytes(args, 2);
  for (int a = 0; a < 3; ++a) data[a] = field<unsigned char*>(array, 8 * static_cast<size_t>(a));
  if (instance.launch == Launch::Elementwise) {
    offset_calc = read_offset_calculator(arg_bytes(args, 1), 3);
    if (!offset_calc) return;
  }
  auto address = [&](int64_t element, int operand) {
    if (!offset_calc) return data[operand] + element * static_cast<int64_t>(size);
    uint32_t offsets[3];
    offset_calc->get(static_cast<uint32_t>(element), offsets);
    return data[operand] + offsets[operand];
  };
  auto outcome = [&](int64_t element) {
    return bce(instance.type, load(instance.type, address(element, 1), 0), load(instance.type, address(element, 2), 0));
  };
  // Thread t of block b visits its elements in the order it calls the lambda. Only blockIdx.x enters the kernels'
  // index math; torch launches them one-dimensional.
  auto each_thread = [&](auto&& visit) {
    for (uint64_t b = 0; b < grid.x; ++b) {
      for (uint64_t t = 0; t < block.x; ++t) {
        auto per_element = [&](int64_t element) { return visit(b, t, element); };
        switch (instance.launch) {
          case Launch::Vectorized:
            cuda_loops::vectorized_thread(n, instance.per_thread, cuda_loops::elems_per_thread(3 * size), b, t,
                                          per_element);
            break;
          case Launch::Unrolled:
            cuda_loops::unroll_thread(n, cuda_loops::kUnrolledThreadWork, b, t, per_element);
            break;
          case Launch::Elementwise:
            cuda_loops::legacy_thread(n, static_cast<int>(cuda_loops::kNumThreads), instance.per_thread, b, t,
                                      per_element);
            break;
        }
      }
    }
  };

  FailedThreads failed(grid, block);
  each_thread([&](uint64_t b, uint64_t t, int64_t element) {
    Outcome o = outcome(element);
    if (o.failed == nullptr) return true;
    failed.fail(*o.failed, dim3{static_cast<unsigned>(b), 0, 0}, dim3{static_cast<unsigned>(t), 0, 0});
    return false;  // the thread traps at its first failing element
  });
  if (failed.any()) return;
  each_thread([&](uint64_t, uint64_t, int64_t element) {
    store(instance.type, address(element, 0), 0, outcome(element).loss);
    return true;
  });
}

// The mangled names of the instances, per scalar_t: the dispatch lambda's number (AT_DISPATCH_FLOATING_TYPES_AND2's
// lambdas #1 double, #2 float, #3 Half, #4 BFloat16: "UlvE_", "UlvE0_"...) and the lambda's parameter types, whose
// substitution index differs between the kernels' names. As the wheels' cubins name them: torch 2.15's
// vectorized_elementwise_kernel has a fourth template argument (bool, false here) that 2.8's lacks; 2.4's passes
// at::detail::Array<char*, 3> where the later ones pass std::array<char*, 3>, which moves the unrolled kernel's
// substitutions, and has no vec_size 8. The parameters are the same in the three (the cubins' tables).
struct TypeNames {
  Floating type;
  const char* dispatch;      // "" (lambda #1), "0", "1", "2"
  const char* params;        // in vectorized/unrolled names
  const char* params_nocast; // in elementwise_kernel names
  const char* calc_sub;      // unrolled: substitution for TrivialOffsetCalculator (2.8, 2.15)
  const char* memory_sub;    // unrolled: substitution for at::native::memory (2.8, 2.15)
  const char* calc_sub_2_4;  // the same in 2.4's names
  const char* memory_sub_2_4;
  int vt;                    // elementwise_kernel's unroll_factor: sizeof(scalar_t) >= 4 ? 2 : 4
};

constexpr TypeNames kTypes[] = {
    {Floating::Double, "", "dd", "dd", "SG_", "NSJ_", "SH_", "NSK_", 2},
    {Floating::Float, "0", "ff", "ff", "SG_", "NSJ_", "SH_", "NSK_", 2},
    {Floating::Half, "1", "N3c104HalfESD_", "N3c104HalfESE_", "SI_", "NSL_", "SJ_", "NSM_", 4},
    {Floating::BFloat16, "2", "N3c108BFloat16ESD_", "N3c108BFloat16ESE_", "SI_", "NSL_", "SJ_", "NSM_", 4},
};

const bool registered = [] {
  const std::string lambda_scope =
      "ZZZNS0_29binary_cross_entropy_out_cudaERKNS_6TensorES4_RKSt8optionalIS2_ElRS2_ENKUlvE_clEvENKUlvE";
  const std::string nocast_scope =
      "ZZZNS0_29binary_cross_entropy_out_cudaERKNS_6TensorES5_RKSt8optionalIS3_ElRS3_ENKUlvE_clEvENKUlvE";
  const std::string std_array = "St5arrayIPcLm3EE";
  const std::string detail_array = "NS_6detail5ArrayIPcLi3EEE";
  for (const TypeNames& t : kTypes) {
    std::string lambda = lambda_scope + t.dispatch + "_clEvEUl" + t.params + "E_";
    for (int vec : {2, 4, 8}) {
      std::string head = "_ZN2at6native29vectorized_elementwise_kernelILi" + std::to_string(vec) + "E" + lambda;
      instances()[head + std_array + "Lb0EEEviT0_T1_"] = {t.type, Launch::Vectorized, vec};  // 2.15
      instances()[head + std_array + "EEviT0_T1_"] = {t.type, Launch::Vectorized, vec};      // 2.8
      if (vec != 8) instances()[head + detail_array + "EEviT0_T1_"] = {t.type, Launch::Vectorized, vec};  // 2.4
    }
    instances()["_ZN2at6native27unrolled_elementwise_kernelI" + lambda + std_array +
                "Li4E23TrivialOffsetCalculatorILi2EjE" + t.calc_sub + "ILi1EjENS0_6memory15LoadWithoutCastE" +
                t.memory_sub + "16StoreWithoutCastEEEviT_T0_T2_T3_T4_T5_"] = {t.type, Launch::Unrolled, 0};
    instances()["_ZN2at6native27unrolled_elementwise_kernelI" + lambda + detail_array +
                "23TrivialOffsetCalculatorILi2EjE" + t.calc_sub_2_4 + "ILi1EjENS0_6memory15LoadWithoutCastE" +
                t.memory_sub_2_4 + "16StoreWithoutCastEEEviT_T0_T1_T2_T3_T4_"] = {t.type, Launch::Unrolled, 0};
    instances()["_ZN2at6native18elementwise_kernelILi128ELi" + std::to_string(t.vt) +
                "EZNS0_22gpu_kernel_impl_nocastI" + nocast_scope + t.dispatch + "_clEvEUl" + t.params_nocast +
                "E_EEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_"] = {t.type, Launch::Elementwise, t.vt};
  }
  const size_t vectorized[] = {sizeof(int), 1, 24};
  const size_t unrolled[] = {sizeof(int), 1, 24, 1, 1, 1, 1};
  const size_t elementwise[] = {sizeof(int), kClosureSize};
  for (const auto& [name, instance] : instances()) {
    switch (instance.launch) {
      case Launch::Vectorized:
        simcuda_register_kernel_with_params(nullptr, name.c_str(), bce_forward, 3, vectorized);
        break;
      case Launch::Unrolled:
        simcuda_register_kernel_with_params(nullptr, name.c_str(), bce_forward, 7, unrolled);
        break;
      case Launch::Elementwise:
        simcuda_register_kernel_with_params(nullptr, name.c_str(), bce_forward, 2, elementwise);
        break;
    }
  }
  return true;
}();

}  // namespace

// For the tests: the names this library registers, one per line (tests/torch/torch_test.py finds each in the wheel).
extern "C" const char* simaten_bce_forward_names() {
  static const std::string names = [] {
    std::string all;
    for (const auto& [name, instance] : instances()) all += name + "\n";
    return all;
  }();
  return names.c_str();
}

}  // namespace simaten
