// The simulated CUPTI (libcupti.so.13): one subscriber (or several, as CUPTI 13.3+ allows), enable bits, and genuine
// CUpti_CallbackData for runtime and driver calls, including the nested driver callback inside a runtime launch.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // brings the generated *_params structs
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/subscriber_params.h"
#include "kernels/stock_kernels.h"
#include "support/cuda_entry_points.h"
#include "support/fresh_process.h"
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
  unsigned grid_y = 0, block_y = 0;
  bool launch = false;              // a launch callback of either API domain
  CUstream stream = nullptr;
  CUfunction driver_function = nullptr;
  const void* graph = nullptr;      // graph calls: the graph in their params
  unsigned count = 0;               // cuGraphAddBatchMemOpNode: nodeParams->count
};

std::mutex seen_mutex;
std::vector<Seen> seen;

// CUDA 13.0's meta header has no params struct for __cudaLaunchKernel(_ptsz); the simulator lays it out as the
// argument list.
struct CudaLaunchKernelParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

template <typename Params>
void read_runtime_dims(Seen& s, const void* params) {
  const auto* p = static_cast<const Params*>(params);
  s.func = p->func;
  s.grid_x = p->gridDim.x;
  s.grid_y = p->gridDim.y;
  s.block_x = p->blockDim.x;
  s.block_y = p->blockDim.y;
  s.stream = p->stream;
}

template <typename Params>
void read_runtime_config(Seen& s, const void* params) {
  const auto* p = static_cast<const Params*>(params);
  s.func = p->func;
  s.grid_x = p->config->gridDim.x;
  s.grid_y = p->config->gridDim.y;
  s.block_x = p->config->blockDim.x;
  s.block_y = p->config->blockDim.y;
  s.stream = p->config->stream;
}

template <typename Params>
void read_driver_dims(Seen& s, const void* params) {
  const auto* p = static_cast<const Params*>(params);
  s.driver_function = p->f;
  s.grid_x = p->gridDimX;
  s.grid_y = p->gridDimY;
  s.block_x = p->blockDimX;
  s.block_y = p->blockDimY;
  s.stream = p->hStream;
}

template <typename Params>
void read_driver_config(Seen& s, const void* params) {
  const auto* p = static_cast<const Params*>(params);
  s.driver_function = p->f;
  s.grid_x = p->config->gridDimX;
  s.grid_y = p->config->gridDimY;
  s.block_x = p->config->blockDimX;
  s.block_y = p->config->blockDimY;
  s.stream = p->config->hStream;
}

// The launch configuration a launch callback's functionParams carry; false for callbacks that are not launches.
bool read_launch_params(Seen& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        read_runtime_dims<cudaLaunchKernel_v7000_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
        read_runtime_dims<cudaLaunchKernel_ptsz_v7000_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
        read_runtime_dims<cudaLaunchCooperativeKernel_v9000_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
        read_runtime_dims<cudaLaunchCooperativeKernel_ptsz_v9000_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
        read_runtime_config<cudaLaunchKernelExC_v11060_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
        read_runtime_config<cudaLaunchKernelExC_ptsz_v11060_params>(s, params);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
        const auto* p = static_cast<const CudaLaunchKernelParams*>(params);
        s.func = p->kernel;
        s.grid_x = p->gridDim.x;
        s.grid_y = p->gridDim.y;
        s.block_x = p->blockDim.x;
        s.block_y = p->blockDim.y;
        s.stream = p->stream;
        return true;
      }
      default:
        return false;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        read_driver_dims<cuLaunchKernel_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        read_driver_dims<cuLaunchKernel_ptsz_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
        read_driver_dims<cuLaunchCooperativeKernel_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        read_driver_dims<cuLaunchCooperativeKernel_ptsz_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
        read_driver_config<cuLaunchKernelEx_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
        read_driver_config<cuLaunchKernelEx_ptsz_params>(s, params);
        return true;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
        return true;  // launches too, without a configuration to read
      default:
        return false;
    }
  }
  return false;
}

