// libsimaten.so, the device code of PyTorch's ATen kernels for the simulator, driven as torch 2.15 drives it: the
// kernels are registered under their real mangled names (__cudaRegisterFunction, as torch's fatbinary constructors
// do) and launched through cudaLaunchKernel with the real parameter layouts; the library comes in through
// SIMCUDA_DEVICE_CODE at cuInit (meson sets it for this test).
//
// The names are those of torch-2.15.0+cu132's libtorch_cuda.so (PyPI, git d0f2af8b): `strings -n 20 libtorch_cuda.so
// | grep '^_Z'`. The struct layouts below are written from PyTorch's headers and checked against the sizes in that
// wheel's cubins (their .nv.info parameter tables), quoted at each static_assert. Expectations come from each case
// (what was planted), never from the output under test.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "simcuda.h"
#include "support/fresh_process.h"

extern "C" {
// What nvcc's host code calls; the toolkit headers declare them only for nvcc-generated code.
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun, const char* deviceName,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bDim, dim3* gDim, int* wSize);
}

namespace {

// ---- torch 2.15's kernel names ---------------------------------------------------------------------------------------

#define LOSS_NS "_ZN2at6native39_GLOBAL__N__6bd09d29_7_Loss_cu_5b0651e1"
#define NLL2D_NS "_ZN2at6native45_GLOBAL__N__b215459d_12_NLLLoss2d_cu_e9278b46"
#define INDEXING_NS "_ZN2at6native44_GLOBAL__N__b23ef953_11_Indexing_cu_89862edb"

// nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>, <double, double, long>, <float, float, unsigned char>,
// <c10::Half, float, long>
const char* kNll2dFloat = LOSS_NS "38nll_loss_forward_reduce_cuda_kernel_2dIfflEEvPT_S4_PKS3_PKT1_S6_bllll";
const char* kNll2dDouble = LOSS_NS "38nll_loss_forward_reduce_cuda_kernel_2dIddlEEvPT_S4_PKS3_PKT1_S6_bllll";
const char* kNll2dByte = LOSS_NS "38nll_loss_forward_reduce_cuda_kernel_2dIffhEEvPT_S4_PKS3_PKT1_S6_bllll";
const char* kNll2dHalf = LOSS_NS "38nll_loss_forward_reduce_cuda_kernel_2dIN3c104HalfEflEEvPT_S6_PKS5_PKT1_S8_bllll";
// nll_loss_forward_reduce_cuda_kernel_1d<float, long>
const char* kNll1dFloat = LOSS_NS "38nll_loss_forward_reduce_cuda_kernel_1dIflEEvPT_S4_PKS3_PKT0_S6_bll";
// nll_loss_forward_no_reduce_cuda_kernel<float, long>(long, GenericPackedTensorAccessor<...float, 2...>, long const*,
// float*, float const*, long, long)
const char* kNllNoReduceFloat =
    LOSS_NS "38nll_loss_forward_no_reduce_cuda_kernelIflEEvlN5torch10headeronly6detail27GenericPackedTensorAccessorINS5_"
            "14TensorAccessorIN3c108ArrayRefIlEET_Lm1ENS4_16DefaultPtrTraitsElEENS_6detail16IndexBoundsCheckILm2ElEESB_"
            "Lm2ESC_lEEPKT0_PSB_PKSB_ll";
// binary_cross_entropy_out_cuda's gpu_kernel lambda (Loss.cu) as the three kernels gpu_kernel launches it:
// vectorized_elementwise_kernel<4, {lambda(float, float)#1}, std::array<char*, 3>, false>, <2, double>, <8, c10::Half>
#define BCE_LAMBDA(dispatch, params)                                                                          \
  "ZZZNS0_29binary_cross_entropy_out_cudaERKNS_6TensorES4_RKSt8optionalIS2_ElRS2_ENKUlvE_clEvENKUlvE" dispatch \
  "_clEvEUl" params "E_"
const char* kBceVectorizedFloat =
    "_ZN2at6native29vectorized_elementwise_kernelILi4E" BCE_LAMBDA("0", "ff") "St5arrayIPcLm3EELb0EEEviT0_T1_";
const char* kBceVectorizedDouble =
    "_ZN2at6native29vectorized_elementwise_kernelILi2E" BCE_LAMBDA("", "dd") "St5arrayIPcLm3EELb0EEEviT0_T1_";
const char* kBceVectorizedHalf = "_ZN2at6native29vectorized_elementwise_kernelILi8E" BCE_LAMBDA(
    "1", "N3c104HalfESD_") "St5arrayIPcLm3EELb0EEEviT0_T1_";
// unrolled_elementwise_kernel<{lambda(float, float)#1}, std::array<char*, 3>, 4, TrivialOffsetCalculator<2>,
// TrivialOffsetCalculator<1>, LoadWithoutCast, StoreWithoutCast> (misaligned contiguous operands)
const char* kBceUnrolledFloat =
    "_ZN2at6native27unrolled_elementwise_kernelI" BCE_LAMBDA("0", "ff") "St5arrayIPcLm3EELi4E23TrivialOffsetCalculator"
    "ILi2EjESG_ILi1EjENS0_6memory15LoadWithoutCastENSJ_16StoreWithoutCastEEEviT_T0_T2_T3_T4_T5_";
// elementwise_kernel<128, 2, gpu_kernel_impl_nocast<{lambda(float, float)#1}>(...)::{lambda(int)#1}> (non-contiguous)
const char* kBceElementwiseFloat =
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_29binary_cross_entropy_out_cuda"
    "ERKNS_6TensorES5_RKSt8optionalIS3_ElRS3_ENKUlvE_clEvENKUlvE0_clEvEUlffE_EEvRNS_18TensorIteratorBaseERKT_EUliE_"
    "EEviT1_";
// nll_loss2d_forward_kernel<float, float, int>, nll_loss2d_forward_size_average_kernel<float>,
// nll_loss2d_forward_no_reduce_kernel<float>
const char* kNllLoss2dForward = NLL2D_NS "25nll_loss2d_forward_kernelIffiEEvPT_S4_PKS3_PKlS6_iiil";
const char* kNllLoss2dSizeAverage = NLL2D_NS "38nll_loss2d_forward_size_average_kernelIfEEvPT_PKS3_";
const char* kNllLoss2dNoReduce =
    NLL2D_NS "35nll_loss2d_forward_no_reduce_kernelIfEEvlN5torch10headeronly6detail27GenericPackedTensorAccessorINS5_"
             "14TensorAccessorIN3c108ArrayRefIlEET_Lm3ENS4_16DefaultPtrTraitsElEENS_6detail16IndexBoundsCheckILm4ElEESB_"
             "Lm4ESC_lEENS6_INS7_ISA_lLm2ESC_lEENSF_ILm3ElEElLm3ESC_lEENS6_INS7_ISA_SB_Lm2ESC_lEESJ_SB_Lm3ESC_lEEPKSB_l";
// indexSelectSmallIndex<float, long, unsigned int, 2, 2, -2> and <float, long, unsigned int, -1, -1, -1>
const char* kIndexSelect2d =
    INDEXING_NS "21indexSelectSmallIndexIfljLi2ELi2ELin2EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS5_IKS6_S7_EENS5_IKT0_"
                "S7_EEiiS7_l";
const char* kIndexSelectDynamic =
    INDEXING_NS "21indexSelectSmallIndexIfljLin1ELin1ELin1EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS5_IKS6_S7_EENS5_"
                "IKT0_S7_EEiiS7_l";
// vectorized_gather_kernel<16, long>
const char* kVectorizedGather = "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb";
// _scatter_gather_elementwise_kernel<128, 8, _cuda_scatter_gather_internal_kernel<false, OpaqueType<4>, long>::
// operator()<TensorAssign>(...)::{lambda(int)#1}>: gather of 4-byte elements, int64 index
const char* kGatherOpaque4 =
    "_ZN2at6native34_scatter_gather_elementwise_kernelILi128ELi8EZNS0_36_cuda_scatter_gather_internal_kernelILb0ENS0_"
    "10OpaqueTypeILi4EEElEclINS0_12TensorAssignEEEvRNS_14TensorIteratorElllRKT_EUliE_EEviT1_";
// ... <true, float, long>::operator()<ReduceAdd>: scatter_add_ on float
const char* kScatterAddFloat =
    "_ZN2at6native34_scatter_gather_elementwise_kernelILi128ELi8EZNS0_36_cuda_scatter_gather_internal_kernelILb1EflEclINS0_"
    "9ReduceAddEEEvRNS_14TensorIteratorElllRKT_EUliE_EEviT1_";
// _cuda_scatter_fill_internal_kernel<OpaqueType<4>, long>::operator()<TensorAssign>: scatter_(dim, index, value)
const char* kScatterFillOpaque4 =
    "_ZN2at6native34_scatter_gather_elementwise_kernelILi128ELi8EZNS0_34_cuda_scatter_fill_internal_kernelINS0_"
    "10OpaqueTypeILi4EEElEclINS0_12TensorAssignEEEvRNS_14TensorIteratorES4_lllRKT_EUliE_EEviT1_";
// ... fill with c10::complex<double> values (16-byte src_val)
const char* kScatterFillComplexDouble =
    "_ZN2at6native34_scatter_gather_elementwise_kernelILi128ELi8EZNS0_34_cuda_scatter_fill_internal_kernelIN3c107complexIdEE"
    "lEclINS0_9ReduceAddEEEvRNS_14TensorIteratorES5_lllRKT_EUliE_EEviT1_";

// index_elementwise_kernel<128, 4, gpu_index_kernel<index_kernel_impl<OpaqueType<4>>(...)::{lambda(char*, char const*,
// long)#1}>(...)::{lambda(int)#1}>: x[idx] on 4-byte elements; and the same of index_put_kernel_impl: x[idx] = v
const char* kIndexOpaque4 =
    "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_17index_kernel_implINS0_10OpaqueType"
    "ILi4EEEEEvRNS_18TensorIteratorBaseEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvS7_SA_SA_RKT_bEUliE_EEvlT1_";
const char* kIndexPutOpaque4 =
    "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_21index_put_kernel_implINS0_"
    "10OpaqueTypeILi4EEEEEvRNS_14TensorIteratorEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvRNS_18TensorIteratorBaseESA_SA_RKT_"
    "bEUliE_EEvlT1_";
// index_elementwise_kernel of flip_kernel_impl<OpaqueType<4>>: not modelled, stays a no-op
const char* kFlipOpaque4 =
    "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16flip_kernel_implINS0_10OpaqueTypeILi4EEEEEvRNS_"
    "14TensorIteratorEEUliE_EEvlT1_";

// sampleMultinomialOnce<float, float>, renormRowsL1<float>
#define MULTINOMIAL_NS "_ZN2at6native59_GLOBAL__N__d0eb2d0f_20_MultinomialKernel_cu_e5d96c45_56471"
const char* kMultinomialOnceFloat = MULTINOMIAL_NS "21sampleMultinomialOnceIffEEvPlliPKT_S6_ii";
const char* kRenormRowsFloat = MULTINOMIAL_NS "12renormRowsL1IfEEvPT_ll";

// Copy.cu's copy lambdas as gpu_kernel launches them. direct_copy_kernel_cuda's AT_DISPATCH_V2 lambda is
// {lambda()#3} ("UlvE1_"), its per-dtype lambdas {lambda()#N} ("UlvE<N-2>_"): #7 float, #4 long, #3 int.
#define DIRECT_COPY(dtype_lambda, type) \
  "ZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE" dtype_lambda "_clEvEUl" type "E_"
// elementwise_kernel<128, 2, gpu_kernel_impl_nocast<direct_copy ... {lambda(float)#1}>(...)::{lambda(int)#1}>:
// x.t().contiguous() of a float tensor; the same for long (an expanded tensor's .contiguous())
#define NOCAST_ELEMENTWISE "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastI"
const char* kCopyStridedFloat = NOCAST_ELEMENTWISE DIRECT_COPY("5", "f") "EEvS4_RKT_EUliE_EEviT1_";
const char* kCopyStridedLong = NOCAST_ELEMENTWISE DIRECT_COPY("2", "l") "EEvS4_RKT_EUliE_EEviT1_";
// vectorized_elementwise_kernel<8, converting_copy_kernel_cuda<float, c10::Half>(...)::{lambda(float)#1},
// std::array<char*, 2>, false>: x.half()
const char* kConvertFloatToHalf =
    "_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_27converting_copy_kernel_cudaIfN3c104HalfEEEvRNS_18Tensor"
    "IteratorBaseEEUlfE_St5arrayIPcLm2EELb0EEEviT0_T1_";
// unrolled_elementwise_kernel<direct_copy ... {lambda(int)#1}, std::array<char*, 2>, 4, TrivialOffsetCalculator<1>,
// TrivialOffsetCalculator<1>, LoadWithCast<1>, StoreWithCast<1>>: x.to(torch.int32) of a contiguous long tensor
const char* kCastCopyToInt =
    "_ZN2at6native27unrolled_elementwise_kernelI" DIRECT_COPY("1", "i") "St5arrayIPcLm2EELi4E23TrivialOffsetCalculator"
    "ILi1EjESB_NS0_6memory12LoadWithCastILi1EEENSC_13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_";
// elementwise_kernel<128, 4, gpu_kernel_impl<direct_copy ... {lambda(int)#1}>(...)::{lambda(int)#1}>:
// int_out.copy_(long_x.t())
const char* kCastCopyStridedToInt = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implI" DIRECT_COPY(
    "1", "i") "EEvS4_RKT_EUliE_EEviT1_";
