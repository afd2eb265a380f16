// The error taxonomy against the toolkit's own headers: the codes are CUDA's ABI, so the tests name them through
// cudaError_t / CUresult rather than repeating numbers.
#include "core/cuda_errors.h"

#include <cuda.h>
#include <driver_types.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace firstassert {
namespace {

TEST(CudaErrors, CodesMatchTheToolkitHeaders) {
  static_assert(cudaErrorIllegalAddress == 700 && CUDA_ERROR_ILLEGAL_ADDRESS == 700);
  static_assert(cudaErrorLaunchTimeout == 702 && CUDA_ERROR_LAUNCH_TIMEOUT == 702);
  static_assert(cudaErrorAssert == 710 && CUDA_ERROR_ASSERT == 710);
  static_assert(cudaErrorHardwareStackError == 714 && CUDA_ERROR_HARDWARE_STACK_ERROR == 714);
  static_assert(cudaErrorIllegalInstruction == 715 && CUDA_ERROR_ILLEGAL_INSTRUCTION == 715);
  static_assert(cudaErrorMisalignedAddress == 716 && CUDA_ERROR_MISALIGNED_ADDRESS == 716);
  static_assert(cudaErrorInvalidAddressSpace == 717 && CUDA_ERROR_INVALID_ADDRESS_SPACE == 717);
  static_assert(cudaErrorInvalidPc == 718 && CUDA_ERROR_INVALID_PC == 718);
  static_assert(cudaErrorLaunchFailure == 719 && CUDA_ERROR_LAUNCH_FAILED == 719);
  static_assert(cudaErrorContained == 226 && CUDA_ERROR_CONTAINED == 226);
  static_assert(cudaErrorTensorMemoryLeak == 721 && CUDA_ERROR_TENSOR_MEMORY_LEAK == 721);
  SUCCEED();
}

TEST(CudaErrors, StickySetIsExactlyTheContextCorruptingOnes) {
  const std::set<int> sticky = {700, 702, 710, 714, 715, 716, 717, 718, 719, 226, 721};
  for (int code = -5; code <= 1100; ++code) {
    EXPECT_EQ(is_sticky_error(code), sticky.count(code) == 1) << "code " << code;
  }
  EXPECT_FALSE(is_sticky_error(100000));
}

TEST(CudaErrors, CommonNonStickyErrors) {
  EXPECT_FALSE(is_sticky_error(cudaErrorLaunchOutOfResources));  // 701: the launch was refused, context intact
  EXPECT_FALSE(is_sticky_error(cudaErrorInvalidConfiguration));  // 9
  EXPECT_FALSE(is_sticky_error(cudaErrorInvalidValue));          // 1
  EXPECT_FALSE(is_sticky_error(cudaErrorNotReady));              // 600
  EXPECT_FALSE(is_sticky_error(cudaErrorCooperativeLaunchTooLarge));  // 720
  EXPECT_FALSE(is_sticky_error(0));
}

TEST(CudaErrors, NotReadyIsAStatusNotAnError) {
  EXPECT_TRUE(is_status_not_error(cudaErrorNotReady));
  EXPECT_TRUE(is_status_not_error(CUDA_ERROR_NOT_READY));
  EXPECT_FALSE(is_status_not_error(cudaErrorAssert));
  EXPECT_FALSE(is_status_not_error(cudaErrorInvalidValue));
}

TEST(CudaErrors, NamesPerDomain) {
  EXPECT_STREQ(error_name(ApiDomain::runtime, 710), "cudaErrorAssert");
  EXPECT_STREQ(error_name(ApiDomain::driver, 710), "CUDA_ERROR_ASSERT");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 700), "cudaErrorIllegalAddress");
  EXPECT_STREQ(error_name(ApiDomain::driver, 700), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 719), "cudaErrorLaunchFailure");
  EXPECT_STREQ(error_name(ApiDomain::driver, 719), "CUDA_ERROR_LAUNCH_FAILED");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 2), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(error_name(ApiDomain::driver, 2), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 226), "cudaErrorContained");
  EXPECT_STREQ(error_name(ApiDomain::driver, 226), "CUDA_ERROR_CONTAINED");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 600), "cudaErrorNotReady");
  EXPECT_STREQ(error_name(ApiDomain::driver, 600), "CUDA_ERROR_NOT_READY");
  EXPECT_STREQ(error_name(ApiDomain::runtime, 9), "cudaErrorInvalidConfiguration");
}

TEST(CudaErrors, EveryStickyCodeHasNamesAndWords) {
  for (int code : {700, 702, 710, 714, 715, 716, 717, 718, 719, 226, 721}) {
    SCOPED_TRACE(code);
    std::string runtime = error_name(ApiDomain::runtime, code);
    std::string driver = error_name(ApiDomain::driver, code);
    EXPECT_EQ(runtime.rfind("cudaError", 0), 0u) << runtime;
    EXPECT_EQ(driver.rfind("CUDA_ERROR_", 0), 0u) << driver;
    ASSERT_NE(error_description(code), nullptr);
    EXPECT_STRNE(error_headline(code), "CUDA error") << "a sticky code deserves its own headline";
  }
  EXPECT_STREQ(error_description(710), "device-side assert triggered");
  EXPECT_STREQ(error_headline(710), "device-side assert");
  EXPECT_STREQ(error_headline(700), "illegal memory access");
}

TEST(CudaErrors, UnknownCodesStillGetText) {
  for (int code : {12345, -1, 0x7fffffff}) {
    const char* runtime = error_name(ApiDomain::runtime, code);
    const char* driver = error_name(ApiDomain::driver, code);
    ASSERT_NE(runtime, nullptr);
    ASSERT_NE(driver, nullptr);
    EXPECT_GT(std::string(runtime).size(), 0u);
    EXPECT_GT(std::string(driver).size(), 0u);
    EXPECT_EQ(error_description(code), nullptr);
    ASSERT_NE(error_headline(code), nullptr);
  }
}

}  // namespace
}  // namespace firstassert
