// The simulated CUPTI (libcupti.so.13): one subscriber, enable bits, and genuine CUpti_CallbackData for runtime and
// driver calls, including the nested driver callback inside a runtime launch.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // brings the generated *_params structs
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "kernels/stock_kernels.h"
#include "support/test_kernels.h"

namespace {

struct Seen {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  std::string function;
  std::string symbol;
  uint32_t correlation_id;
  bool has_context;
  int result;                       // functionReturnValue at EXIT
  bool correlation_data_carried;    // EXIT saw what ENTER stored in *correlationData
  const void* func = nullptr;       // launch params, read inside the callback
  unsigned grid_x = 0, block_x = 0;
  CUstream stream = nullptr;
  CUfunction driver_function = nullptr;
};

std::mutex seen_mutex;
std::vector<Seen> seen;

void CUPTIAPI record(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Seen s{};
  s.domain = domain;
  s.cbid = cbid;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    s.has_context = static_cast<const CUpti_ResourceData*>(data)->context != nullptr;
    s.stream = static_cast<const CUpti_ResourceData*>(data)->resourceHandle.stream;
  } else {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    s.site = cb->callbackSite;
    s.function = cb->functionName != nullptr ? cb->functionName : "";
    s.symbol = cb->symbolName != nullptr ? cb->symbolName : "";
    s.correlation_id = cb->correlationId;
    s.has_context = cb->context != nullptr;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      *cb->correlationData = 0xC0FFEE00u + cb->correlationId;
    } else {
      s.correlation_data_carried = *cb->correlationData == 0xC0FFEE00u + cb->correlationId;
      s.result = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<int>(*static_cast<cudaError_t*>(cb->functionReturnValue))
                                                       : static_cast<int>(*static_cast<CUresult*>(cb->functionReturnValue));
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
      const auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(cb->functionParams);
      s.func = p->func;
      s.grid_x = p->gridDim.x;
      s.block_x = p->blockDim.x;
      s.stream = p->stream;
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
      const auto* p = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
      s.driver_function = p->f;
      s.grid_x = p->gridDimX;
      s.block_x = p->blockDimX;
      s.stream = p->hStream;
    }
  }
  std::lock_guard lock(seen_mutex);
  seen.push_back(s);
}