// vectorized_elementwise_kernel<4, AbsFunctor<float>, std::array<char*, 2>, false>: torch.abs, not a copy
const char* kAbsFloat =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EELb0EEEviT0_T1_";
// multi_tensor_apply_kernel<TensorListMetadata<2>, UnaryOpFunctor<long, 2, 1, 1>, Copy<long, long>> and
// <..., CopyFunctor<float, long, 2, 1, 1>, Copy<float, long>> (torch._foreach_copy_); a foreach op that is no copy:
// <TensorListMetadata<2>, BinaryOpScalarFunctor<float, 2, 1, 1>, maximum<float>, float> (torch._foreach_clamp_min)
#define FOREACH_NS "_ZN2at6native55_GLOBAL__N__f86471ef_22_ForeachBinaryOpList_cu_a911ec4325"
const char* kForeachCopyLong =
    FOREACH_NS "multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_14UnaryOpFunctorIlLi2ELi1ELi1EEEJNS0_"
               "4CopyIllEEEEEvT_T0_DpT1_";
const char* kForeachCopyLongToFloat =
    FOREACH_NS "multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_11CopyFunctorIflLi2ELi1ELi1EEEJNS0_"
               "4CopyIflEEEEEvT_T0_DpT1_";
const char* kForeachClampMinFloat =
    "_ZN2at6native57_GLOBAL__N__7e105b8f_24_ForeachBinaryOpScalar_cu_86b9896c25multi_tensor_apply_kernelINS1_18Tensor"
    "ListMetadataILi2EEENS1_21BinaryOpScalarFunctorIfLi2ELi1ELi1EEEJNS0_7maximumIfEEfEEEvT_T0_DpT1_";

// vectorized_elementwise_kernel<4, FillFunctor<float>, std::array<char*, 1>, false> and <8, FillFunctor<c10::Half>,
// ...>: torch.ones_like / torch.full of a contiguous tensor (and autograd's first gradient)
const char* kFillFloat =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EELb0EEEviT0_T1_";
const char* kFillHalf =
    "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIN3c104HalfEEESt5arrayIPcLm1EELb0EEEviT0_T1_";

#define CUDA_DIR "/__w/pytorch/pytorch/aten/src/ATen/native/cuda/"

// ---- ATen's parameter structs, written from its headers ---------------------------------------------------------------

// at::GenericPackedTensorAccessor<T, N, DefaultPtrTraits, int64_t> (PackedTensorAccessor64)
template <int N>
struct PackedAccessor64 {
  void* data;
  int64_t sizes[N];
  int64_t strides[N];
};
static_assert(sizeof(PackedAccessor64<2>) == 40, "cubin: nll_loss_forward_no_reduce_cuda_kernel parameter 1");
static_assert(sizeof(PackedAccessor64<3>) == 56, "cubin: nll_loss2d_forward_no_reduce_kernel parameters 2, 3");
static_assert(sizeof(PackedAccessor64<4>) == 72, "cubin: nll_loss2d_forward_no_reduce_kernel parameter 1");

// at::cuda::detail::TensorInfo<T, unsigned int>, MAX_TENSORINFO_DIMS = 25
struct TensorInfo32 {
  void* data;
  uint32_t sizes[25];
  uint32_t strides[25];
  int dims;
};
static_assert(sizeof(TensorInfo32) == 216, "cubin: indexSelectSmallIndex parameters 0-2");

// at::cuda::detail::OffsetCalculator<NARGS, uint32_t>, MAX_DIMS = 25; IntDivider<unsigned> {divisor, m1, shift}
template <int NARGS>
struct OffsetCalc {
  int dims;
  struct {
    uint32_t divisor, m1, shift;
  } sizes[25];
  uint32_t strides[25][NARGS];
};
struct EmptyFunctor {};  // at::native::TensorAssign, ReduceAdd: no members

// The [=] __device__ closures of ScatterGatherKernel.cu, captures in the order of torch's host stub names'
// __nv_dl_wrapper_t arguments: offset_calc, index_ptr, index_size, f, self_ptr, index_stride, numel, src.
struct GatherClosure {
  OffsetCalc<3> offset_calc;
  const char* index_ptr;
  int64_t index_size;
  EmptyFunctor f;
  char* self_ptr;
  int64_t index_stride;
  int64_t numel;
  const char* src_ptr;
};
static_assert(sizeof(GatherClosure) == 664, "cubin: _scatter_gather_elementwise_kernel (gather/scatter) parameter 1");
template <typename Value>
struct FillClosure {
  OffsetCalc<2> offset_calc;
  const char* index_ptr;
  int64_t index_size;
  EmptyFunctor f;
  char* self_ptr;
  int64_t index_stride;
  int64_t numel;
  Value src_val;
};
static_assert(sizeof(FillClosure<float>) == 560, "cubin: _scatter_gather_elementwise_kernel (fill) parameter 1");
struct alignas(16) Complex128 {
  double re, im;
};
static_assert(sizeof(FillClosure<Complex128>) == 576, "cubin: fill of c10::complex<double>, parameter 1");

// ---- driving the simulator as torch does ----------------------------------------------------------------------------

// A host stub per kernel name, registered as nvcc's fatbinary constructor registers torch's kernels.
const void* torch_kernel(const char* mangled) {
  static std::mutex mutex;
  static auto* stubs = new std::map<std::string, std::unique_ptr<char>>;
  std::lock_guard lock(mutex);
  auto& stub = (*stubs)[mangled];
  if (!stub) {
    stub = std::make_unique<char>('\0');
    static void** handle = __cudaRegisterFatBinary(nullptr);
    __cudaRegisterFunction(handle, stub.get(), const_cast<char*>(mangled), mangled, -1, nullptr, nullptr, nullptr,
                           nullptr, nullptr);
  }
  return stub.get();
}

template <typename T>
T* device_copy(const std::vector<T>& host) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T) + 16), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return static_cast<T*>(p);
}

template <typename T>
std::vector<T> host_copy(const T* device, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

template <typename... Args>
cudaError_t launch(const char* mangled, dim3 grid, dim3 block, Args... args) {
  void* pointers[] = {static_cast<void*>(&args)...};
  return cudaLaunchKernel(torch_kernel(mangled), grid, block, pointers, 0, nullptr);
}

// The device's assertion line.
std::string assert_line(const std::string& file, unsigned line, const std::string& function, dim3 block, dim3 thread,
                        const std::string& condition) {
  std::ostringstream s;
  s << CUDA_DIR << file << ":" << line << ": " << function << ": block: [" << block.x << "," << block.y << ","
    << block.z << "], thread: [" << thread.x << "," << thread.y << "," << thread.z << "] Assertion `" << condition
    << "` failed.\n";
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  return lines;
}

// Launches, synchronizes, and returns what the device printed; the kernel must have asserted.
template <typename... Args>
std::string launch_expecting_assert(const char* mangled, dim3 grid, dim3 block, Args... args) {
  simtest::StderrCapture err;
  EXPECT_EQ(launch(mangled, grid, block, args...), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
  return err.text();
}

class Aten : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* device_code = std::getenv("SIMCUDA_DEVICE_CODE");
    ASSERT_NE(device_code, nullptr) << "run through meson: SIMCUDA_DEVICE_CODE names libsimaten.so";
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // cuInit: loads SIMCUDA_DEVICE_CODE
  }
};

// ---- Loss.cu --------------------------------------------------------------------------------------------------------

struct NllCase {
  int64_t nframe, n_classes, ignore_index;
  std::vector<double> input;  // nframe x n_classes (log-probabilities)
  std::vector<int64_t> target;
  std::vector<double> weights;  // empty: none
  // -sum(w[t] * x[i][t]) and sum(w[t]) over frames whose target is not ignored
  double sum() const {
    double s = 0;
    for (int64_t i = 0; i < nframe; ++i)
      if (target[i] != ignore_index) s -= weight(target[i]) * input[i * n_classes + target[i]];
    return s;
  }
  double total_weight() const {
    double w = 0;
    for (int64_t i = 0; i < nframe; ++i)
      if (target[i] != ignore_index) w += weight(target[i]);
    return w;
  }
  double weight(int64_t t) const { return weights.empty() ? 1.0 : weights[t]; }
};

NllCase nll_case(int64_t nframe, int64_t n_classes) {
  NllCase c{nframe, n_classes, -100, {}, {}, {}};
  for (int64_t i = 0; i < nframe * n_classes; ++i) c.input.push_back(-0.05 * static_cast<double>((i * 7) % 23) - 0.1);
  for (int64_t i = 0; i < nframe; ++i) c.target.push_back((i * 3 + 1) % n_classes);
  return c;
}