// What the params of some graph calls carry, read inside the callback.
void read_graph_params(Seen& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddKernelNode_v10000) {
    const auto* p = static_cast<const cudaGraphAddKernelNode_v10000_params*>(params);
    s.graph = p->graph;
    s.func = p->pNodeParams->func;
    s.grid_x = p->pNodeParams->gridDim.x;
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphGetNodes_v10000) {
    s.graph = static_cast<const cudaGraphGetNodes_v10000_params*>(params)->graph;
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecUpdate_v10020) {
    s.graph = static_cast<const cudaGraphExecUpdate_v10020_params*>(params)->hGraph;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2) {
    const auto* p = static_cast<const cuGraphAddKernelNode_v2_params*>(params);
    s.graph = p->hGraph;
    s.driver_function = p->nodeParams->func;
    s.grid_x = p->nodeParams->gridDimX;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphAddBatchMemOpNode) {
    const auto* p = static_cast<const cuGraphAddBatchMemOpNode_params*>(params);
    s.graph = p->hGraph;
    s.count = p->nodeParams->count;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphGetNodes) {
    s.graph = static_cast<const cuGraphGetNodes_params*>(params)->hGraph;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2) {
    s.graph = static_cast<const cuGraphExecUpdate_v2_params*>(params)->hGraph;
  }
}

void CUPTIAPI record(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Seen s{};
  s.domain = domain;
  s.cbid = cbid;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    s.has_context = static_cast<const CUpti_ResourceData*>(data)->context != nullptr;
    s.stream = static_cast<const CUpti_ResourceData*>(data)->resourceHandle.stream;
  } else if (domain == CUPTI_CB_DOMAIN_SYNCHRONIZE) {
    s.has_context = static_cast<const CUpti_SynchronizeData*>(data)->context != nullptr;
    s.stream = static_cast<const CUpti_SynchronizeData*>(data)->stream;
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
    s.launch = read_launch_params(s, domain, cbid, cb->functionParams);
    read_graph_params(s, domain, cbid, cb->functionParams);
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
  // Every launch callback of the runtime and driver domains, in order.
  static std::vector<Seen> all_launches() {
    std::lock_guard lock(seen_mutex);
    std::vector<Seen> out;
    for (const Seen& s : seen) {
      if (s.launch) out.push_back(s);
    }
    return out;
  }
  static void forget_seen() {
    std::lock_guard lock(seen_mutex);
    seen.clear();
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

// Each runtime launch entry point: its own callback id and name, the launch configuration in its params, and exactly
// one nested driver launch (the one that runtime entry point uses) inside it.
TEST_F(Cupti, EveryRuntimeLaunchEntryPointCarriesItsConfigurationAndNestsOneDriverLaunch) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  static const void* stub = simkernels_host_stub("busy");
  static cudaKernel_t kernel = nullptr;
  ASSERT_EQ(__cudaGetKernel(&kernel, stub), cudaSuccess);
  ASSERT_NE(kernel, nullptr);
  subscribe_to_apis();

  using Launch = cudaError_t (*)(dim3, dim3, void**, cudaStream_t);
  struct Case {
    const char* runtime_name;
    CUpti_CallbackId runtime_cbid;
    const char* driver_name;
    CUpti_CallbackId driver_cbid;
    const void* func;  // what the runtime params name: the host stub, or the kernel handle
    Launch launch;
  };
  const Case cases[] = {
      {"cudaLaunchKernel", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cuLaunchKernel",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) { return cudaLaunchKernel(stub, g, b, a, 0, s); }},
      {"cudaLaunchKernel_ptsz", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, "cuLaunchKernel_ptsz",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) { return cudaLaunchKernel_ptsz(stub, g, b, a, 0, s); }},
      {"cudaLaunchKernelExC", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cuLaunchKernelEx",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) {
         cudaLaunchConfig_t config{};
         config.gridDim = g;
         config.blockDim = b;
         config.stream = s;
         return cudaLaunchKernelExC(&config, stub, a);
       }},
      {"cudaLaunchKernelExC_ptsz", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, "cuLaunchKernelEx_ptsz",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) {
         cudaLaunchConfig_t config{};
         config.gridDim = g;
         config.blockDim = b;
         config.stream = s;
         return cudaLaunchKernelExC_ptsz(&config, stub, a);
       }},
      {"cudaLaunchCooperativeKernel", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
       "cuLaunchCooperativeKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) { return cudaLaunchCooperativeKernel(stub, g, b, a, 0, s); }},
      {"cudaLaunchCooperativeKernel_ptsz", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
       "cuLaunchCooperativeKernel_ptsz", CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, stub,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) {
         return cudaLaunchCooperativeKernel_ptsz(stub, g, b, a, 0, s);
       }},
      {"__cudaLaunchKernel", CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "cuLaunchKernel",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, kernel,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) { return __cudaLaunchKernel(kernel, g, b, a, 0, s); }},
      {"__cudaLaunchKernel_ptsz", CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, "cuLaunchKernel_ptsz",
       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, kernel,
       [](dim3 g, dim3 b, void** a, cudaStream_t s) { return __cudaLaunchKernel_ptsz(kernel, g, b, a, 0, s); }},
  };
  const std::string mangled = "_ZN10simkernels11busy_kernelEy";
  unsigned grid_x = 2;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.runtime_name);
    forget_seen();
    ++grid_x;  // a configuration of its own for each entry point
    unsigned long long us = 1;
    void* args[] = {&us};
    ASSERT_EQ(c.launch(dim3{grid_x, 2, 1}, dim3{64, 3, 1}, args, stream), cudaSuccess);
    std::vector<Seen> l = all_launches();
    ASSERT_EQ(l.size(), 4u) << "one runtime launch around exactly one driver launch";
    // runtime ENTER, driver ENTER, driver EXIT, runtime EXIT
    const CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API};
    const CUpti_ApiCallbackSite sites[] = {CUPTI_API_ENTER, CUPTI_API_ENTER, CUPTI_API_EXIT, CUPTI_API_EXIT};
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE(i);
      const bool runtime = i == 0 || i == 3;
      EXPECT_EQ(l[i].domain, domains[i]);
      EXPECT_EQ(l[i].site, sites[i]);
      EXPECT_EQ(l[i].cbid, runtime ? c.runtime_cbid : c.driver_cbid);
      EXPECT_EQ(l[i].function, runtime ? c.runtime_name : c.driver_name);
      EXPECT_EQ(l[i].symbol, mangled);
      EXPECT_TRUE(l[i].has_context);
      EXPECT_EQ(l[i].grid_x, grid_x);
      EXPECT_EQ(l[i].grid_y, 2u);
      EXPECT_EQ(l[i].block_x, 64u);
      EXPECT_EQ(l[i].block_y, 3u);
      EXPECT_EQ(l[i].stream, reinterpret_cast<CUstream>(stream));
    }
    EXPECT_EQ(l[0].func, c.func);
    EXPECT_EQ(l[1].driver_function, reinterpret_cast<CUfunction>(kernel));
    EXPECT_EQ(l[0].correlation_id, l[3].correlation_id);
    EXPECT_EQ(l[1].correlation_id, l[2].correlation_id);
    EXPECT_EQ(l[2].result, CUDA_SUCCESS);
    EXPECT_EQ(l[3].result, cudaSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
}

