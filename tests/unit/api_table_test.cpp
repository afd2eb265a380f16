// The launch tables' callback-id lookup (source/api_table.h): every launch of either domain is found as itself, with
// its entry point, per-thread flag and graph flag, and nothing else is taken for a launch.
#include "core/no_ipa.h"
#include "source/api_table.h"
#include "source/launch_reader.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace firstassert::source {
namespace {

// Called as the observer calls it, on params it knows nothing of: inlined with one params type in sight, the
// compiler would check every case of the switch against that type.
FIRSTASSERT_NO_IPA bool describe(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                                     LaunchEvent& launch) {
  return describe_launch(domain, cbid, params, launch);
}

struct TableLaunch {
  std::string name;
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  LaunchApi api;
  bool per_thread;
  bool (*describe)(LaunchEvent&);  // describe() on value-initialized params of the entry's own type
};

#define FIRSTASSERT_TEST_LAUNCH(domain, prefix, suffix, type, launch_api, per_thread, reader)             \
  TableLaunch{#suffix, domain, prefix##suffix, LaunchApi::launch_api, per_thread, [](LaunchEvent& e) { \
                type params{};                                                                          \
                return describe(domain, prefix##suffix, &params, e);                                   \
              }},
#define FIRSTASSERT_TEST_RUNTIME_LAUNCH(...) \
  FIRSTASSERT_TEST_LAUNCH(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_, __VA_ARGS__)
#define FIRSTASSERT_TEST_DRIVER_LAUNCH(...) \
  FIRSTASSERT_TEST_LAUNCH(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_, __VA_ARGS__)

const std::vector<TableLaunch>& table_launches() {
  static const std::vector<TableLaunch> launches = {FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_TEST_RUNTIME_LAUNCH)
                                                        FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_TEST_DRIVER_LAUNCH)};
  return launches;
}

bool graph_api(LaunchApi api) { return api == LaunchApi::cudaGraphLaunch || api == LaunchApi::cuGraphLaunch; }

TEST(ApiTable, EveryLaunchIsDescribedAsItself) {
  for (const TableLaunch& t : table_launches()) {
    SCOPED_TRACE(t.name);
    EXPECT_TRUE(is_launch(t.domain, t.cbid));
    EXPECT_EQ(is_kernel_launch(t.domain, t.cbid), !graph_api(t.api));
    LaunchEvent e;
    e.api = t.api == LaunchApi::cudaLaunchKernel ? LaunchApi::cuLaunchKernel : LaunchApi::cudaLaunchKernel;
    e.per_thread_default_stream = !t.per_thread;
    ASSERT_TRUE(t.describe(e));
    EXPECT_EQ(e.api, t.api);
    EXPECT_EQ(e.per_thread_default_stream, t.per_thread);
    EXPECT_EQ(e.graph, graph_api(t.api));
  }
}

// A callback id listed twice would leave one of the two described as the other.
TEST(ApiTable, NoCallbackIdIsListedTwice) {
  std::set<std::pair<int, CUpti_CallbackId>> seen;
  for (const TableLaunch& t : table_launches())
    EXPECT_TRUE(seen.insert({t.domain, t.cbid}).second) << t.name;
}

TEST(ApiTable, OtherCallsAreNotLaunches) {
  LaunchEvent e;
  int params[64] = {};
  struct Call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
  };
  const Call others[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020},
      {CUPTI_CB_DOMAIN_RUNTIME_API, 0},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},       // a newer CUDA's id, past the table
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE + 1000},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
      {CUPTI_CB_DOMAIN_DRIVER_API, 0xffffffffu},
      // The same numbers as launches of the other domain, in a domain with no launches.
      {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
      {CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
  };
  for (const Call& c : others) {
    SCOPED_TRACE(std::to_string(c.domain) + "/" + std::to_string(c.cbid));
    EXPECT_FALSE(is_launch(c.domain, c.cbid));
    EXPECT_FALSE(is_kernel_launch(c.domain, c.cbid));
    EXPECT_FALSE(describe(c.domain, c.cbid, params, e));
  }
}

TEST(ApiTable, ALaunchWithoutParamsIsNotDescribed) {
  LaunchEvent e;
  EXPECT_FALSE(describe(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, nullptr, e));
  EXPECT_TRUE(is_kernel_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
}

TEST(ApiTable, ALaunchsFieldsAreReadFromItsParams) {
  cuLaunchKernel_params p{};
  p.gridDimX = 3;
  p.gridDimY = 2;
  p.gridDimZ = 1;
  p.blockDimX = 128;
  p.blockDimY = 1;
  p.blockDimZ = 1;
  p.sharedMemBytes = 4096;
  p.hStream = reinterpret_cast<CUstream>(0x1230);
  LaunchEvent e;
  ASSERT_TRUE(describe(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p, e));
  EXPECT_EQ(e.grid.x, 3u);
  EXPECT_EQ(e.grid.y, 2u);
  EXPECT_EQ(e.block.x, 128u);
  EXPECT_EQ(e.shared_mem, 4096u);
  EXPECT_EQ(e.stream, 0x1230u);

  cudaGraphLaunch_ptsz_v10000_params g{};
  g.graphExec = reinterpret_cast<cudaGraphExec_t>(0x4560);
  g.stream = reinterpret_cast<cudaStream_t>(0x7890);
  LaunchEvent graph;
  ASSERT_TRUE(describe(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, &g,
                              graph));
  EXPECT_TRUE(graph.graph);
  EXPECT_TRUE(graph.per_thread_default_stream);
  EXPECT_EQ(graph.graph_exec, 0x4560u);
  EXPECT_EQ(graph.stream, 0x7890u);
}

}  // namespace
}  // namespace firstassert::source

namespace firstassert::source {
namespace {

// cudaMemcpy proves earlier work complete only between host and device: a device-to-device copy (or cudaMemcpyDefault,
// whose direction the runtime infers) may return before it has run.
TEST(ApiTable, OnlyAHostDeviceCopyIsABlockingCopy) {
  for (cudaMemcpyKind kind : {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
                              cudaMemcpyDefault, cudaMemcpyHostToHost}) {
    cudaMemcpy_v3020_params params{};
    params.kind = kind;
    ApiCall call;
    ASSERT_TRUE(describe_stream_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &params, call));
    bool host_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost;
    EXPECT_EQ(call.kind == CallKind::blocking_copy, host_device) << "kind " << kind;
  }
}

// What each call means decides how much a successful call costs: launches, graph calls and stream calls with effects
// are meaningful; syncs only prove completion; the rest only have an error to check.
TEST(ApiTable, CallMeanings) {
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000), kMeaningful);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), kMeaningful);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020), kMeaningful);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050), kMeaningful);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020), kSyncOnly);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize), kSyncOnly);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020), kErrorOnly);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020), kErrorOnly);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020), kNoErrorCode);
  EXPECT_EQ(call_meaning(CUPTI_CB_DOMAIN_RESOURCE, 1), kErrorOnly);
}

}  // namespace
}  // namespace firstassert::source