template <typename T>
std::vector<T> as(const std::vector<double>& values) {
  return std::vector<T>(values.begin(), values.end());
}

TEST_F(Aten, NllLoss2dFloatGivesTheMeanLossAndTotalWeight) {
  NllCase c = nll_case(50, 7);
  c.target[4] = c.ignore_index;
  c.target[31] = c.ignore_index;
  c.weights = {0.5, 1.0, 2.0, 0.25, 1.5, 3.0, 1.0};
  float* input = device_copy(as<float>(c.input));
  int64_t* target = device_copy(c.target);
  float* weights = device_copy(as<float>(c.weights));
  float* out = device_copy(std::vector<float>{0, 0});
  ASSERT_EQ(launch(kNll2dFloat, 1, 32, out, out + 1, static_cast<const float*>(input),
                   static_cast<const int64_t*>(target), static_cast<const float*>(weights), true, c.nframe, c.n_classes,
                   c.n_classes, c.ignore_index),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 2);
  EXPECT_NEAR(result[1], c.total_weight(), 1e-4);
  EXPECT_NEAR(result[0], c.sum() / c.total_weight(), 1e-5);
}

TEST_F(Aten, NllLoss2dDoubleSumsWithoutWeights) {
  NllCase c = nll_case(300, 10);
  double* input = device_copy(c.input);
  int64_t* target = device_copy(c.target);
  double* out = device_copy(std::vector<double>{0, 0});
  ASSERT_EQ(launch(kNll2dDouble, 1, 64, out, out + 1, static_cast<const double*>(input),
                   static_cast<const int64_t*>(target), static_cast<const double*>(nullptr), false, c.nframe,
                   c.n_classes, c.n_classes, c.ignore_index),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 2);
  EXPECT_DOUBLE_EQ(result[1], 300.0);
  EXPECT_NEAR(result[0], c.sum(), 1e-9);
}

// c10::Half values: the loss is the half-precision one (within half's precision of the exact value).
TEST_F(Aten, NllLoss2dHalfGivesTheMeanLoss) {
  NllCase c = nll_case(40, 5);
  // Half bit patterns of c.input's values, computed here from the IEEE binary16 format (values are exact multiples
  // of 2^-10 away from representable ones; the expectation allows half's rounding).
  auto to_half = [](double v) {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = (bits & 0x7fffffu) >> 13;  // truncation: within 2^-10 relative
    return static_cast<uint16_t>(sign | (exponent << 10) | mantissa);
  };
  std::vector<uint16_t> input;
  for (double v : c.input) input.push_back(to_half(v));
  uint16_t* d_input = device_copy(input);
  int64_t* target = device_copy(c.target);
  uint16_t* out = device_copy(std::vector<uint16_t>{0, 0});
  ASSERT_EQ(launch(kNll2dHalf, 1, 32, out, out + 1, static_cast<const uint16_t*>(d_input),
                   static_cast<const int64_t*>(target), static_cast<const uint16_t*>(nullptr), true, c.nframe,
                   c.n_classes, c.n_classes, c.ignore_index),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 2);
  EXPECT_EQ(result[1], 0x5100) << "40.0 in binary16";
  uint32_t loss_bits = (uint32_t{result[0] & 0x8000u} << 16) | ((((result[0] >> 10) & 0x1fu) + 112) << 23) |
                       (uint32_t{result[0] & 0x3ffu} << 13);
  float loss;
  std::memcpy(&loss, &loss_bits, 4);
  EXPECT_NEAR(loss, c.sum() / 40.0, 4e-3);
}

TEST(AtenAssert, NllLoss2dBadLabelsAssertOncePerFailingThread) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    NllCase c = nll_case(100, 5);
    c.target[3] = 5;   // thread 3 (frames 3, 35, 67, 99)
    c.target[67] = 9;  // thread 3 again: it trapped at frame 3
    c.target[40] = -1; // thread 8 (-1 is not ignore_index)
    float* input = device_copy(as<float>(c.input));
    int64_t* target = device_copy(c.target);
    float* out = device_copy(std::vector<float>{0, 0});
    std::string printed = launch_expecting_assert(kNll2dFloat, 1, 32, out, out + 1, static_cast<const float*>(input),
                                                  static_cast<const int64_t*>(target), static_cast<const float*>(nullptr),
                                                  true, c.nframe, c.n_classes, c.n_classes, c.ignore_index);
    EXPECT_EQ(printed, assert_line("Loss.cu", 244, "nll_loss_forward_reduce_cuda_kernel_2d", {0, 0, 0}, {3, 0, 0},
                                   "t >= 0 && t < n_classes") +
                           assert_line("Loss.cu", 244, "nll_loss_forward_reduce_cuda_kernel_2d", {0, 0, 0}, {8, 0, 0},
                                       "t >= 0 && t < n_classes"));
  });
}

TEST(AtenAssert, NllLoss2dByteTargetsAssertWithTheUnsignedCondition) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    NllCase c = nll_case(10, 4);
    std::vector<uint8_t> target(c.target.begin(), c.target.end());
    target[6] = 200;
    float* input = device_copy(as<float>(c.input));
    uint8_t* d_target = device_copy(target);
    float* out = device_copy(std::vector<float>{0, 0});
    std::string printed = launch_expecting_assert(kNll2dByte, 1, 32, out, out + 1, static_cast<const float*>(input),
                                                  static_cast<const uint8_t*>(d_target),
                                                  static_cast<const float*>(nullptr), true, c.nframe, c.n_classes,
                                                  c.n_classes, c.ignore_index);
    EXPECT_EQ(printed, assert_line("Loss.cu", 244, "nll_loss_forward_reduce_cuda_kernel_2d", {0, 0, 0}, {6, 0, 0},
                                   "t < n_classes"));
  });
}

TEST_F(Aten, NllLoss1dGivesTheLossOfItsOneFrame) {
  std::vector<float> input{-0.5f, -1.25f, -2.0f};
  float* d_input = device_copy(input);
  int64_t* target = device_copy(std::vector<int64_t>{1});
  float* weights = device_copy(std::vector<float>{1.0f, 4.0f, 1.0f});
  float* out = device_copy(std::vector<float>{0, 0});
  ASSERT_EQ(launch(kNll1dFloat, 1, 1, out, out + 1, static_cast<const float*>(d_input),
                   static_cast<const int64_t*>(target), static_cast<const float*>(weights), false, int64_t{3},
                   int64_t{-100}),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 2);
  EXPECT_FLOAT_EQ(result[0], 5.0f);  // -4 * -1.25
  EXPECT_FLOAT_EQ(result[1], 4.0f);
}

TEST(AtenAssert, NllLoss1dBadLabelAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* input = device_copy(std::vector<float>{-0.5f, -1.25f, -2.0f});
    int64_t* target = device_copy(std::vector<int64_t>{3});
    float* out = device_copy(std::vector<float>{0, 0});
    std::string printed = launch_expecting_assert(kNll1dFloat, 1, 1, out, out + 1, static_cast<const float*>(input),
                                                  static_cast<const int64_t*>(target),
                                                  static_cast<const float*>(nullptr), true, int64_t{3}, int64_t{-100});
    EXPECT_EQ(printed, assert_line("Loss.cu", 200, "nll_loss_forward_reduce_cuda_kernel_1d", {0, 0, 0}, {0, 0, 0},
                                   "t >= 0 && t < n_classes"));
  });
}

TEST_F(Aten, NllLossNoReduceGivesEachFramesLoss) {
  NllCase c = nll_case(300, 6);
  c.target[17] = c.ignore_index;
  float* input = device_copy(as<float>(c.input));
  int64_t* target = device_copy(c.target);
  float* out = device_copy(std::vector<float>(300, 123.0f));
  PackedAccessor64<2> accessor{input, {c.nframe, c.n_classes}, {c.n_classes, 1}};
  ASSERT_EQ(launch(kNllNoReduceFloat, 3, 128, c.nframe, accessor, static_cast<const int64_t*>(target), out,
                   static_cast<const float*>(nullptr), c.n_classes, c.ignore_index),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 300);
  for (int64_t i = 0; i < c.nframe; ++i) {
    double expected = c.target[i] == c.ignore_index ? 0.0 : -c.input[i * c.n_classes + c.target[i]];
    ASSERT_NEAR(result[i], expected, 1e-6) << "frame " << i;
  }
}

TEST(AtenAssert, NllLossNoReduceAssertsInTheThreadOfTheBadFrame) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    NllCase c = nll_case(300, 6);
    c.target[257] = 6;  // CUDA_KERNEL_LOOP with 2 blocks of 128: frame 257 is block 0, thread 1 (257 - 256)
    float* input = device_copy(as<float>(c.input));
    int64_t* target = device_copy(c.target);
    float* out = device_copy(std::vector<float>(300));
    PackedAccessor64<2> accessor{input, {c.nframe, c.n_classes}, {c.n_classes, 1}};
    std::string printed = launch_expecting_assert(kNllNoReduceFloat, 2, 128, c.nframe, accessor,
                                                  static_cast<const int64_t*>(target), out,
                                                  static_cast<const float*>(nullptr), c.n_classes, c.ignore_index);
    EXPECT_EQ(printed, assert_line("Loss.cu", 179, "nll_loss_forward_no_reduce_cuda_kernel", {0, 0, 0}, {1, 0, 0},
                                   "cur_target >= 0 && cur_target < n_classes"));
  });
}

// ---- Loss.cu: binary_cross_entropy ------------------------------------------------------------------------------------

// The lambda's value in float arithmetic, written from Loss.cu: (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100).
float bce_float(float x, float t) {
  float log_x = std::max(std::log(x), -100.0f);
  float log_1_minus_x = std::max(std::log1p(-x), -100.0f);
  return (t - 1) * log_1_minus_x - t * log_x;
}

// Inputs in [0, 1] with both ends (whose logs clamp at -100) and targets in {0, 0.3, 1}.
std::vector<float> bce_inputs(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37) % 101) / 100.0f;
  return x;
}
std::vector<float> bce_targets(size_t n) {
  std::vector<float> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.3f;
  return t;
}

// gpu_kernel's pointers: out, input, target.
std::array<char*, 3> bce_data(void* out, const void* input, const void* target) {
  return {static_cast<char*>(out), static_cast<char*>(const_cast<void*>(input)),
          static_cast<char*>(const_cast<void*>(target))};
}

// launch_vectorized_kernel: grid ceil(N / (8 * 128)), 128 threads (what torch 2.15 launches on the simulator).
dim3 vectorized_grid(int n) { return dim3{static_cast<unsigned>((n + 1023) / 1024), 1, 1}; }

