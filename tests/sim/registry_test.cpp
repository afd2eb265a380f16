// Argument sizes read from mangled kernel names: the simulator copies launch arguments by these sizes.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

// Families that share a function name, each modelling some of its members (simcuda.h): a kernel takes the body of the
// first family whose sizer claims it; one that none claims runs as a no-op.
void float_body(void**, dim3, dim3) {}
void int_body(void**, dim3, dim3) {}
// test::shared::member<T>(T*, long)
constexpr const char* kFloatMember = "_ZN4test6shared6memberIfEEvPT_l";
constexpr const char* kIntMember = "_ZN4test6shared6memberIiEEvPT_l";
constexpr const char* kDoubleMember = "_ZN4test6shared6memberIdEEvPT_l";

template <char kType>
int sizes_of_members_of_type(const char* mangled, size_t* sizes, unsigned max_count) {
  std::string_view name(mangled);
  if (name.find(std::string("memberI") + kType + "E") == std::string_view::npos) return SIMCUDA_NOT_MODELLED;
  if (max_count < 2) return -1;
  sizes[0] = 8;
  sizes[1] = 16;  // not the name's 8: the family's own sizes are the ones used
  return 2;
}

TEST(KernelFamilies, MembersNoFamilyModelsRunAsNoOps) {
  using simcuda::register_family;
  register_family("test::shared::member", float_body, sizes_of_members_of_type<'f'>);
  register_family("test::shared::member", int_body, sizes_of_members_of_type<'i'>);
  register_family("test::shared::member", float_body, sizes_of_members_of_type<'f'>);  // again: replaces, not adds
  static char stubs[3];
  simcuda::bind_host_stub(&stubs[0], kFloatMember);
  simcuda::bind_host_stub(&stubs[1], kIntMember);
  simcuda::bind_host_stub(&stubs[2], kDoubleMember);

  simcuda::Kernel* f = simcuda::kernel_by_name(kFloatMember);
  simcuda::Kernel* i = simcuda::kernel_by_name(kIntMember);
  simcuda::Kernel* d = simcuda::kernel_by_name(kDoubleMember);
  ASSERT_TRUE(f && i && d);
  EXPECT_EQ(simcuda::resolve_for_launch(f), &float_body);
  EXPECT_EQ(simcuda::resolve_for_launch(i), &int_body) << "the second family claims what the first does not";
  EXPECT_EQ(simcuda::resolve_for_launch(d), nullptr) << "no family models it: a no-op";
  EXPECT_EQ(f->param_sizes, (std::vector<size_t>{8, 16}));
  EXPECT_EQ(i->param_sizes, (std::vector<size_t>{8, 16}));
  EXPECT_EQ(d->param_sizes, (std::vector<size_t>{8, 8})) << "a no-op keeps the sizes its name gives";
}

}  // namespace
