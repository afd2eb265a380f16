// Argument sizes read from mangled kernel names: the simulator copies launch arguments by these sizes.
#include <gtest/gtest.h>

#include "driver/kernel_registry.h"

namespace {

using simcuda::param_sizes_from_mangled_name;

TEST(KernelParamSizes, ScalarsAndPointersOfATemplateKernel) {
  // at::native::nll_loss_forward_reduce_cuda_kernel_2d<float, long>(float*, float*, float const*, long const*,
  //                                                                 float const*, bool, long, long, long, long)
  auto sizes = param_sizes_from_mangled_name(
      "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(*sizes, (std::vector<size_t>{8, 8, 8, 8, 8, 1, 8, 8, 8, 8}));
}

TEST(KernelParamSizes, MixedWidths) {
  // f(char, short, int, unsigned long long, double, float, int const*)
  auto sizes = param_sizes_from_mangled_name("_Z1fcsiydfPKi");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(*sizes, (std::vector<size_t>{1, 2, 4, 8, 8, 4, 8}));
}

TEST(KernelParamSizes, NoParameters) {
  auto sizes = param_sizes_from_mangled_name("_Z6kernelv");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_TRUE(sizes->empty());
}

TEST(KernelParamSizes, StructParametersCannotBeSized) {
  // g(dim3): a by-value struct has no size in the name
  EXPECT_FALSE(param_sizes_from_mangled_name("_Z1g4dim3").has_value());
}

TEST(KernelParamSizes, UnmangledNamesCannotBeSized) {
  EXPECT_FALSE(param_sizes_from_mangled_name("add_kernel").has_value());
  EXPECT_FALSE(param_sizes_from_mangled_name("").has_value());
}

TEST(KernelParamSizes, FunctionPointerParameterIsAPointer) {
  // h(void (*)(int), int)
  auto sizes = param_sizes_from_mangled_name("_Z1hPFviEi");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(*sizes, (std::vector<size_t>{8, 4}));
}

}  // namespace

namespace {

using simcuda::family_name_of;

TEST(KernelFamilies, AFamilyIsTheFunctionWithoutTemplateArgumentsParametersAndAnonymousNamespaces) {
  // As PyTorch 2.15's libtorch_cuda.so registers it: in an anonymous namespace of Loss.cu, for <float, float, long>.
  EXPECT_EQ(family_name_of("_ZN2at6native39_GLOBAL__N__6bd09d29_7_Loss_cu_5b0651e138nll_loss_forward_reduce_cuda_"
                           "kernel_2dIfflEEvPT_S4_PKS3_PKT1_S6_bllll"),
            "at::native::nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(family_name_of("_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll"),
            "at::native::nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(family_name_of("_Z6kernelv"), "kernel");
  EXPECT_EQ(family_name_of("triton_poi_fused_0"), "") << "not a mangled function";
}

}  // namespace