TEST_F(Cupti, DriverLaunchKernelExParamsCarryTheConfig) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  subscribe_to_apis();
  CUmodule module;
  ASSERT_EQ(cuModuleLoadData(&module, "image"), CUDA_SUCCESS);
  CUfunction busy;
  ASSERT_EQ(cuModuleGetFunction(&busy, module, "_ZN10simkernels11busy_kernelEy"), CUDA_SUCCESS);
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  forget_seen();
  unsigned long long us = 1;
  void* args[] = {&us};
  CUlaunchConfig config{};
  config.gridDimX = 5;
  config.gridDimY = 4;
  config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = 2;
  config.blockDimZ = 1;
  config.hStream = stream;
  ASSERT_EQ(cuLaunchKernelEx(&config, busy, args, nullptr), CUDA_SUCCESS);
  std::vector<Seen> l = all_launches();
  ASSERT_EQ(l.size(), 2u);
  for (const Seen& s : l) {
    EXPECT_EQ(s.domain, CUPTI_CB_DOMAIN_DRIVER_API);
    EXPECT_EQ(s.cbid, static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
    EXPECT_EQ(s.function, "cuLaunchKernelEx");
    EXPECT_EQ(s.symbol, "_ZN10simkernels11busy_kernelEy");
    EXPECT_EQ(s.driver_function, busy);
    EXPECT_EQ(s.grid_x, 5u);
    EXPECT_EQ(s.grid_y, 4u);
    EXPECT_EQ(s.block_x, 32u);
    EXPECT_EQ(s.block_y, 2u);
    EXPECT_EQ(s.stream, stream);
  }
  EXPECT_EQ(l[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(l[1].site, CUPTI_API_EXIT);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  cuModuleUnload(module);
}

TEST_F(Cupti, SynchronizeDomainReportsStreamAndContextSynchronization) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  size_t count = 0;
  CUpti_DomainTable domains = nullptr;
  ASSERT_EQ(cuptiSupportedDomains(&count, &domains), CUPTI_SUCCESS);
  EXPECT_NE(std::find(domains, domains + count, CUPTI_CB_DOMAIN_SYNCHRONIZE), domains + count);
  ASSERT_EQ(cuptiSubscribe(&subscriber_, record, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_SYNCHRONIZE), CUPTI_SUCCESS);

  ASSERT_EQ(simtest::launch(&simtest::record_kernel, stream, 1), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  {
    std::lock_guard lock(seen_mutex);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].domain, CUPTI_CB_DOMAIN_SYNCHRONIZE);
    EXPECT_EQ(seen[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED));
    EXPECT_EQ(seen[0].stream, reinterpret_cast<CUstream>(stream));
    EXPECT_TRUE(seen[0].has_context);
    seen.clear();
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  {
    std::lock_guard lock(seen_mutex);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].domain, CUPTI_CB_DOMAIN_SYNCHRONIZE);
    EXPECT_EQ(seen[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED));
    EXPECT_TRUE(seen[0].has_context);
    seen.clear();
  }
  // Only the synchronize domain was enabled: a launch fires nothing.
  ASSERT_EQ(simtest::launch(&simtest::record_kernel, stream, 2), cudaSuccess);
  ASSERT_EQ(cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_SYNCHRONIZE), CUPTI_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  {
    std::lock_guard lock(seen_mutex);
    EXPECT_TRUE(seen.empty());
  }
  cudaStreamDestroy(stream);
}

