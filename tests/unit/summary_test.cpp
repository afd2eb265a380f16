// summary_lines: the stderr lines a person sees at the fault. One line each, with the error, the culprit and the
// report's path.
#include "report/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace firstassert {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

LaunchEvent event(const char* kernel) {
  LaunchEvent e;
  e.kernel = kernel;
  e.grid = {64, 2, 1};
  e.block = {256, 1, 1};
  e.shared_mem = 48;
  e.stream = 0xabc;
  e.api = LaunchApi::cudaLaunchKernel;
  return e;
}

ApiCall call(const char* api, int code, CallKind kind = CallKind::other) {
  ApiCall c;
  c.api = api;
  c.code = code;
  c.kind = kind;
  return c;
}

void expect_single_lines(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    EXPECT_FALSE(l.empty());
    EXPECT_EQ(l.find('\n'), std::string::npos) << l;
  }
}

TEST(Summary, NothingToSayWithoutAPrimaryError) {
  Tracker t(64);
  t.record_launch(event("_Z6kernelPi"));
  EXPECT_THAT(summary_lines(t.findings(), "/tmp/r.json"), IsEmpty());
}

TEST(Summary, NamesTheErrorTheKernelAndTheReport) {
  Tracker t(64);
  t.record_launch(event("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"));
  t.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(call("cudaMemcpy", 710));
  std::vector<std::string> lines = summary_lines(t.findings(), "/tmp/firstassert-node7-1.json");
  ASSERT_THAT(lines, SizeIs(3));
  expect_single_lines(lines);
  EXPECT_THAT(lines[0], HasSubstr("device-side assert"));
  EXPECT_THAT(lines[0], HasSubstr("cudaErrorAssert"));
  EXPECT_THAT(lines[0], HasSubstr("710"));
  EXPECT_THAT(lines[0], HasSubstr("cudaDeviceSynchronize"));
  EXPECT_THAT(lines[1], HasSubstr("vectorized_elementwise_kernel"));
  EXPECT_THAT(lines[1], ::testing::Not(HasSubstr("at::native")));
  EXPECT_THAT(lines[1], HasSubstr("(64,2,1)"));
  EXPECT_THAT(lines[1], HasSubstr("(256,1,1)"));
  EXPECT_THAT(lines[1], HasSubstr("0xabc"));
  EXPECT_THAT(lines[1], HasSubstr("cudaLaunchKernel"));
  EXPECT_THAT(lines[1], HasSubstr("[exact: the only launch not seen to complete when cudaDeviceSynchronize reported "
                                  "cudaErrorAssert"));
  EXPECT_THAT(lines[2], HasSubstr("/tmp/firstassert-node7-1.json"));
  EXPECT_THAT(lines[2], HasSubstr("1 secondary error "));
}

TEST(Summary, PluralsAndUnmangledNames) {
  Tracker t(64);
  t.record_launch(event("triton_poi_fused_add_0"));
  t.record_launch(event("triton_red_fused_sum_1"));
  t.record_call(call("cuStreamSynchronize", 700, CallKind::sync_stream));
  std::vector<std::string> lines = summary_lines(t.findings(), "");
  ASSERT_THAT(lines, SizeIs(3));
  expect_single_lines(lines);
  EXPECT_THAT(lines[0], HasSubstr("illegal memory access"));
  // Two launches pending, no sync, no breadcrumbs: a window; the oldest is shown, not claimed.
  EXPECT_THAT(lines[1], HasSubstr("kernel triton_poi_fused_add_0 ")) << "the oldest pending launch is shown";
  EXPECT_THAT(lines[1], HasSubstr("[window: the failing launch is one of 2 launches not seen to complete when "
                                  "cuStreamSynchronize reported cudaErrorIllegalAddress"));
  EXPECT_THAT(lines[1], HasSubstr("the oldest is shown, not claimed]"));
  EXPECT_THAT(lines[2], HasSubstr("(not written)"));
  EXPECT_THAT(lines[2], HasSubstr("0 secondary errors"));
}

TEST(Summary, NoPendingLaunch) {
  Tracker t(64);
  t.record_call(call("cudaMemcpy", 719));
  std::vector<std::string> lines = summary_lines(t.findings(), "/tmp/r.json");
  ASSERT_THAT(lines, SizeIs(3));
  expect_single_lines(lines);
  EXPECT_THAT(lines[0], HasSubstr("unspecified launch failure"));
  // Nothing was launched: no launch can have failed, and none is named.
  EXPECT_THAT(lines[1], HasSubstr("firstassert recorded no launch before cudaMemcpy reported cudaErrorLaunchFailure"));
  EXPECT_THAT(lines[1], HasSubstr("launched before firstassert started"));
  EXPECT_THAT(lines[1], ::testing::Not(HasSubstr("kernel ")));
}

TEST(Summary, GraphLaunch) {
  Tracker t(64);
  LaunchEvent e = event(nullptr);
  e.graph = true;
  e.api = LaunchApi::cudaGraphLaunch;
  t.record_launch(e);
  t.record_call(call("cudaStreamSynchronize", 710, CallKind::sync_stream));
  std::vector<std::string> lines = summary_lines(t.findings(), "/tmp/r.json");
  ASSERT_THAT(lines, SizeIs(3));
  EXPECT_THAT(lines[1], HasSubstr("(CUDA graph)"));
  EXPECT_THAT(lines[1], HasSubstr("cudaGraphLaunch"));
}

}  // namespace
}  // namespace firstassert