TEST_F(Aten, BceVectorizedFloatGivesEachElementsLoss) {
  const int n = 2100;  // two full blocks of 1024 (vectorized loads) and a partial one (the unroll policy)
  auto x = bce_inputs(n), t = bce_targets(n);
  float* input = device_copy(x);
  float* target = device_copy(t);
  float* out = device_copy(std::vector<float>(n, -7.0f));
  ASSERT_EQ(launch(kBceVectorizedFloat, vectorized_grid(n), 128, n, EmptyFunctor{}, bce_data(out, input, target)),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto loss = host_copy(out, n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(loss[i], bce_float(x[i], t[i])) << "element " << i;
  EXPECT_FLOAT_EQ(loss[0], 0.0f);      // x 0, t 0: 0 * -100 - 0
  EXPECT_FLOAT_EQ(loss[202], 100.0f);  // x 0, t 1: -max(log 0, -100)
  EXPECT_FLOAT_EQ(loss[30], 100.0f);   // x 1, t 0: -max(log1p(-1), -100)
}

TEST_F(Aten, BceVectorizedDoubleGivesEachElementsLoss) {
  const int n = 300;
  std::vector<double> x, t;
  for (float v : bce_inputs(n)) x.push_back(v);
  for (float v : bce_targets(n)) t.push_back(v);
  double* input = device_copy(x);
  double* target = device_copy(t);
  double* out = device_copy(std::vector<double>(n));
  ASSERT_EQ(launch(kBceVectorizedDouble, vectorized_grid(n), 128, n, EmptyFunctor{}, bce_data(out, input, target)),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto loss = host_copy(out, n);
  for (int i = 0; i < n; ++i) {
    double expected = (t[i] - 1) * std::max(std::log1p(-x[i]), -100.0) - t[i] * std::max(std::log(x[i]), -100.0);
    ASSERT_NEAR(loss[i], expected, 1e-12) << "element " << i;
  }
}

// A full block: thread t loads the 4-float vectors t and t + 128 (elements 4t..4t+3, then 512 + 4t..) and computes
// them in that order; a thread stops at its first failing element, and the input is checked before the target.
TEST(AtenAssert, BceVectorizedAssertsInTheThreadThatLoadsTheElement) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    const int n = 2048;
    auto x = bce_inputs(n), t = bce_targets(n);
    t[5] = 2.0f;            // block 0: vector 1, thread 1 (target)
    t[14] = 3.0f;           // block 0: thread 3's third element...
    x[524] = std::nanf(""); // ... before its fifth (vector 131 = thread 3's second): it trapped already
    x[1234] = 1.5f;         // block 1: element 210 of it, vector 52, thread 52 (input)
    float* input = device_copy(x);
    float* target = device_copy(t);
    float* out = device_copy(std::vector<float>(n));
    std::string printed = launch_expecting_assert(kBceVectorizedFloat, vectorized_grid(n), 128, n, EmptyFunctor{},
                                                  bce_data(out, input, target));
    const char* input_condition = "input_val >= zero && input_val <= one";
    const char* target_condition = "target_val >= zero && target_val <= one";
    EXPECT_EQ(printed, assert_line("Loss.cu", 90, "operator()", {0, 0, 0}, {1, 0, 0}, target_condition) +
                           assert_line("Loss.cu", 90, "operator()", {0, 0, 0}, {3, 0, 0}, target_condition) +
                           assert_line("Loss.cu", 89, "operator()", {1, 0, 0}, {52, 0, 0}, input_condition));
  });
}

// The last, partial block (remaining = N - 1024 * b < 1024) takes elements t, t + 128, ... per thread.
TEST(AtenAssert, BcePartialBlockAssertsInTheThreadOfTheUnrollPolicy) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    const int n = 1500;
    auto x = bce_inputs(n), t = bce_targets(n);
    x[1100] = -0.25f;  // block 1, element 76 of it: thread 76
    float* input = device_copy(x);
    float* target = device_copy(t);
    float* out = device_copy(std::vector<float>(n));
    std::string printed = launch_expecting_assert(kBceVectorizedFloat, vectorized_grid(n), 128, n, EmptyFunctor{},
                                                  bce_data(out, input, target));
    EXPECT_EQ(printed, assert_line("Loss.cu", 89, "operator()", {1, 0, 0}, {76, 0, 0},
                                   "input_val >= zero && input_val <= one"));
  });
}

// c10::Half: vectorized_elementwise_kernel<8, ...>; inputs k/64 are exact in binary16. Each operation rounds to half,
// so the loss is within half's precision of the float one.
TEST_F(Aten, BceHalfGivesHalfPrecisionLosses) {
  const int n = 1030;
  auto half_bits = [](float v) {  // exact for the values used here (k/64 and 0.3's neighbour 0.2998046875)
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if ((bits & 0x7fffffffu) == 0) return static_cast<uint16_t>(bits >> 16);
    int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | (exponent << 10) | ((bits & 0x7fffffu) >> 13));
  };
  auto half_value = [](uint16_t h) {
    int exponent = (h >> 10) & 0x1f;
    float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(h & 0x3ff), -24)
                                    : std::ldexp(static_cast<float>((h & 0x3ff) | 0x400), exponent - 25);
    return (h & 0x8000u) ? -magnitude : magnitude;
  };
  std::vector<uint16_t> x(n), t(n);
  std::vector<float> xf(n), tf(n);
  for (int i = 0; i < n; ++i) {
    xf[i] = static_cast<float>((i * 5) % 65) / 64.0f;
    tf[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.2998046875f;
    x[i] = half_bits(xf[i]);
    t[i] = half_bits(tf[i]);
  }
  uint16_t* input = device_copy(x);
  uint16_t* target = device_copy(t);
  uint16_t* out = device_copy(std::vector<uint16_t>(n));
  ASSERT_EQ(launch(kBceVectorizedHalf, vectorized_grid(n), 128, n, EmptyFunctor{}, bce_data(out, input, target)),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto loss = host_copy(out, n);
  for (int i = 0; i < n; ++i) {
    float expected = bce_float(xf[i], tf[i]);
    ASSERT_NEAR(half_value(loss[i]), expected, 4e-3f * std::max(1.0f, std::fabs(expected))) << "element " << i;
  }
}

TEST(AtenAssert, BceHalfNanInputAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    std::vector<uint16_t> x(64, 0x3800), t(64, 0x3c00);  // 0.5, 1.0
    x[40] = 0x7e00;                                      // NaN: block 0 (partial), thread 40
    uint16_t* input = device_copy(x);
    uint16_t* target = device_copy(t);
    uint16_t* out = device_copy(std::vector<uint16_t>(64));
    std::string printed = launch_expecting_assert(kBceVectorizedHalf, 1, 128, 64, EmptyFunctor{},
                                                  bce_data(out, input, target));
    EXPECT_EQ(printed, assert_line("Loss.cu", 89, "operator()", {0, 0, 0}, {40, 0, 0},
                                   "input_val >= zero && input_val <= one"));
  });
}

// A misaligned operand (vec_size 1): unrolled_elementwise_kernel, grid ceil(N / 512), threads t, t + 128, ...
TEST_F(Aten, BceUnrolledFloatGivesEachElementsLoss) {
  const int n = 1000;
  auto x = bce_inputs(n), t = bce_targets(n);
  std::vector<float> shifted(n + 1);
  std::copy(x.begin(), x.end(), shifted.begin() + 1);
  float* input = device_copy(shifted) + 1;  // 4-byte aligned only
  float* target = device_copy(t);
  float* out = device_copy(std::vector<float>(n));
  ASSERT_EQ(launch(kBceUnrolledFloat, 2, 128, n, EmptyFunctor{}, bce_data(out, input, target), EmptyFunctor{},
                   EmptyFunctor{}, EmptyFunctor{}, EmptyFunctor{}),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto loss = host_copy(out, n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(loss[i], bce_float(x[i], t[i])) << "element " << i;
}

TEST(AtenAssert, BceUnrolledAssertsInTheThreadOfTheElement) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    const int n = 1000;
    auto x = bce_inputs(n), t = bce_targets(n);
    x[600] = 1.01f;  // block 1 (elements 512..999), element 88 of it: thread 88
    float* input = device_copy(x);
    float* target = device_copy(t);
    float* out = device_copy(std::vector<float>(n));
    std::string printed = launch_expecting_assert(kBceUnrolledFloat, 2, 128, n, EmptyFunctor{},
                                                  bce_data(out, input, target), EmptyFunctor{}, EmptyFunctor{},
                                                  EmptyFunctor{}, EmptyFunctor{});
    EXPECT_EQ(printed, assert_line("Loss.cu", 89, "operator()", {1, 0, 0}, {88, 0, 0},
                                   "input_val >= zero && input_val <= one"));
  });
}

// gpu_kernel_impl_nocast's [=] closure (elementwise_kernel), as torch 2.15 lays it out: offset_calc, the operands'
// pointers, then 16 bytes the device never reads (torch leaves the host-side lambda wrapper there).
struct BceClosure {
  OffsetCalc<3> offset_calc;
  std::array<char*, 3> data;
  unsigned char unused[16];
};
static_assert(sizeof(BceClosure) == 648, "cubin: elementwise_kernel<128, 2, gpu_kernel_impl_nocast<...>> parameter 1");

// binary_cross_entropy(X.t(), target) with X (8, 300): iter shape (8, 300), fastest first (the output's order);
// byte strides out (4, 32), input (1200, 4), target (4, 32). Element idx = 8 r + c is input X[c][r].
BceClosure bce_transposed_closure(float* out, const float* x, const float* target) {
  BceClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 2;
  c.offset_calc.sizes[0].divisor = 8;
  c.offset_calc.sizes[1].divisor = 300;
  uint32_t inner[3] = {4, 1200, 4}, outer[3] = {32, 4, 32};
  for (int a = 0; a < 3; ++a) {
    c.offset_calc.strides[0][a] = inner[a];
    c.offset_calc.strides[1][a] = outer[a];
  }
  c.data = bce_data(out, x, target);
  return c;
}

TEST_F(Aten, BceElementwiseGivesTheLossOfTransposedInputs) {
  auto x = bce_inputs(2400), t = bce_targets(2400);  // x: X (8, 300) row-major; t: target (300, 8)
  float* input = device_copy(x);
  float* target = device_copy(t);
  float* out = device_copy(std::vector<float>(2400));
  // launch_legacy_kernel<128, 2>: grid ceil(2400 / 256)
  ASSERT_EQ(launch(kBceElementwiseFloat, 10, 128, 2400, bce_transposed_closure(out, input, target)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto loss = host_copy(out, 2400);
  for (int r = 0; r < 300; ++r)
    for (int c = 0; c < 8; ++c)
      ASSERT_FLOAT_EQ(loss[r * 8 + c], bce_float(x[c * 300 + r], t[r * 8 + c])) << r << ", " << c;
}

TEST(AtenAssert, BceElementwiseAssertsInTheThreadOfTheIndex) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    auto x = bce_inputs(2400), t = bce_targets(2400);
    x[5 * 300 + 100] = 1.5f;  // X[5][100]: idx 805 = 256 * 3 + 37: block 3, thread 37 (its first step)
    float* input = device_copy(x);
    float* target = device_copy(t);
    float* out = device_copy(std::vector<float>(2400));
    std::string printed =
        launch_expecting_assert(kBceElementwiseFloat, 10, 128, 2400, bce_transposed_closure(out, input, target));
    EXPECT_EQ(printed, assert_line("Loss.cu", 89, "operator()", {3, 0, 0}, {37, 0, 0},
                                   "input_val >= zero && input_val <= one"));
  });
}