// What a tool does on CONTEXT_CREATED (look the device up, retain the context) calls back into the runtime and
// driver while they are creating that context: it must not deadlock. The context is created after subscribing.
struct ReentrantCalls {
  std::atomic<int> contexts_created{0};
  CUcontext announced = nullptr;
  cudaError_t device_count_result = cudaErrorUnknown;
  int device_count = -1;
  CUresult retain_result = CUDA_ERROR_UNKNOWN;
  CUcontext retained = nullptr;
};
ReentrantCalls reentrant;

void CUPTIAPI call_back_into_cuda(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED) return;
  reentrant.announced = static_cast<const CUpti_ResourceData*>(data)->context;
  reentrant.device_count_result = cudaGetDeviceCount(&reentrant.device_count);
  reentrant.retain_result = cuDevicePrimaryCtxRetain(&reentrant.retained, 0);
  reentrant.contexts_created.fetch_add(1);
}

// Graph calls, runtime and driver, each traced under its own callback id and name with its genuine params; a runtime
// call nests the driver call it is made of.
TEST_F(Cupti, GraphCallsAreTracedWithTheirGenuineParams) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  void* host = nullptr;
  ASSERT_EQ(cudaHostAlloc(&host, sizeof(uint64_t), cudaHostAllocMapped), cudaSuccess);
  CUdeviceptr slot = 0;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&slot), host, 0), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  subscribe_to_apis();

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaGraphCreate(&graph, 0), cudaSuccess);
  const void* stub = reinterpret_cast<const void*>(&simtest::record_kernel);
  int id = 1;
  void* args[] = {&id};
  cudaKernelNodeParams kernel{};
  kernel.func = const_cast<void*>(stub);
  kernel.gridDim = dim3{4, 1, 1};
  kernel.blockDim = dim3{32, 1, 1};
  kernel.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  ASSERT_EQ(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &kernel), cudaSuccess);
  size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  op.writeValue.address = slot;
  op.writeValue.value64 = 1;
  CUDA_BATCH_MEM_OP_NODE_PARAMS batch{};
  batch.count = 1;
  batch.paramArray = &op;
  CUgraphNode write = nullptr;
  ASSERT_EQ(cuGraphAddBatchMemOpNode(&write, graph, &node, 1, &batch), CUDA_SUCCESS);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  ASSERT_EQ(cudaGraphExecUpdate(exec, graph, &info), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<Seen> all;
  {
    std::lock_guard lock(seen_mutex);
    all = seen;
  }
  // The runtime call's ENTER, the nested driver call's ENTER and EXIT, the runtime call's EXIT; nullptr if absent.
  auto nested = [&](CUpti_CallbackId runtime, const char* runtime_name, CUpti_CallbackId driver,
                    const char* driver_name) -> const Seen* {
    for (size_t i = 0; i + 3 < all.size(); ++i) {
      if (all[i].domain != CUPTI_CB_DOMAIN_RUNTIME_API || all[i].cbid != runtime) continue;
      EXPECT_EQ(all[i].function, runtime_name);
      EXPECT_EQ(all[i].site, CUPTI_API_ENTER);
      EXPECT_EQ(all[i + 1].domain, CUPTI_CB_DOMAIN_DRIVER_API) << runtime_name;
      EXPECT_EQ(all[i + 1].cbid, driver) << runtime_name;
      EXPECT_EQ(all[i + 1].function, driver_name);
      EXPECT_EQ(all[i + 2].cbid, driver);
      EXPECT_EQ(all[i + 2].site, CUPTI_API_EXIT);
      EXPECT_EQ(all[i + 2].result, CUDA_SUCCESS) << driver_name;
      EXPECT_EQ(all[i + 3].cbid, runtime);
      EXPECT_EQ(all[i + 3].site, CUPTI_API_EXIT);
      EXPECT_TRUE(all[i + 3].correlation_data_carried);
      return &all[i];
    }
    ADD_FAILURE() << runtime_name << " was not traced";
    return nullptr;
  };
  nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphCreate_v10000, "cudaGraphCreate", CUPTI_DRIVER_TRACE_CBID_cuGraphCreate,
         "cuGraphCreate");
  if (const Seen* add = nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddKernelNode_v10000, "cudaGraphAddKernelNode",
                               CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2, "cuGraphAddKernelNode_v2")) {
    EXPECT_EQ(add[0].graph, graph);
    EXPECT_EQ(add[0].func, stub);
    EXPECT_EQ(add[0].grid_x, 4u);
    EXPECT_EQ(add[1].graph, graph);
    EXPECT_EQ(add[1].grid_x, 4u);
    const char* name = nullptr;
    ASSERT_EQ(cuFuncGetName(&name, add[1].driver_function), CUDA_SUCCESS);
    EXPECT_STREQ(name, "_ZN7simtest13record_kernelEi");
  }
  if (const Seen* get = nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphGetNodes_v10000, "cudaGraphGetNodes",
                               CUPTI_DRIVER_TRACE_CBID_cuGraphGetNodes, "cuGraphGetNodes")) {
    EXPECT_EQ(get[0].graph, graph);
    EXPECT_EQ(get[1].graph, graph);
  }
  nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, "cudaGraphInstantiate",
         CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  if (const Seen* update = nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecUpdate_v10020, "cudaGraphExecUpdate",
                                  CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2, "cuGraphExecUpdate_v2")) {
    EXPECT_EQ(update[0].graph, graph);
    EXPECT_EQ(update[1].graph, graph);
  }
  nested(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
         "cuGraphLaunch");
  auto driver_only = std::find_if(all.begin(), all.end(), [](const Seen& s) {
    return s.domain == CUPTI_CB_DOMAIN_DRIVER_API && s.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphAddBatchMemOpNode;
  });
  ASSERT_NE(driver_only, all.end());
  EXPECT_EQ(driver_only->function, "cuGraphAddBatchMemOpNode");
  EXPECT_EQ(driver_only->graph, graph);
  EXPECT_EQ(driver_only->count, 1u);
  EXPECT_EQ(*static_cast<volatile uint64_t*>(host), 1u);

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFreeHost(host);
}

