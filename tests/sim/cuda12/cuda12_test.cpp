// The simulator's CUDA 12 runtime and CUPTI (libcudart.so.12, libcupti.so.12) as a program built against CUDA 12.8's
// headers meets them: the versions they report, CUDA 12's cudaDeviceProp (cudaGetDeviceProperties_v2), the calls
// whose names CUDA 13 gave to other signatures, and CUPTI 12's callback ids for a launch and for those calls.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/stock_kernels.h"

static_assert(CUDART_VERSION / 1000 == 12, "built against CUDA 12's runtime headers");
static_assert(CUPTI_API_VERSION < 130000, "built against CUPTI 12's headers");

namespace {

struct Seen {
  CUpti_CallbackId cbid;
  std::string function;
  const void* launched = nullptr;  // cudaLaunchKernel's func, read at ENTER
};

struct Recorder {
  std::mutex mutex;
  std::vector<Seen> seen;
};

void CUPTIAPI record(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* recorder = static_cast<Recorder*>(userdata);
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || call->callbackSite != CUPTI_API_ENTER) return;
  Seen s{cbid, call->functionName != nullptr ? call->functionName : ""};
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
    s.launched = static_cast<const cudaLaunchKernel_v7000_params*>(call->functionParams)->func;
  std::lock_guard lock(recorder->mutex);
  recorder->seen.push_back(s);
}

TEST(Cuda12, RuntimeAndCuptiReportTheVersionsOfTheirHeaders) {
  int runtime = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_EQ(runtime, CUDART_VERSION);
  uint32_t cupti = 0;
  ASSERT_EQ(cuptiGetVersion(&cupti), CUPTI_SUCCESS);
  EXPECT_EQ(cupti, static_cast<uint32_t>(CUPTI_API_VERSION));
}

// CUDA 12's cudaDeviceProp still has the fields CUDA 13 removed; each holds what the device's attribute says.
TEST(Cuda12, DevicePropertiesFillCuda12sLayout) {
  cudaDeviceProp prop;
  std::memset(&prop, 0xab, sizeof prop);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);  // cudaGetDeviceProperties_v2 under CUDA 12's headers
  EXPECT_STRNE(prop.name, "");
  int attribute = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_EQ(prop.multiProcessorCount, attribute);
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrClockRate, 0), cudaSuccess);
  EXPECT_GT(attribute, 0);
  EXPECT_EQ(prop.clockRate, attribute);
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrMemoryClockRate, 0), cudaSuccess);
  EXPECT_EQ(prop.memoryClockRate, attribute);
  EXPECT_EQ(prop.computeMode, cudaComputeModeDefault);
}

TEST(Cuda12, CaptureInfoWithoutEdgeData) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  // CUDA 12's headers map this to cudaStreamGetCaptureInfo_v2, which PyTorch's CUDA 12 builds import.
  ASSERT_EQ(cudaStreamGetCaptureInfo(stream, &status, &id, &graph, nullptr, nullptr), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_NE(id, 0u);
  EXPECT_NE(graph, nullptr);
  cudaGraph_t captured = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &captured), cudaSuccess);
  EXPECT_EQ(captured, graph);
  EXPECT_EQ(cudaGraphDestroy(captured), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// The callback ids are CUPTI 12's: the launch's params name the kernel launched, and the device-properties call is
// reported under its CUDA 12 name.
TEST(Cuda12, CuptiReportsLaunchesAndCallsUnderCuda12sIds) {
  Recorder recorder;
  CUpti_SubscriberHandle subscriber = nullptr;
  ASSERT_EQ(cuptiSubscribe(&subscriber, record, &recorder), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  const void* busy = simkernels_host_stub("busy");
  ASSERT_NE(busy, nullptr);
  unsigned long long microseconds = 10;
  void* args[] = {&microseconds};
  ASSERT_EQ(cudaLaunchKernel(busy, dim3(1), dim3(32), args, 0, nullptr), cudaSuccess);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiUnsubscribe(subscriber), CUPTI_SUCCESS);

  bool launch = false, properties = false;
  for (const Seen& s : recorder.seen) {
    if (s.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
      launch = true;
      EXPECT_EQ(s.function, "cudaLaunchKernel");
      EXPECT_EQ(s.launched, busy);
    }
    if (s.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v2_v12000) {
      properties = true;
      EXPECT_EQ(s.function, "cudaGetDeviceProperties_v2");
    }
  }
  EXPECT_TRUE(launch);
  EXPECT_TRUE(properties);
}

}  // namespace