// ---- NLLLoss2d.cu ---------------------------------------------------------------------------------------------------

// (N, C, H, W) = (2, 3, 2, 3): map_nelem 6, blocks_per_sample 1, two blocks of CUDA_NUM_THREADS.
struct Nll2dCase {
  int n = 2, c = 3, h = 2, w = 3;
  std::vector<float> input;     // NCHW
  std::vector<int64_t> target;  // NHW
  Nll2dCase() {
    for (int i = 0; i < n * c * h * w; ++i) input.push_back(-0.125f * static_cast<float>(i % 11) - 0.25f);
    for (int i = 0; i < n * h * w; ++i) target.push_back(i % c);
  }
  float at(int b, int cls, int pixel) const { return input[(b * c + cls) * h * w + pixel]; }
};

TEST_F(Aten, NllLoss2dForwardAndSizeAverageGiveTheMeanLoss) {
  Nll2dCase s;
  s.target[4] = -100;
  float* input = device_copy(s.input);
  int64_t* target = device_copy(s.target);
  float* out = device_copy(std::vector<float>{0, 0});  // output.zero_(); total_weight.zero_();
  ASSERT_EQ(launch(kNllLoss2dForward, 2, 128, out, out + 1, static_cast<const float*>(input),
                   static_cast<const int64_t*>(target), static_cast<const float*>(nullptr), s.c, s.h * s.w, 1,
                   int64_t{-100}),
            cudaSuccess);
  ASSERT_EQ(launch(kNllLoss2dSizeAverage, 1, 1, out, static_cast<const float*>(out + 1)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  double sum = 0;
  int counted = 0;
  for (int b = 0; b < s.n; ++b)
    for (int p = 0; p < s.h * s.w; ++p) {
      int64_t t = s.target[b * s.h * s.w + p];
      if (t == -100) continue;
      sum -= s.at(b, static_cast<int>(t), p);
      ++counted;
    }
  auto result = host_copy(out, 2);
  EXPECT_FLOAT_EQ(result[1], static_cast<float>(counted));
  EXPECT_NEAR(result[0], sum / counted, 1e-6);
}

TEST(AtenAssert, NllLoss2dForwardAssertsInTheBlockOfTheSample) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    Nll2dCase s;
    s.target[6 + 4] = 3;  // sample 1, pixel 4: block 1, thread 4
    float* input = device_copy(s.input);
    int64_t* target = device_copy(s.target);
    float* out = device_copy(std::vector<float>{0, 0});
    std::string printed = launch_expecting_assert(kNllLoss2dForward, 2, 128, out, out + 1,
                                                  static_cast<const float*>(input), static_cast<const int64_t*>(target),
                                                  static_cast<const float*>(nullptr), s.c, s.h * s.w, 1, int64_t{-100});
    EXPECT_EQ(printed, assert_line("NLLLoss2d.cu", 108, "nll_loss2d_forward_kernel", {1, 0, 0}, {4, 0, 0},
                                   "t >= 0 && t < n_classes"));
  });
}

TEST_F(Aten, NllLoss2dNoReduceGivesEachPixelsLoss) {
  Nll2dCase s;
  float* input = device_copy(s.input);
  int64_t* target = device_copy(s.target);
  float* out = device_copy(std::vector<float>(12, 99.0f));
  PackedAccessor64<4> in{input, {s.n, s.c, s.h, s.w}, {s.c * s.h * s.w, s.h * s.w, s.w, 1}};
  PackedAccessor64<3> tg{target, {s.n, s.h, s.w}, {s.h * s.w, s.w, 1}};
  PackedAccessor64<3> ot{out, {s.n, s.h, s.w}, {s.h * s.w, s.w, 1}};
  ASSERT_EQ(launch(kNllLoss2dNoReduce, 1, 128, int64_t{12}, in, tg, ot, static_cast<const float*>(nullptr),
                   int64_t{-100}),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 12);
  for (int b = 0; b < s.n; ++b)
    for (int p = 0; p < s.h * s.w; ++p)
      EXPECT_FLOAT_EQ(result[b * 6 + p], -s.at(b, static_cast<int>(s.target[b * 6 + p]), p));
}

TEST(AtenAssert, NllLoss2dNoReduceAssertsInTheThreadOfThePixel) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    Nll2dCase s;
    // index = b + N * (h + H * w): pixel (b=1, h=0, w=2) is index 1 + 2 * (0 + 2 * 2) = 9
    s.target[1 * 6 + 0 * 3 + 2] = 7;
    float* input = device_copy(s.input);
    int64_t* target = device_copy(s.target);
    float* out = device_copy(std::vector<float>(12));
    PackedAccessor64<4> in{input, {s.n, s.c, s.h, s.w}, {s.c * s.h * s.w, s.h * s.w, s.w, 1}};
    PackedAccessor64<3> tg{target, {s.n, s.h, s.w}, {s.h * s.w, s.w, 1}};
    PackedAccessor64<3> ot{out, {s.n, s.h, s.w}, {s.h * s.w, s.w, 1}};
    std::string printed = launch_expecting_assert(kNllLoss2dNoReduce, 1, 128, int64_t{12}, in, tg, ot,
                                                  static_cast<const float*>(nullptr), int64_t{-100});
    EXPECT_EQ(printed, assert_line("NLLLoss2d.cu", 75, "nll_loss2d_forward_no_reduce_kernel", {0, 0, 0}, {9, 0, 0},
                                   "cur_target >= 0 && cur_target < n_classes"));
  });
}

// ---- Indexing.cu ----------------------------------------------------------------------------------------------------

// index_select(self (4, 3), dim 0, index) as index_select_out_cuda_impl sets it up: TensorInfos of out and self with
// dim 0 reduced to size 1 (reduceDim), the contiguous index collapsed to one dimension; sliceSize 3 threads.
struct IndexSelectCase {
  std::vector<float> self{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
  std::vector<int64_t> index;
  float* d_self = nullptr;
  float* d_out = nullptr;
  int64_t* d_index = nullptr;
  explicit IndexSelectCase(std::vector<int64_t> i) : index(std::move(i)) {
    d_self = device_copy(self);
    d_out = device_copy(std::vector<float>(index.size() * 3, -1.0f));
    d_index = device_copy(index);
  }
  cudaError_t launch_2d(dim3 block) const {
    TensorInfo32 out{d_out, {1, 3}, {3, 1}, 2};
    TensorInfo32 in{d_self, {1, 3}, {3, 1}, 2};
    TensorInfo32 idx{d_index, {static_cast<uint32_t>(index.size())}, {1}, 1};
    return launch(kIndexSelect2d, 1, block, out, in, idx, 0, 0, 3u, int64_t{4});
  }
};

TEST_F(Aten, IndexSelectSmallIndexCopiesTheSelectedRows) {
  IndexSelectCase c({2, 0, 3, 2});
  ASSERT_EQ(c.launch_2d(3), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(c.d_out, 12), (std::vector<float>{20, 21, 22, 0, 1, 2, 30, 31, 32, 20, 21, 22}));
}

TEST_F(Aten, IndexSelectSmallIndexWithDynamicDimsSelectsColumns) {
  // index_select(self (4, 3), dim 1, [2, 0]): out (4, 2); reduceDim(1) leaves sizes {4, 1}; sliceSize 4.
  std::vector<float> self{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
  float* d_self = device_copy(self);
  float* d_out = device_copy(std::vector<float>(8, -1.0f));
  int64_t* d_index = device_copy(std::vector<int64_t>{2, 0});
  TensorInfo32 out{d_out, {4, 1}, {2, 1}, 2};
  TensorInfo32 in{d_self, {4, 1}, {3, 1}, 2};
  TensorInfo32 idx{d_index, {2}, {1}, 1};
  ASSERT_EQ(launch(kIndexSelectDynamic, 1, 4, out, in, idx, 1, 1, 4u, int64_t{3}), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(d_out, 8), (std::vector<float>{2, 0, 12, 10, 22, 20, 32, 30}));
}

TEST(AtenAssert, IndexSelectSmallIndexOutOfRangeAssertsInEveryThread) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    IndexSelectCase c({1, 4});  // 4 is out of range for 4 rows
    simtest::StderrCapture err;
    ASSERT_EQ(c.launch_2d(3), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
    std::string expected;
    for (unsigned t = 0; t < 3; ++t)
      expected += assert_line("Indexing.cu", 1582, "indexSelectSmallIndex", {0, 0, 0}, {t, 0, 0},
                              "srcIndex < srcSelectDimSize");
    EXPECT_EQ(err.text(), expected);
  });
}

TEST(AtenAssert, IndexSelectSmallIndexNegativeIndexWrapsAndAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    IndexSelectCase c({-1});
    simtest::StderrCapture err;
    ASSERT_EQ(c.launch_2d(64), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
    auto lines = lines_of(err.text());
    ASSERT_FALSE(lines.empty());
    EXPECT_LE(lines.size(), 64u);
    for (size_t t = 0; t < lines.size(); ++t)
      EXPECT_EQ(lines[t], assert_line("Indexing.cu", 1582, "indexSelectSmallIndex", {0, 0, 0},
                                      {static_cast<unsigned>(t), 0, 0}, "srcIndex < srcSelectDimSize"));
  });
}

// ---- IndexKernelUtils.cu / ScatterGatherKernel.cu ---------------------------------------------------------------------

// Embedding rows of 8 floats (32 bytes): vectorized_gather_kernel_launch<16, long>: grid (num_ind, 1), threads 32.
TEST_F(Aten, VectorizedGatherCopiesTheIndexedRows) {
  std::vector<float> weight;
  for (int r = 0; r < 5; ++r)
    for (int k = 0; k < 8; ++k) weight.push_back(static_cast<float>(r * 100 + k));
  float* d_weight = device_copy(weight);
  int64_t* idx = device_copy(std::vector<int64_t>{4, 0, 4, 2});
  float* out = device_copy(std::vector<float>(32, -1.0f));
  ASSERT_EQ(launch(kVectorizedGather, dim3{4, 1, 1}, 32, reinterpret_cast<char*>(out),
                   reinterpret_cast<char*>(d_weight), idx, 4, int64_t{32}, int64_t{5}, int64_t{32}, int64_t{32}, false),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto result = host_copy(out, 32);
  std::vector<int> rows{4, 0, 4, 2};
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(result[i * 8 + k], static_cast<float>(rows[i] * 100 + k));
}

TEST(AtenAssert, VectorizedGatherOutOfRangeAssertsInTheBlockOfTheIndex) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* d_weight = device_copy(std::vector<float>(40, 1.0f));
    int64_t* idx = device_copy(std::vector<int64_t>{1, 0, 5, 2});  // 5 rows: index 5 is out of range
    float* out = device_copy(std::vector<float>(32));
    std::string printed = launch_expecting_assert(kVectorizedGather, dim3{4, 1, 1}, 2, reinterpret_cast<char*>(out),
                                                  reinterpret_cast<char*>(d_weight), idx, 4, int64_t{32}, int64_t{5},
                                                  int64_t{32}, int64_t{32}, false);
    const char* condition = "ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"";
    EXPECT_EQ(printed,
              assert_line("IndexKernelUtils.cu", 22, "vectorized_gather_kernel", {2, 0, 0}, {0, 0, 0}, condition) +
                  assert_line("IndexKernelUtils.cu", 22, "vectorized_gather_kernel", {2, 0, 0}, {1, 0, 0}, condition));
  });
}

