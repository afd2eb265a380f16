// aten/src/ATen/native/cuda/IndexKernel.cu: advanced indexing, x[idx] (index) and x[idx] = v (index_put_ without
// accumulate), through gpu_index_kernel's lambda launched as index_elementwise_kernel<128, 4, ...>.
//
// template <int nt, int vt, typename func_t> __global__ void index_elementwise_kernel(const int64_t N, const func_t f)
//   idx = nt * vt * blockIdx.x + threadIdx.x, then vt steps of nt: f(idx) for idx < N.
// The lambda (IndexKernel.cu lines 102-119 of the 2.15 source):
//   offsets = offset_calc.get(idx); out_data = out_ptr + offsets[0]; in_data = in_ptr + offsets[1]; offset = 0;
//   for i < num_indices: index = *(int64_t*)(index_ptrs[i] + offsets[2]);
//     CUDA_KERNEL_ASSERT(-sizes[i] <= index && index < sizes[i] && "index out of bounds");   line 111
//     if (index < 0) index += sizes[i]; offset += index * strides[i];   (byte strides)
//   f(out_data, in_data, offset)
// with f of index_kernel_impl<OpaqueType<N>>: *(T*)out_data = *(T*)(in_data + offset), and of
// index_put_kernel_impl<OpaqueType<N>>: *(T*)(out_data + offset) = *(T*)in_data.
//
// The closure, captures in the order of the host stub's __nv_dl_wrapper_t arguments in torch 2.15
// (OffsetCalculator<3, unsigned int, false>, char* const, char* const, unsigned long const, std::array<char*, 25>,
// std::array<long, 25>, std::array<long, 25>, f): offset_calc @0 (604 bytes), out_ptr @608, in_ptr @616,
// num_indices @624, index_ptrs @632, sizes @832, strides @1032, f @1232 (an empty lambda); 1240 bytes, the size of
// parameter 1 of all ten instances in the cubins.
//
// index_elementwise_kernel is also the kernel of flip, index_copy, index_fill, take/put and quantized index_put, with
// other closures: rather than a family (which would have to size every one of them), the ten instances modelled here
// are registered by their exact names (2.8's are 2.15's; 2.4's lack gpu_index_kernel's bool parameter), and the
// others stay no-ops.
#include <string>
#include <unordered_map>

#include "aten_device.h"

namespace simaten {
namespace {

const AssertSite kIndex{SIMATEN_CUDA_SRC "IndexKernel.cu", 111, "operator()",
                        "-sizes[i] <= index && index < sizes[i] && \"index out of bounds\""};

constexpr int kNt = 128, kVt = 4;  // index_elementwise_kernel<launch_size_nd = 128, 4, ...>
constexpr size_t kOutPtr = 608, kInPtr = 616, kNumIndices = 624, kIndexPtrs = 632, kSizes = 832, kStrides = 1032;
constexpr size_t kClosureSize = 1240;
constexpr int kMaxDims = 25;

struct Instance {
  bool put;     // index_put_kernel_impl (else index_kernel_impl)
  size_t size;  // sizeof(OpaqueType<N>)
};

std::unordered_map<std::string, Instance>& instances() {
  static auto* map = new std::unordered_map<std::string, Instance>;
  return *map;
}

void index_elementwise(void** args, dim3 grid, dim3 block) {
  const char* name = simcuda_running_kernel_name();
  if (name == nullptr) return;
  auto it = instances().find(name);
  if (it == instances().end()) return;
  const Instance& instance = it->second;
  int64_t n = arg<int64_t>(args, 0);
  const unsigned char* f = arg_bytes(args, 1);
  auto offset_calc = read_offset_calculator(f, 3);
  uint64_t num_indices = field<uint64_t>(f, kNumIndices);
  if (!offset_calc || num_indices > kMaxDims) return;
  auto* out_ptr = field<unsigned char*>(f, kOutPtr);
  auto* in_ptr = field<unsigned char*>(f, kInPtr);
  const unsigned char* index_ptrs[kMaxDims];
  int64_t sizes[kMaxDims], strides[kMaxDims];
  for (uint64_t i = 0; i < num_indices; ++i) {
    index_ptrs[i] = field<const unsigned char*>(f, kIndexPtrs + 8 * i);
    sizes[i] = field<int64_t>(f, kSizes + 8 * i);
    strides[i] = field<int64_t>(f, kStrides + 8 * i);
  }

  // The byte offset of element idx in the indexed tensor; nullopt when an index fails the assert.
  uint32_t offsets[3];
  auto offset_of = [&](int64_t idx) -> std::optional<int64_t> {
    offset_calc->get(static_cast<uint32_t>(idx), offsets);
    int64_t offset = 0;
    for (uint64_t i = 0; i < num_indices; ++i) {
      int64_t index = field<int64_t>(index_ptrs[i] + offsets[2], 0);
      if (!(-sizes[i] <= index && index < sizes[i])) return std::nullopt;
      if (index < 0) index += sizes[i];
      offset += index * strides[i];
    }
    return offset;
  };

  FailedThreads failed(grid, block);
  unsigned nv = kNt * kVt;
  for (int64_t idx = 0; idx < n; ++idx) {
    if (!offset_of(idx)) {
      auto u = static_cast<uint64_t>(idx);
      failed.fail(kIndex, dim3{static_cast<unsigned>(u / nv), 0, 0}, dim3{static_cast<unsigned>(u % nv % kNt), 0, 0});
    }
  }
  if (failed.any()) return;
  for (int64_t idx = 0; idx < n; ++idx) {
    int64_t offset = *offset_of(idx);
    unsigned char* out_data = out_ptr + offsets[0];
    const unsigned char* in_data = in_ptr + offsets[1];
    if (instance.put)
      std::memcpy(out_data + offset, in_data, instance.size);
    else
      std::memcpy(out_data, in_data + offset, instance.size);
  }
}

const bool registered = [] {
  // index_elementwise_kernel<128, 4, gpu_index_kernel<index_kernel_impl<OpaqueType<N>>(...)::{lambda(char*, char
  // const*, long)#1}>(...)::{lambda(int)#1}>, and the same of index_put_kernel_impl<OpaqueType<N>>, N = 1..16.
  for (int n : {1, 2, 4, 8, 16}) {
    std::string size = std::to_string(n);
    std::string index =
        "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_17index_kernel_implINS0_"
        "10OpaqueTypeILi" +
        size + "EEEEEvRNS_18TensorIteratorBaseEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvS7_SA_SA_RKT_bEUliE_EEvlT1_";
    std::string put =
        "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_21index_put_kernel_implINS0_"
        "10OpaqueTypeILi" +
        size +
        "EEEEEvRNS_14TensorIteratorEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvRNS_18TensorIteratorBaseESA_SA_RKT_bEUliE_EEvlT1_";
    instances()[index] = {false, static_cast<size_t>(n)};
    instances()[put] = {true, static_cast<size_t>(n)};
    // torch 2.4's gpu_index_kernel has no trailing bool parameter (its cubins: the same 1240-byte closure).
    auto without_bool = [](std::string name) { return name.replace(name.find("RKT_bEUliE_"), 11, "RKT_EUliE_"); };
    instances()[without_bool(index)] = {false, static_cast<size_t>(n)};
    instances()[without_bool(put)] = {true, static_cast<size_t>(n)};
  }
  const size_t sizes[] = {sizeof(int64_t), kClosureSize};
  for (const auto& [name, instance] : instances())
    simcuda_register_kernel_with_params(nullptr, name.c_str(), index_elementwise, 2, sizes);
  return true;
}();

}  // namespace
}  // namespace simaten