TEST(CuptiReentry, ContextCreatedCallbackMayCallTheRuntimeAndDriver) {
  FRESH_PROCESS({
    alarm(60);  // a deadlock fails this test instead of the whole suite
    simtest::register_test_kernels();
    CUpti_SubscriberHandle subscriber = nullptr;
    ASSERT_EQ(cuptiSubscribe(&subscriber, call_back_into_cuda, nullptr), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
    EXPECT_EQ(cudaFree(nullptr), cudaSuccess);  // creates the primary context, announced to the callback
    EXPECT_EQ(reentrant.contexts_created.load(), 1);
    EXPECT_NE(reentrant.announced, nullptr);
    EXPECT_EQ(reentrant.device_count_result, cudaSuccess);
    EXPECT_EQ(reentrant.device_count, 1);
    EXPECT_EQ(reentrant.retain_result, CUDA_SUCCESS);
    EXPECT_EQ(reentrant.retained, reentrant.announced);
    CUcontext current = nullptr;
    ASSERT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, reentrant.announced);
    EXPECT_EQ(simtest::launch(&simtest::record_kernel, nullptr, 1), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(simtest::recorded_ids(), std::vector<int>{1});
    EXPECT_EQ(reentrant.contexts_created.load(), 1) << "the context is announced once";
    EXPECT_EQ(cuptiUnsubscribe(subscriber), CUPTI_SUCCESS);
  });
}

// CUPTI 13.3+ on an r610+ driver admits several subscribers (SIMCUDA_CUPTI_MULTIPLE_SUBSCRIBERS=1). The simulator reads
// the variable once, at a process's first subscribe, and the tests above have subscribed in this process already: each
// test here runs in a fresh process.
constexpr const char* kMultipleSubscribers = "SIMCUDA_CUPTI_MULTIPLE_SUBSCRIBERS";

void use_multiple_subscriber_cupti() {
  ASSERT_EQ(setenv(kMultipleSubscribers, "1", 1), 0);
  simtest::register_test_kernels();
}

using simcuda::SubscriberParams132;

using Call = std::pair<CUpti_CallbackDomain, CUpti_CallbackId>;

// One CUPTI client: its handle, the callbacks it received (through its own userdata) and what CUPTI told it of the
// first subscriber.
struct Tool {
  CUptiResult subscribe_v2(const char* name, uint8_t allow, size_t struct_size = sizeof(SubscriberParams132)) {
    SubscriberParams132 params{};
    params.structSize = struct_size;
    params.subscriberName = name;
    params.oldSubscriberName = told;
    params.oldSubscriberSize = sizeof told;
    params.allowMultipleSubscribers = allow;
    return cuptiSubscribe_v2(&handle, receive, this, reinterpret_cast<CUpti_SubscriberParams*>(&params));
  }
  CUptiResult subscribe_v1() { return cuptiSubscribe(&handle, receive, this); }
  std::vector<Call> calls() {
    std::lock_guard lock(mutex);
    return received;
  }
  size_t calls_in(CUpti_CallbackDomain domain) {
    std::lock_guard lock(mutex);
    return std::count_if(received.begin(), received.end(), [&](const Call& c) { return c.first == domain; });
  }
  static void CUPTIAPI receive(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void*);

  CUpti_SubscriberHandle handle = nullptr;
  char told[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  std::mutex mutex;
  std::vector<Call> received;
};

// Which tool each callback went to, across all tools, in the order they were called.
std::mutex delivery_mutex;
std::vector<const Tool*> deliveries;

void CUPTIAPI Tool::receive(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void*) {
  auto* tool = static_cast<Tool*>(userdata);
  {
    std::lock_guard lock(tool->mutex);
    tool->received.emplace_back(domain, cbid);
  }
  std::lock_guard lock(delivery_mutex);
  deliveries.push_back(tool);
}

std::vector<const Tool*> take_deliveries() {
  std::lock_guard lock(delivery_mutex);
  return std::exchange(deliveries, {});
}

cudaError_t launch_and_wait() {
  cudaError_t launched = simtest::launch(&simtest::record_kernel, nullptr, 1);
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

constexpr Call kDriverLaunch{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel};

uint32_t callback_state(const Tool& tool, Call call) {
  uint32_t enabled = 99;
  EXPECT_EQ(cuptiGetCallbackState(&enabled, tool.handle, call.first, call.second), CUPTI_SUCCESS);
  return enabled;
}

TEST(CuptiSubscribers, UpToCupti132AllowMultipleSubscribersLetsNoSecondIn) {
  FRESH_PROCESS({
    ASSERT_EQ(unsetenv(kMultipleSubscribers), 0);
    Tool first, second;
    ASSERT_EQ(first.subscribe_v2("first tool", 1), CUPTI_SUCCESS);
    EXPECT_STREQ(first.told, "");
    EXPECT_EQ(second.subscribe_v2("second tool", 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(second.told, "CUPTI for first tool");
    EXPECT_EQ(second.handle, nullptr);
    EXPECT_EQ(cuptiUnsubscribe(first.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, TwoSubscribersEachReceiveOnlyWhatTheyEnabled) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    Tool profiler, firstassert;
    ASSERT_EQ(profiler.subscribe_v2("profiler", 1), CUPTI_SUCCESS);
    EXPECT_STREQ(profiler.told, "");
    ASSERT_EQ(firstassert.subscribe_v2("firstassert", 1), CUPTI_SUCCESS);
    EXPECT_STREQ(firstassert.told, "CUPTI for profiler") << "multi mode names the first subscriber, without an error";
    ASSERT_NE(profiler.handle, firstassert.handle);

    ASSERT_EQ(cuptiEnableDomain(1, profiler.handle, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableCallback(1, firstassert.handle, kDriverLaunch.first, kDriverLaunch.second), CUPTI_SUCCESS);
    const Call runtime_launch{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000};
    EXPECT_EQ(callback_state(profiler, kDriverLaunch), 0u);
    EXPECT_EQ(callback_state(firstassert, kDriverLaunch), 1u);
    EXPECT_EQ(callback_state(profiler, runtime_launch), 1u);
    EXPECT_EQ(callback_state(firstassert, runtime_launch), 0u);

    ASSERT_EQ(launch_and_wait(), cudaSuccess);
    EXPECT_EQ(firstassert.calls(), (std::vector<Call>{kDriverLaunch, kDriverLaunch})) << "its ENTER and EXIT only";
    const std::vector<Call> runtime = profiler.calls();
    EXPECT_EQ(profiler.calls_in(CUPTI_CB_DOMAIN_DRIVER_API), 0u);
    EXPECT_EQ(profiler.calls_in(CUPTI_CB_DOMAIN_RUNTIME_API), runtime.size());
    const Call synchronize{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020};
    EXPECT_EQ(std::count(runtime.begin(), runtime.end(), runtime_launch), 2);
    EXPECT_EQ(std::count(runtime.begin(), runtime.end(), synchronize), 2);
    EXPECT_EQ(cuptiUnsubscribe(firstassert.handle), CUPTI_SUCCESS);
    EXPECT_EQ(cuptiUnsubscribe(profiler.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, V1AfterAMultiSubscriberFirstIsRefused) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    Tool first, v1, v2_without_request;
    ASSERT_EQ(first.subscribe_v2("first tool", 1), CUPTI_SUCCESS);
    EXPECT_EQ(v1.subscribe_v1(), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) << "V1 and V2 do not mix";
    EXPECT_EQ(v1.handle, nullptr);
    // cuptiSubscribe has no params to be told in; a V2 caller that does not ask is refused alike, and told.
    EXPECT_EQ(v2_without_request.subscribe_v2("no request", 0), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(v2_without_request.told, "CUPTI for first tool");
    CUpti_SubscriberHandle no_params = nullptr;
    EXPECT_EQ(cuptiSubscribe_v2(&no_params, Tool::receive, nullptr, nullptr),
              CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_EQ(cuptiUnsubscribe(first.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, ARequestAfterAFirstThatDidNotAskIsRefused) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    Tool v1_first, late;
    ASSERT_EQ(v1_first.subscribe_v1(), CUPTI_SUCCESS);
    EXPECT_EQ(late.subscribe_v2("late", 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(late.told, "CUPTI for an unnamed subscriber");
    ASSERT_EQ(cuptiUnsubscribe(v1_first.handle), CUPTI_SUCCESS);

    Tool v2_first, later;
    ASSERT_EQ(v2_first.subscribe_v2("alone", 0), CUPTI_SUCCESS);
    EXPECT_EQ(later.subscribe_v2("later", 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(later.told, "CUPTI for alone");
    EXPECT_EQ(cuptiUnsubscribe(v2_first.handle), CUPTI_SUCCESS);
  });
}

// A caller built against headers without the field passes the shorter structSize: whatever follows is not its.
TEST(CuptiSubscribers, TheRequestCountsOnlyWhereStructSizeCoversIt) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    Tool old_header, second;
    ASSERT_EQ(old_header.subscribe_v2("CUDA 13.0 build", 1, CUpti_SubscriberParams_STRUCT_SIZE), CUPTI_SUCCESS);
    EXPECT_EQ(second.subscribe_v2("second", 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(second.told, "CUPTI for CUDA 13.0 build");
    EXPECT_EQ(cuptiUnsubscribe(old_header.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, WhenAllHaveGoneTheNextFirstSetsTheModeAnew) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    Tool a, b;
    ASSERT_EQ(a.subscribe_v2("a", 1), CUPTI_SUCCESS);
    ASSERT_EQ(b.subscribe_v2("b", 1), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiUnsubscribe(a.handle), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiUnsubscribe(b.handle), CUPTI_SUCCESS);

    Tool v1, c;
    ASSERT_EQ(v1.subscribe_v1(), CUPTI_SUCCESS) << "a new session, opened by V1";
    EXPECT_EQ(c.subscribe_v2("c", 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(c.told, "CUPTI for an unnamed subscriber");
    ASSERT_EQ(cuptiUnsubscribe(v1.handle), CUPTI_SUCCESS);

    Tool d, e;
    ASSERT_EQ(d.subscribe_v2("d", 1), CUPTI_SUCCESS) << "and multi again";
    ASSERT_EQ(e.subscribe_v2("e", 1), CUPTI_SUCCESS);
    EXPECT_STREQ(e.told, "CUPTI for d");
    EXPECT_EQ(cuptiUnsubscribe(e.handle), CUPTI_SUCCESS);
    EXPECT_EQ(cuptiUnsubscribe(d.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, UnsubscribingOneOfTwoLeavesTheOtherReceiving) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    Tool a, b;
    ASSERT_EQ(a.subscribe_v2("a", 1), CUPTI_SUCCESS);
    ASSERT_EQ(b.subscribe_v2("b", 1), CUPTI_SUCCESS);
    for (Tool* tool : {&a, &b})
      ASSERT_EQ(cuptiEnableCallback(1, tool->handle, kDriverLaunch.first, kDriverLaunch.second), CUPTI_SUCCESS);
    ASSERT_EQ(launch_and_wait(), cudaSuccess);
    // ENTER, then EXIT, each to both in subscription order.
    EXPECT_EQ(take_deliveries(), (std::vector<const Tool*>{&a, &b, &a, &b}));

    ASSERT_EQ(cuptiUnsubscribe(a.handle), CUPTI_SUCCESS);
    ASSERT_EQ(launch_and_wait(), cudaSuccess);
    EXPECT_EQ(take_deliveries(), (std::vector<const Tool*>{&b, &b}));
    EXPECT_EQ(a.calls().size(), 2u);
    EXPECT_EQ(b.calls().size(), 4u);

    // The old handle is dead, and the oldest subscriber left is now the first.
    EXPECT_EQ(cuptiUnsubscribe(a.handle), CUPTI_ERROR_INVALID_PARAMETER);
    EXPECT_EQ(cuptiEnableDomain(1, a.handle, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_ERROR_INVALID_PARAMETER);
    uint32_t enabled = 0;
    EXPECT_EQ(cuptiGetCallbackState(&enabled, a.handle, kDriverLaunch.first, kDriverLaunch.second),
              CUPTI_ERROR_INVALID_PARAMETER);
    Tool c;
    ASSERT_EQ(c.subscribe_v2("c", 1), CUPTI_SUCCESS);
    EXPECT_STREQ(c.told, "CUPTI for b");
    EXPECT_EQ(cuptiUnsubscribe(b.handle), CUPTI_SUCCESS);
    EXPECT_EQ(cuptiUnsubscribe(c.handle), CUPTI_SUCCESS);
  });
}

TEST(CuptiSubscribers, AtMostEightInSubscriptionOrderUntilFinalize) {
  FRESH_PROCESS({
    use_multiple_subscriber_cupti();
    std::array<Tool, 9> tools;
    std::array<std::string, 9> names;
    for (size_t i = 0; i < tools.size(); ++i) names[i] = "tool " + std::to_string(i);
    for (size_t i = 0; i < 8; ++i) {
      ASSERT_EQ(tools[i].subscribe_v2(names[i].c_str(), 1), CUPTI_SUCCESS) << i;
      ASSERT_EQ(cuptiEnableCallback(1, tools[i].handle, kDriverLaunch.first, kDriverLaunch.second), CUPTI_SUCCESS);
    }
    Tool& ninth = tools[8];
    EXPECT_EQ(ninth.subscribe_v2(names[8].c_str(), 1), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_STREQ(ninth.told, "CUPTI for tool 0");

    // A place freed in the middle: the newcomer is called last, after those that subscribed before it.
    ASSERT_EQ(cuptiUnsubscribe(tools[3].handle), CUPTI_SUCCESS);
    ASSERT_EQ(ninth.subscribe_v2(names[8].c_str(), 1), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableCallback(1, ninth.handle, kDriverLaunch.first, kDriverLaunch.second), CUPTI_SUCCESS);
    take_deliveries();
    ASSERT_EQ(launch_and_wait(), cudaSuccess);
    std::vector<const Tool*> in_order;
    for (size_t i : {0, 1, 2, 4, 5, 6, 7, 8}) in_order.push_back(&tools[i]);
    std::vector<const Tool*> twice = in_order;  // ENTER, then EXIT
    twice.insert(twice.end(), in_order.begin(), in_order.end());
    EXPECT_EQ(take_deliveries(), twice);

    // Finalize drops every subscriber.
    ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
    ASSERT_EQ(launch_and_wait(), cudaSuccess);
    EXPECT_TRUE(take_deliveries().empty());
    for (Tool& tool : tools) EXPECT_EQ(cuptiUnsubscribe(tool.handle), CUPTI_ERROR_INVALID_PARAMETER);
    Tool v1;
    EXPECT_EQ(v1.subscribe_v1(), CUPTI_SUCCESS) << "a new session after finalize";
    EXPECT_EQ(cuptiUnsubscribe(v1.handle), CUPTI_SUCCESS);
  });
}

}  // namespace