class Cupti : public ::testing::Test {
 protected:
  void SetUp() override {
    simtest::register_test_kernels();
    std::lock_guard lock(seen_mutex);
    seen.clear();
  }
  void TearDown() override {
    if (subscriber_ != nullptr) {
      EXPECT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
    }
  }
  void subscribe_to_apis() {
    ASSERT_EQ(cuptiSubscribe(&subscriber_, record, nullptr), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  }
  static std::vector<Seen> launches() {
    std::lock_guard lock(seen_mutex);
    std::vector<Seen> out;
    for (const Seen& s : seen) {
      if ((s.domain == CUPTI_CB_DOMAIN_RUNTIME_API && s.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ||
          (s.domain == CUPTI_CB_DOMAIN_DRIVER_API && s.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel))
        out.push_back(s);
    }
    return out;
  }
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

TEST_F(Cupti, RuntimeLaunchNestsTheDriverLaunchWithGenuineParams) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // initialize the runtime before subscribing
  subscribe_to_apis();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const void* stub = simkernels_host_stub("busy");
  unsigned long long us = 1;
  void* args[] = {&us};
  ASSERT_EQ(cudaLaunchKernel(stub, dim3{3}, dim3{64}, args, 0, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

  std::vector<Seen> l = launches();
  ASSERT_EQ(l.size(), 4u);
  const std::string mangled = "_ZN10simkernels11busy_kernelEy";
  // runtime ENTER, driver ENTER, driver EXIT, runtime EXIT
  EXPECT_EQ(l[0].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(l[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(l[1].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(l[1].site, CUPTI_API_ENTER);
  EXPECT_EQ(l[2].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(l[2].site, CUPTI_API_EXIT);
  EXPECT_EQ(l[3].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(l[3].site, CUPTI_API_EXIT);
  EXPECT_EQ(l[0].function, "cudaLaunchKernel");
  EXPECT_EQ(l[1].function, "cuLaunchKernel");
  for (const Seen& s : l) {
    EXPECT_EQ(s.symbol, mangled);
    EXPECT_TRUE(s.has_context);
    EXPECT_EQ(s.grid_x, 3u);
    EXPECT_EQ(s.block_x, 64u);
    EXPECT_EQ(s.stream, reinterpret_cast<CUstream>(stream));
  }
  EXPECT_EQ(l[0].func, stub);
  EXPECT_NE(l[1].driver_function, nullptr);
  const char* driver_name = nullptr;
  ASSERT_EQ(cuFuncGetName(&driver_name, l[1].driver_function), CUDA_SUCCESS);
  EXPECT_EQ(driver_name, mangled);
  EXPECT_EQ(l[0].correlation_id, l[3].correlation_id);
  EXPECT_EQ(l[1].correlation_id, l[2].correlation_id);
  EXPECT_NE(l[0].correlation_id, l[1].correlation_id);
  EXPECT_TRUE(l[2].correlation_data_carried);
  EXPECT_TRUE(l[3].correlation_data_carried);
  EXPECT_EQ(l[2].result, CUDA_SUCCESS);
  EXPECT_EQ(l[3].result, cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Cupti, ExitCarriesTheErrorReturned) {
  subscribe_to_apis();
  unsigned long long us = 1;
  void* args[] = {&us};
  EXPECT_EQ(cudaLaunchKernel(simkernels_host_stub("busy"), dim3{1}, dim3{2048}, args, 0, nullptr),
            cudaErrorInvalidConfiguration);
  (void)cudaGetLastError();
  std::vector<Seen> l = launches();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[2].result, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(l[3].result, cudaErrorInvalidConfiguration);
}

TEST_F(Cupti, OnlyEnabledCallbacksFire) {
  ASSERT_EQ(cuptiSubscribe(&subscriber_, record, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
            CUPTI_SUCCESS);
  uint32_t state = 0;
  ASSERT_EQ(cuptiGetCallbackState(&state, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
            CUPTI_SUCCESS);
  EXPECT_EQ(state, 1u);
  ASSERT_EQ(simtest::launch(&simtest::record_kernel, nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::lock_guard lock(seen_mutex);
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.domain, CUPTI_CB_DOMAIN_DRIVER_API);
    EXPECT_EQ(s.cbid, static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  }
}

TEST_F(Cupti, ResourceDomainAnnouncesStreams) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  ASSERT_EQ(cuptiSubscribe(&subscriber_, record, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  std::lock_guard lock(seen_mutex);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_STREAM_CREATED));
  EXPECT_EQ(seen[0].stream, reinterpret_cast<CUstream>(stream));
  EXPECT_TRUE(seen[0].has_context);
  EXPECT_EQ(seen[1].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING));
}

TEST_F(Cupti, SecondSubscriberIsRefusedAndToldWhoHoldsTheSlot) {
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "first tool";
  ASSERT_EQ(cuptiSubscribe_v2(&subscriber_, record, nullptr, &params), CUPTI_SUCCESS);

  CUpti_SubscriberHandle second = nullptr;
  EXPECT_EQ(cuptiSubscribe(&second, record, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams second_params{};
  second_params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  second_params.oldSubscriberName = holder;
  second_params.oldSubscriberSize = sizeof holder;
  EXPECT_EQ(cuptiSubscribe_v2(&second, record, nullptr, &second_params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(holder, "CUPTI for first tool");
  EXPECT_EQ(cuptiEnableDomain(1, second, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_ERROR_INVALID_PARAMETER);

  const char* text = nullptr;
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &text), CUPTI_SUCCESS);
  EXPECT_STREQ(text, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");

  // Once the slot is free, it can be taken again.
  ASSERT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
  subscriber_ = nullptr;
  ASSERT_EQ(cuptiSubscribe(&subscriber_, record, nullptr), CUPTI_SUCCESS);
}

TEST_F(Cupti, NothingFiresAfterUnsubscribe) {
  subscribe_to_apis();
  ASSERT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
  subscriber_ = nullptr;
  ASSERT_EQ(simtest::launch(&simtest::record_kernel, nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::lock_guard lock(seen_mutex);
  EXPECT_TRUE(seen.empty());
}

TEST_F(Cupti, DriverOnlyLaunchHasNoRuntimeCallback) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  subscribe_to_apis();
  CUmodule module;
  ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
  CUfunction busy;
  ASSERT_EQ(cuModuleGetFunction(&busy, module, "_ZN10simkernels11busy_kernelEy"), CUDA_SUCCESS);
  unsigned long long us = 1;
  void* args[] = {&us};
  ASSERT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  std::vector<Seen> l = launches();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(l[0].driver_function, busy);
  EXPECT_EQ(l[1].site, CUPTI_API_EXIT);
  cuModuleUnload(module);
}

}  // namespace