// gather(src (4, 3), dim 0, index (2, 3)) through TensorIterator: iter shape (3, 2) (fastest first), operands
// self (out), src restrided with stride 0 along dim 0, index; byte strides per dimension.
GatherClosure gather_closure(float* out, const float* src, const int64_t* index) {
  GatherClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 2;
  c.offset_calc.sizes[0].divisor = 3;  // columns
  c.offset_calc.sizes[1].divisor = 2;  // rows of the index
  uint32_t column[3] = {4, 4, 8}, row[3] = {12, 0, 24};  // out, src (dim 0 restrided to 0), index (int64)
  for (int a = 0; a < 3; ++a) {
    c.offset_calc.strides[0][a] = column[a];
    c.offset_calc.strides[1][a] = row[a];
  }
  c.index_ptr = reinterpret_cast<const char*>(index);
  c.index_size = 4;    // src.size(0)
  c.self_ptr = reinterpret_cast<char*>(out);
  c.index_stride = 3;  // src.stride(0), in elements
  c.numel = 6;
  c.src_ptr = reinterpret_cast<const char*>(src);
  return c;
}

TEST_F(Aten, ScatterGatherElementwiseGathers) {
  std::vector<float> src{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
  std::vector<int64_t> index{3, 0, 1, 2, 2, 0};
  float* d_src = device_copy(src);
  int64_t* d_index = device_copy(index);
  float* out = device_copy(std::vector<float>(6, -1.0f));
  ASSERT_EQ(launch(kGatherOpaque4, 1, 128, 6, gather_closure(out, d_src, d_index)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // out[i][j] = src[index[i][j]][j]
  EXPECT_EQ(host_copy(out, 6), (std::vector<float>{30, 1, 12, 20, 21, 2}));
}

TEST(AtenAssert, ScatterGatherElementwiseOutOfRangeAssertsInTheThreadOfTheElement) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* d_src = device_copy(std::vector<float>(12, 1.0f));
    int64_t* d_index = device_copy(std::vector<int64_t>{3, 0, 1, 2, 4, 0});  // element 4 (row 1, column 1): 4 >= 4
    float* out = device_copy(std::vector<float>(6));
    std::string printed =
        launch_expecting_assert(kGatherOpaque4, 1, 128, 6, gather_closure(out, d_src, d_index));
    EXPECT_EQ(printed, assert_line("ScatterGatherKernel.cu", 257, "operator()", {0, 0, 0}, {4, 0, 0},
                                   "idx_dim >= 0 && idx_dim < index_size && \"scatter gather kernel index out of "
                                   "bounds\""));
  });
}

TEST(AtenAssert, ScatterGatherElementwiseThreadOfALaterElement) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    // A 1-d gather of 3000 elements: element 1200 is block 1 (1024 per block), thread (1200 - 1024) % 128 = 48.
    std::vector<int64_t> index(3000, 0);
    index[1200] = -2;
    float* d_src = device_copy(std::vector<float>(5, 1.0f));
    int64_t* d_index = device_copy(index);
    float* out = device_copy(std::vector<float>(3000));
    GatherClosure c;
    std::memset(&c, 0, sizeof c);
    c.offset_calc.dims = 1;
    c.offset_calc.sizes[0].divisor = 3000;
    c.offset_calc.strides[0][0] = 4;
    c.offset_calc.strides[0][1] = 0;
    c.offset_calc.strides[0][2] = 8;
    c.index_ptr = reinterpret_cast<const char*>(d_index);
    c.index_size = 5;
    c.self_ptr = reinterpret_cast<char*>(out);
    c.index_stride = 1;
    c.numel = 3000;
    c.src_ptr = reinterpret_cast<const char*>(d_src);
    std::string printed = launch_expecting_assert(kGatherOpaque4, 3, 128, 3000, c);
    EXPECT_EQ(printed, assert_line("ScatterGatherKernel.cu", 257, "operator()", {1, 0, 0}, {48, 0, 0},
                                   "idx_dim >= 0 && idx_dim < index_size && \"scatter gather kernel index out of "
                                   "bounds\""));
  });
}

TEST_F(Aten, ScatterAddAccumulatesIntoTheIndexedRows) {
  // self (3,) zeros; self.scatter_add_(0, index, src): src (4,), index (4,)
  float* self = device_copy(std::vector<float>{0, 0, 0});
  float* src = device_copy(std::vector<float>{1.5f, 2.0f, 4.0f, 8.0f});
  int64_t* index = device_copy(std::vector<int64_t>{2, 0, 2, 1});
  GatherClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 1;
  c.offset_calc.sizes[0].divisor = 4;
  c.offset_calc.strides[0][0] = 0;  // self restrided: stride 0 along dim
  c.offset_calc.strides[0][1] = 4;
  c.offset_calc.strides[0][2] = 8;
  c.index_ptr = reinterpret_cast<const char*>(index);
  c.index_size = 3;
  c.self_ptr = reinterpret_cast<char*>(self);
  c.index_stride = 1;
  c.numel = 3;
  c.src_ptr = reinterpret_cast<const char*>(src);
  ASSERT_EQ(launch(kScatterAddFloat, 1, 128, 4, c), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(self, 3), (std::vector<float>{2.0f, 8.0f, 5.5f}));
}

FillClosure<float> fill_closure(float* self, const int64_t* index, int64_t n, int64_t dim_size, float value) {
  FillClosure<float> c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 1;
  c.offset_calc.sizes[0].divisor = static_cast<uint32_t>(n);
  c.offset_calc.strides[0][0] = 0;  // self restrided along dim
  c.offset_calc.strides[0][1] = 8;  // index
  c.index_ptr = reinterpret_cast<const char*>(index);
  c.index_size = dim_size;
  c.self_ptr = reinterpret_cast<char*>(self);
  c.index_stride = 1;
  c.numel = dim_size;
  c.src_val = value;
  return c;
}

TEST_F(Aten, ScatterFillWritesTheValueAtTheIndices) {
  float* self = device_copy(std::vector<float>{1, 1, 1, 1, 1});
  int64_t* index = device_copy(std::vector<int64_t>{3, 0});
  ASSERT_EQ(launch(kScatterFillOpaque4, 1, 128, 2, fill_closure(self, index, 2, 5, 7.5f)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(self, 5), (std::vector<float>{7.5f, 1, 1, 7.5f, 1}));
}

TEST(AtenAssert, ScatterFillOutOfRangeAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* self = device_copy(std::vector<float>(5, 1.0f));
    int64_t* index = device_copy(std::vector<int64_t>{3, 0, 5});
    std::string printed = launch_expecting_assert(kScatterFillOpaque4, 1, 128, 3, fill_closure(self, index, 3, 5, 2.0f));
    EXPECT_EQ(printed, assert_line("ScatterGatherKernel.cu", 504, "operator()", {0, 0, 0}, {2, 0, 0},
                                   "idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\""));
  });
}

// ---- IndexKernel.cu ---------------------------------------------------------------------------------------------------

// gpu_index_kernel's closure, written from IndexKernel.cu; captures in the order of torch's host stub
// (__nv_dl_wrapper_t<..., OffsetCalculator<3, unsigned int, false>, char* const, char* const, unsigned long const,
// std::array<char*, 25>, std::array<long, 25>, std::array<long, 25>, f>).
struct IndexClosure {
  OffsetCalc<3> offset_calc;
  char* out_ptr;
  char* in_ptr;
  uint64_t num_indices;
  char* index_ptrs[25];
  int64_t sizes[25];
  int64_t strides[25];
  EmptyFunctor f;
};
static_assert(sizeof(IndexClosure) == 1240, "cubin: index_elementwise_kernel of gpu_index_kernel, parameter 1");

// x (5, 2) float, x[idx] with idx (n,): iter shape (2, n) (fastest first); operands out (n, 2), x restrided with
// stride 0 along the indexed dim, idx broadcast along the row. index stride: x.stride(0) in bytes.
IndexClosure index_closure(float* out, float* x, int64_t* idx, uint32_t n) {
  IndexClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 2;
  c.offset_calc.sizes[0].divisor = 2;
  c.offset_calc.sizes[1].divisor = n;
  uint32_t inner[3] = {4, 4, 0}, outer[3] = {8, 0, 8};
  for (int a = 0; a < 3; ++a) {
    c.offset_calc.strides[0][a] = inner[a];
    c.offset_calc.strides[1][a] = outer[a];
  }
  c.out_ptr = reinterpret_cast<char*>(out);
  c.in_ptr = reinterpret_cast<char*>(x);
  c.num_indices = 1;
  c.index_ptrs[0] = reinterpret_cast<char*>(idx);
  c.sizes[0] = 5;
  c.strides[0] = 8;
  return c;
}

TEST_F(Aten, AdvancedIndexingGathersRowsWithNegativeIndices) {
  float* x = device_copy(std::vector<float>{0, 1, 10, 11, 20, 21, 30, 31, 40, 41});
  int64_t* idx = device_copy(std::vector<int64_t>{3, -1, 0});
  float* out = device_copy(std::vector<float>(6, -1.0f));
  ASSERT_EQ(launch(kIndexOpaque4, 1, 128, int64_t{6}, index_closure(out, x, idx, 3)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(out, 6), (std::vector<float>{30, 31, 40, 41, 0, 1}));
}

TEST_F(Aten, AdvancedIndexPutWritesRows) {
  // x[idx] = v: out is x (restrided), in is v (n, 2)
  float* x = device_copy(std::vector<float>(10, 0.0f));
  float* v = device_copy(std::vector<float>{1, 2, 3, 4});
  int64_t* idx = device_copy(std::vector<int64_t>{4, 1});
  IndexClosure c = index_closure(x, v, idx, 2);
  c.offset_calc.strides[1][0] = 0;  // out: x restrided along the indexed dim
  c.offset_calc.strides[1][1] = 8;  // in: v's rows
  ASSERT_EQ(launch(kIndexPutOpaque4, 1, 128, int64_t{4}, c), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(x, 10), (std::vector<float>{0, 0, 3, 4, 0, 0, 0, 0, 1, 2}));
}

TEST(AtenAssert, AdvancedIndexingOutOfRangeAssertsInTheThreadsOfTheRow) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* x = device_copy(std::vector<float>(10, 1.0f));
    int64_t* idx = device_copy(std::vector<int64_t>{3, -6, 0});  // -6 < -5: elements 2 and 3 (row 1)
    float* out = device_copy(std::vector<float>(6));
    std::string printed = launch_expecting_assert(kIndexOpaque4, 1, 128, int64_t{6}, index_closure(out, x, idx, 3));
    const char* condition = "-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"";
    EXPECT_EQ(printed, assert_line("IndexKernel.cu", 111, "operator()", {0, 0, 0}, {2, 0, 0}, condition) +
                           assert_line("IndexKernel.cu", 111, "operator()", {0, 0, 0}, {3, 0, 0}, condition));
  });
}

