// demangle and short_kernel_name on the names kernels really have: C++ templates from PyTorch and CUB, C names, and
// Triton's generated names, which are not mangled at all.
#include "core/demangle.h"

#include <gtest/gtest.h>

namespace firstassert {
namespace {

TEST(Demangle, MangledNamesBecomeReadable) {
  EXPECT_EQ(demangle("_Z6kernelPi"), "kernel(int*)");
  EXPECT_EQ(demangle("_ZN3cub6detail6reduce6kernelIiEEvv"), "void cub::detail::reduce::kernel<int>()");
  EXPECT_EQ(demangle("_ZN12_GLOBAL__N_16kernelEv"), "(anonymous namespace)::kernel()");
  EXPECT_EQ(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"),
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
            ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
}

TEST(Demangle, NamesThatAreNotMangledComeBackAsTheyAre) {
  EXPECT_EQ(demangle("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(demangle("my_c_kernel"), "my_c_kernel");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle(nullptr), "");
}

TEST(ShortKernelName, StripsReturnTypeScopeTemplatesAndParameters) {
  EXPECT_EQ(short_kernel_name("void at::native::nll_loss_forward_reduce_cuda_kernel_2d<float, long>(float*, float*, "
                              "float const*, long const*, float const*, bool, long, long, long)"),
            "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(short_kernel_name(demangle(
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_")),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(short_kernel_name("kernel(int*)"), "kernel");
  EXPECT_EQ(short_kernel_name("void cub::detail::reduce::kernel<int>()"), "kernel");
  EXPECT_EQ(short_kernel_name("(anonymous namespace)::kernel()"), "kernel");
  EXPECT_EQ(short_kernel_name("void foo<(anonymous namespace)::Bar, (char)1>(int (*)(int))"), "foo");
}

TEST(ShortKernelName, LambdaTemplateArguments) {
  EXPECT_EQ(short_kernel_name(
                "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::(anonymous "
                "namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
                "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::(anonymous "
                "namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
                "const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::"
                "native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
                "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::(anonymous "
                "namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
                "const::{lambda(float)#1} const&)::{lambda(int)#1})"),
            "elementwise_kernel");
}

TEST(WithoutCloneSuffix, EitherDemanglersCloneSuffixGoes) {
  EXPECT_EQ(without_clone_suffix("(anonymous namespace)::train_step(int) [clone .constprop.0] [clone .isra.0]"),
            "(anonymous namespace)::train_step(int)");
  EXPECT_EQ(without_clone_suffix("(anonymous namespace)::train_step(int) (.constprop.0.isra.0)"),
            "(anonymous namespace)::train_step(int)");
  EXPECT_EQ(without_clone_suffix("f(int) (.cold)"), "f(int)");
}

TEST(WithoutCloneSuffix, OtherNamesAreKept) {
  for (const char* name : {"main", "f(int)", "g(int (*)(double))", "h() const", "operator()(int) const",
                           "k(std::pair<int, int> (.x))", ""})
    EXPECT_EQ(without_clone_suffix(name), name);
}

TEST(ShortKernelName, PlainNamesAreKept) {
  EXPECT_EQ(short_kernel_name("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(short_kernel_name("my_c_kernel"), "my_c_kernel");
  EXPECT_EQ(short_kernel_name(""), "");
}

TEST(ShortKernelName, MalformedInputDoesNotCrash) {
  for (const char* odd : {"(", ")", "<", ">", "a(b", "a)b", "::", "<<<>>>", ")(", " ", "x::"}) {
    EXPECT_NO_THROW((void)short_kernel_name(odd)) << odd;
  }
}

}  // namespace
// A host frame inside a lambda, as the stack of a launch shows it: the call operator, not its qualifier.
TEST(Demangle, ALambdasCallOperatorIsNamedAsTheDevicesLinesNameIt) {
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::nll_loss_forward_out_cuda_template(at::Tensor "
                              "const&, at::Tensor const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() "
                              "const"),
            "operator()");
  EXPECT_EQ(short_kernel_name("at::native::Functor::operator()(float) const &&"), "operator()");
  EXPECT_EQ(short_kernel_name("void at::native::kernel<float>(float*) const"), "kernel");
}

}  // namespace firstassert