TEST_F(Aten, OtherIndexElementwiseKernelsStayNoOps) {
  struct {
    unsigned char bytes[520];  // flip's closure: cubin size 520
  } closure{};
  ASSERT_EQ(launch(kFlipOpaque4, 1, 128, int64_t{0}, closure), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// ---- Copy.cu --------------------------------------------------------------------------------------------------------

// gpu_kernel_impl_nocast's [=] closure for a unary lambda (elementwise_kernel): offset_calc, the out and in pointers,
// then 16 bytes: for gpu_kernel_impl's closure the (empty) lambda @520 and the dtypes (out, in) @521.
struct CopyClosure {
  OffsetCalc<2> offset_calc;
  std::array<char*, 2> data;
  EmptyFunctor f;
  int8_t dtypes[2];
  unsigned char unused[13];
};
static_assert(sizeof(CopyClosure) == 536, "cubin: elementwise_kernel<128, 2, gpu_kernel_impl_nocast<direct_copy...>>");
static_assert(offsetof(CopyClosure, dtypes) == 521);

// memory::LoadWithCast<1> {std::array<ScalarType, 1> dtypes; std::array<uint32_t, 1> element_sizes} and
// StoreWithCast<1> {ScalarType dtype; uint32_t element_size}: 8 bytes each in the cubins.
struct WithCast {
  int8_t dtype;
  uint32_t element_size;
};
static_assert(sizeof(WithCast) == 8, "cubin: unrolled_elementwise_kernel<..., LoadWithCast<1>, StoreWithCast<1>>");
constexpr int8_t kScalarInt = 3, kScalarLong = 4;  // c10::ScalarType::Int, Long

// x.t().contiguous() (and copy_ into a contiguous tensor) of X (rows, cols), element size `size`: the iterator's
// shape is the output's (cols, rows) fastest first, i.e. (rows, cols) sizes; output byte strides (size, rows * size),
// input (cols * size, size). Element idx = rows * c + r is X[r][c].
CopyClosure transposed_copy_closure(void* out, const void* x, uint32_t rows, uint32_t cols, uint32_t out_size,
                                    uint32_t in_size) {
  CopyClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 2;
  c.offset_calc.sizes[0].divisor = rows;
  c.offset_calc.sizes[1].divisor = cols;
  c.offset_calc.strides[0][0] = out_size;
  c.offset_calc.strides[0][1] = cols * in_size;
  c.offset_calc.strides[1][0] = rows * out_size;
  c.offset_calc.strides[1][1] = in_size;
  c.data = {static_cast<char*>(out), static_cast<char*>(const_cast<void*>(x))};
  return c;
}

TEST_F(Aten, StridedCopyTransposesAFloatMatrix) {
  const uint32_t rows = 50, cols = 70;  // X (50, 70); out = X.t().contiguous(), (70, 50)
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 7.0f;
  float* in = device_copy(x);
  float* out = device_copy(std::vector<float>(rows * cols, -1.0f));
  // launch_legacy_kernel<128, 2>: grid ceil(3500 / 256)
  ASSERT_EQ(launch(kCopyStridedFloat, 14, 128, int{3500}, transposed_copy_closure(out, in, rows, cols, 4, 4)),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = host_copy(out, rows * cols);
  for (uint32_t c = 0; c < cols; ++c)
    for (uint32_t r = 0; r < rows; ++r) ASSERT_EQ(got[c * rows + r], x[r * cols + c]) << c << ", " << r;
}

TEST_F(Aten, StridedCopyOfAnExpandedRowRepeatsIt) {
  // b[:5].expand(4, 5).contiguous(): input stride 0 along the expanded dimension.
  int64_t* in = device_copy(std::vector<int64_t>{10, -11, 12, 1LL << 40, 14});
  int64_t* out = device_copy(std::vector<int64_t>(20, -1));
  CopyClosure c;
  std::memset(&c, 0, sizeof c);
  c.offset_calc.dims = 2;
  c.offset_calc.sizes[0].divisor = 5;
  c.offset_calc.sizes[1].divisor = 4;
  c.offset_calc.strides[0][0] = 8;
  c.offset_calc.strides[0][1] = 8;
  c.offset_calc.strides[1][0] = 40;
  c.offset_calc.strides[1][1] = 0;
  c.data = {reinterpret_cast<char*>(out), reinterpret_cast<char*>(in)};
  ASSERT_EQ(launch(kCopyStridedLong, 1, 128, int{20}, c), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = host_copy(out, 20);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(got[i], (std::vector<int64_t>{10, -11, 12, 1LL << 40, 14})[i % 5]) << i;
}

TEST_F(Aten, ConvertingCopyRoundsFloatsToHalf) {
  // x.half() of 2500 floats: vectorized_elementwise_kernel<8, ...>, 8 elements per thread, grid ceil(2500 / 1024)
  // (the last block partial). Expected: the host's IEEE binary16 conversion (round to nearest even).
  const int n = 2500;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = (static_cast<float>(i) - 1250.0f) * 0.0137f + 1e-4f * static_cast<float>(i % 7);
  x[0] = 65520.0f;  // rounds to infinity
  x[1] = -0.0f;
  x[2] = 1e-7f;  // subnormal in half
  float* in = device_copy(x);
  uint16_t* out = device_copy(std::vector<uint16_t>(n, 0xffff));
  std::array<char*, 2> data{reinterpret_cast<char*>(out), reinterpret_cast<char*>(in)};
  ASSERT_EQ(launch(kConvertFloatToHalf, 3, 128, n, EmptyFunctor{}, data), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = host_copy(out, n);
  for (int i = 0; i < n; ++i) {
    _Float16 h = static_cast<_Float16>(x[i]);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(got[i], bits) << i << ": " << x[i];
  }
}

std::vector<int64_t> longs_to_narrow() {
  std::vector<int64_t> x;
  for (int64_t i = 0; i < 1000; ++i) x.push_back((i - 500) * 3);
  x[7] = (int64_t{1} << 32) + 5;  // wraps to 5
  x[8] = -(int64_t{1} << 31) - 1;  // wraps to 2^31 - 1
  return x;
}

TEST_F(Aten, DynamicCastingCopyNarrowsLongsToInts) {
  // x.to(torch.int32) of a contiguous long tensor: the lambda takes int; LoadWithCast converts from long, StoreWithCast
  // stores int. launch_unrolled_kernel: grid ceil(1000 / 512).
  auto x = longs_to_narrow();
  int64_t* in = device_copy(x);
  int32_t* out = device_copy(std::vector<int32_t>(x.size(), -1));
  std::array<char*, 2> data{reinterpret_cast<char*>(out), reinterpret_cast<char*>(in)};
  ASSERT_EQ(launch(kCastCopyToInt, 2, 128, int{1000}, EmptyFunctor{}, data, EmptyFunctor{}, EmptyFunctor{},
                   WithCast{kScalarLong, 8}, WithCast{kScalarInt, 4}),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = host_copy(out, x.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], static_cast<int32_t>(x[i])) << i;
}

TEST_F(Aten, DynamicCastingStridedCopyNarrowsATransposedLongMatrix) {
  // int_out.copy_(X.t()) with X (40, 25) long: elementwise_kernel<128, 4, gpu_kernel_impl<...>>, grid ceil(1000 / 512).
  auto x = longs_to_narrow();
  int64_t* in = device_copy(x);
  int32_t* out = device_copy(std::vector<int32_t>(x.size(), -1));
  CopyClosure c = transposed_copy_closure(out, in, 40, 25, 4, 8);
  c.dtypes[0] = kScalarInt;
  c.dtypes[1] = kScalarLong;
  ASSERT_EQ(launch(kCastCopyStridedToInt, 2, 128, int{1000}, c), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = host_copy(out, x.size());
  for (int col = 0; col < 25; ++col)
    for (int r = 0; r < 40; ++r)
      ASSERT_EQ(got[col * 40 + r], static_cast<int32_t>(x[r * 25 + col])) << col << ", " << r;
}

TEST_F(Aten, OtherElementwiseKernelsOfTheCopyFamiliesStayNoOps) {
  // torch.abs's vectorized_elementwise_kernel: the copy model does not claim it, so its output keeps what it held.
  float* in = device_copy(std::vector<float>{-1, -2, -3, -4});
  float* out = device_copy(std::vector<float>{7, 7, 7, 7});
  std::array<char*, 2> data{reinterpret_cast<char*>(out), reinterpret_cast<char*>(in)};
  ASSERT_EQ(launch(kAbsFloat, 1, 128, int{4}, EmptyFunctor{}, data), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(out, 4), (std::vector<float>{7, 7, 7, 7}));
}

// ---- ForeachBinaryOpList.cu (torch._foreach_copy_) ----------------------------------------------------------------

// TensorListMetadata<2> (MultiTensorApply.cuh) as CUDA 13 builds size it: 448 tensors, 2240 blocks, uint16_t
// block_to_tensor.
struct TensorListMetadata2 {
  const void* addresses[2][448];
  int64_t numel_for_tensor[448];
  uint16_t block_to_tensor[2240];
  int32_t block_to_chunk[2240];
  int32_t start_tensor_this_launch;
};
static_assert(sizeof(TensorListMetadata2) == 24200, "cubin: multi_tensor_apply_kernel<TensorListMetadata<2>, ...>");

// multi_tensor_apply<2> over {src, self} as it fills the metadata for one launch: one block per 65536-element chunk.
std::unique_ptr<TensorListMetadata2> foreach_metadata(const std::vector<std::pair<const void*, void*>>& tensors,
                                                      const std::vector<int64_t>& numels, unsigned* blocks) {
  auto tl = std::make_unique<TensorListMetadata2>();
  std::memset(tl.get(), 0, sizeof *tl);
  *blocks = 0;
  for (size_t t = 0; t < tensors.size(); ++t) {
    tl->addresses[0][t] = tensors[t].first;
    tl->addresses[1][t] = tensors[t].second;
    tl->numel_for_tensor[t] = numels[t];
    for (int64_t chunk = 0; chunk * 65536 < numels[t]; ++chunk) {
      tl->block_to_tensor[*blocks] = static_cast<uint16_t>(t);
      tl->block_to_chunk[*blocks] = static_cast<int32_t>(chunk);
      ++*blocks;
    }
  }
  return tl;
}

TEST_F(Aten, ForeachCopyCopiesEveryChunkOfEveryTensor) {
  std::vector<int64_t> a(70000), b(5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int64_t>(i) * 7 - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = -static_cast<int64_t>(i) - (int64_t{1} << 50);
  int64_t *src_a = device_copy(a), *src_b = device_copy(b);
  int64_t *dst_a = device_copy(std::vector<int64_t>(a.size())), *dst_b = device_copy(std::vector<int64_t>(b.size()));
  unsigned blocks = 0;
  auto tl = foreach_metadata({{src_a, dst_a}, {src_b, dst_b}}, {70000, 5}, &blocks);
  ASSERT_EQ(blocks, 3u);  // a's two chunks, b's one
  ASSERT_EQ(launch(kForeachCopyLong, blocks, 512, *tl, EmptyFunctor{}, EmptyFunctor{}), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(dst_a, a.size()), a);
  EXPECT_EQ(host_copy(dst_b, b.size()), b);
}

TEST_F(Aten, ForeachCopyConvertsLongsToFloats) {
  std::vector<int64_t> a{0, 1, -2, 16777217, int64_t{1} << 40};  // 2^24 + 1 rounds to even
  int64_t* src = device_copy(a);
  float* dst = device_copy(std::vector<float>(a.size(), -1));
  unsigned blocks = 0;
  auto tl = foreach_metadata({{src, dst}}, {static_cast<int64_t>(a.size())}, &blocks);
  ASSERT_EQ(launch(kForeachCopyLongToFloat, blocks, 512, *tl, EmptyFunctor{}, EmptyFunctor{}), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(dst, a.size()), (std::vector<float>{0, 1, -2, 16777216, 1099511627776.0f}));
}

TEST_F(Aten, OtherForeachKernelsStayNoOps) {
  std::vector<float> a{-1, 2};
  float* src = device_copy(a);
  float* dst = device_copy(std::vector<float>{5, 5});
  unsigned blocks = 0;
  auto tl = foreach_metadata({{src, dst}}, {2}, &blocks);
  ASSERT_EQ(launch(kForeachClampMinFloat, blocks, 512, *tl, EmptyFunctor{}, EmptyFunctor{}, 0.0f), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(dst, 2), (std::vector<float>{5, 5}));
}

// torch.full((1030,), 2.5) in float and in half: every element gets the functor's value, nothing past the end.
TEST_F(Aten, FillSetsEveryElementToTheFunctorsValue) {
  const int n = 1030;
  float* floats = device_copy(std::vector<float>(n + 2, -1.0f));
  std::array<char*, 1> float_data{reinterpret_cast<char*>(floats)};
  ASSERT_EQ(launch(kFillFloat, 2, 128, n, 2.5f, float_data), cudaSuccess);
  uint16_t* halves = device_copy(std::vector<uint16_t>(n + 2, 0xffff));
  std::array<char*, 1> half_data{reinterpret_cast<char*>(halves)};
  _Float16 value = static_cast<_Float16>(-0.375f);
  uint16_t bits;
  std::memcpy(&bits, &value, 2);
  ASSERT_EQ(launch(kFillHalf, 2, 128, n, bits, half_data), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> want_floats(n + 2, 2.5f);
  want_floats[n] = want_floats[n + 1] = -1.0f;
  EXPECT_EQ(host_copy(floats, n + 2), want_floats);
  std::vector<uint16_t> want_halves(n + 2, bits);
  want_halves[n] = want_halves[n + 1] = 0xffff;
  EXPECT_EQ(host_copy(halves, n + 2), want_halves);
}

// The parameter sizes the copy models give the driver, against those of torch 2.15's cubins (cubin_facts.py); the
// other members of the families are not theirs.
TEST_F(Aten, CopyParamSizesAreThoseOfTheCubins) {
  using Sizer = int (*)(const char*, size_t*, unsigned);
  auto copy = reinterpret_cast<Sizer>(dlsym(RTLD_DEFAULT, "simaten_copy_param_sizes"));
  auto foreach_copy = reinterpret_cast<Sizer>(dlsym(RTLD_DEFAULT, "simaten_foreach_copy_param_sizes"));
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(foreach_copy, nullptr);
  auto sizes = [](Sizer sizer, const char* name) {
    size_t buffer[16];
    int count = sizer(name, buffer, 16);
    return count < 0 ? std::vector<size_t>{static_cast<size_t>(count)} : std::vector<size_t>(buffer, buffer + count);
  };
  EXPECT_EQ(sizes(copy, kCopyStridedFloat), (std::vector<size_t>{4, 536}));
  EXPECT_EQ(sizes(copy, kCastCopyStridedToInt), (std::vector<size_t>{4, 536}));
  EXPECT_EQ(sizes(copy, kConvertFloatToHalf), (std::vector<size_t>{4, 1, 16}));
  EXPECT_EQ(sizes(copy, kCastCopyToInt), (std::vector<size_t>{4, 1, 16, 1, 1, 8, 8}));
  EXPECT_EQ(sizes(foreach_copy, kForeachCopyLong), (std::vector<size_t>{24200, 1, 1}));
  EXPECT_EQ(sizes(foreach_copy, kForeachCopyLongToFloat), (std::vector<size_t>{24200, 1, 1}));
  const auto not_modelled = std::vector<size_t>{static_cast<size_t>(SIMCUDA_NOT_MODELLED)};
  EXPECT_EQ(sizes(copy, kAbsFloat), not_modelled);
  EXPECT_EQ(sizes(copy, kBceVectorizedFloat), not_modelled);
  EXPECT_EQ(sizes(copy, kBceElementwiseFloat), not_modelled);
  EXPECT_EQ(sizes(foreach_copy, kForeachClampMinFloat), not_modelled);
}

// ---- MultinomialKernel.cu ---------------------------------------------------------------------------------------------

// torch.multinomial(probs (3, 5), 1): sampleMultinomialOnce<<<min(3, SMs * 4), 32 (one warp)>>>.
TEST_F(Aten, MultinomialOncePicksTheBucketOfTheSample) {
  std::vector<float> probs{0, 1, 3, 0, 0,    // 0.25, 0.75: sample 0.5 falls in category 2
                           2, 0, 0, 0, 2,    // 0.5, 0.5: sample 0.25 falls in category 0
                           0, 0, 0, 0, 7};   // only category 4
  float* d_probs = device_copy(probs);
  float* sampled = device_copy(std::vector<float>{0.5f, 0.25f, 0.9f});
  int64_t* dest = device_copy(std::vector<int64_t>{-1, -1, -1});
  ASSERT_EQ(launch(kMultinomialOnceFloat, 3, 32, dest, int64_t{3}, 5, static_cast<const float*>(sampled),
                   static_cast<const float*>(d_probs), 5, 1),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(dest, 3), (std::vector<int64_t>{2, 0, 4}));
}

TEST(AtenAssert, MultinomialOnceNanProbabilityAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    std::vector<float> probs(3 * 40, 1.0f);
    probs[1 * 40 + 37] = std::nanf("");  // row 1 (block 1), category 37: thread 5 on its second pass
    float* d_probs = device_copy(probs);
    float* sampled = device_copy(std::vector<float>{0.5f, 0.5f, 0.5f});
    int64_t* dest = device_copy(std::vector<int64_t>(3));
    std::string printed = launch_expecting_assert(kMultinomialOnceFloat, 3, 32, dest, int64_t{3}, 40,
                                                  static_cast<const float*>(sampled),
                                                  static_cast<const float*>(d_probs), 40, 1);
    EXPECT_EQ(printed, assert_line("MultinomialKernel.cu", 216, "sampleMultinomialOnce", {1, 0, 0}, {5, 0, 0},
                                   "!at::_isnan(val)"));
  });
}

TEST(AtenAssert, MultinomialOnceZeroRowAndNegativeProbabilityAssert) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    std::vector<float> probs{1, 1, 1, 1,  0, 0, 0, 0,  1, -0.5f, 1, 1};  // row 1 all zero; row 2 has -0.5 at 1
    float* d_probs = device_copy(probs);
    float* sampled = device_copy(std::vector<float>{0.5f, 0.5f, 0.5f});
    int64_t* dest = device_copy(std::vector<int64_t>(3));
    std::string printed = launch_expecting_assert(kMultinomialOnceFloat, 3, 32, dest, int64_t{3}, 4,
                                                  static_cast<const float*>(sampled),
                                                  static_cast<const float*>(d_probs), 4, 1);
    EXPECT_EQ(printed,
              assert_line("MultinomialKernel.cu", 229, "sampleMultinomialOnce", {1, 0, 0}, {0, 0, 0}, "sum > accZero") +
                  assert_line("MultinomialKernel.cu", 218, "sampleMultinomialOnce", {2, 0, 0}, {1, 0, 0},
                              "!(val < zero)"));
  });
}

TEST_F(Aten, RenormRowsNormalizesEachRow) {
  float* dist = device_copy(std::vector<float>{1, 3, 0, 4, 0, 0, 2, 2, 4});
  ASSERT_EQ(launch(kRenormRowsFloat, 3, 32, dist, int64_t{3}, int64_t{3}), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(host_copy(dist, 9), (std::vector<float>{0.25f, 0.75f, 0, 1, 0, 0, 0.25f, 0.25f, 0.5f}));
}

TEST(AtenAssert, RenormRowsNegativeProbabilityAsserts) {
  FRESH_PROCESS({
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    float* dist = device_copy(std::vector<float>{1, 3, 0, 4, -1, 0, 2, 2, 4});
    std::string printed = launch_expecting_assert(kRenormRowsFloat, 3, 32, dist, int64_t{3}, int64_t{3});
    EXPECT_EQ(printed, assert_line("MultinomialKernel.cu", 60, "renormRowsL1", {1, 0, 0}, {1, 0, 0}, "!(val < zero)"));
  });
}

// The closure sizes the library gives the driver, against those of torch 2.15's cubins for these instances.
TEST_F(Aten, ScatterGatherClosureSizesAreThoseOfTheCubins) {
  using Size = long (*)(const char*);
  auto size = reinterpret_cast<Size>(dlsym(RTLD_DEFAULT, "simaten_scatter_gather_closure_size"));
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size(kGatherOpaque4), 664);
  EXPECT_EQ(size(kScatterAddFloat), 664);
  EXPECT_EQ(size(kScatterFillOpaque4), 560);
  EXPECT_EQ(size(kScatterFillComplexDouble), 576);
}

// Kernels of other families stay no-ops: a launch of a torch kernel nothing models completes.
TEST_F(Aten, KernelsWithoutABodyStillRun) {
  const char* backward = LOSS_NS "39nll_loss_backward_reduce_cuda_kernel_2dIflEEvPT_PKS3_PKT0_S6_S6_biill";
  float* g = device_copy(std::vector<float>(4));
  ASSERT_EQ(launch(backward, 1, 32, g, static_cast<const float*>(g), static_cast<const int64_t*>(nullptr),
                   static_cast<const float*>(nullptr), static_cast<const float*>(g), true, 1, 1, int64_t{1},
                   int64_t{-100}),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
