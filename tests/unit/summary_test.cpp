// summary_lines: the stderr lines a person sees at the fault. One line each, with the error, the culprit and the
// report's path.
#include "report/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
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
  ASSERT_THAT(lines, SizeIs(5));  // the window of two is named whole on lines 2 and 3
  expect_single_lines(lines);
  EXPECT_THAT(lines[0], HasSubstr("illegal memory access"));
  // Two launches pending, no sync, no breadcrumbs: a window; the oldest is shown, not claimed.
  EXPECT_THAT(lines[1], HasSubstr("kernel triton_poi_fused_add_0 ")) << "the oldest pending launch is shown";
  EXPECT_THAT(lines[1], HasSubstr("[window: the failing launch is one of 2 launches not seen to complete when "
                                  "cuStreamSynchronize reported cudaErrorIllegalAddress"));
  EXPECT_THAT(lines[1], HasSubstr("the oldest is shown, not claimed]"));
  EXPECT_THAT(lines[4], HasSubstr("(not written)"));
  EXPECT_THAT(lines[4], HasSubstr("0 secondary errors"));
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

// A job's launches, one per stream, each from its own line of the user's code below a library frame (the user's line
// is the innermost frame outside site-packages).
struct Job {
  static constexpr const char* kKernels[] = {"triton_poi_fused_add_0", "triton_red_fused_sum_1",
                                             "triton_per_fused_softmax_2", "triton_poi_fused_mul_3",
                                             "triton_poi_fused_div_4"};
  PythonFrame frames[5][2];
  Tracker tracker{64};

  explicit Job(size_t launches) {
    for (size_t i = 0; i < launches; ++i) {
      frames[i][0] = {"/usr/lib/python3.11/site-packages/torch/_inductor/runtime/triton_heuristics.py", "run", 900};
      frames[i][1] = {"/tmp/job/train.py", "step", user_line(i)};
      LaunchEvent e = event(kKernels[i]);
      e.stream = stream(i);
      e.python_stack = frames[i];
      e.python_depth = 2;
      tracker.record_launch(e);
    }
  }
  static int32_t user_line(size_t i) { return static_cast<int32_t>(20 + i); }
  static uintptr_t stream(size_t i) { return 0x7f00 + i; }
  // What the summary must say of launch i, in the words of the culprit's own lines.
  static std::string named(size_t i) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(stream(i)));
    return std::string("kernel ") + kKernels[i] + " on stream " + hex + ", launched from /tmp/job/train.py:" +
           std::to_string(user_line(i)) + " in step (Python)";
  }
};

std::vector<std::string> starting_with(const std::vector<std::string>& lines, const std::string& start) {
  std::vector<std::string> out;
  for (const std::string& l : lines)
    if (l.rfind(start, 0) == 0) out.push_back(l);
  return out;
}

// A window of at most four is named whole: each launch on a line of its own (kernel, stream, the user's line), the
// one shown marked, after the shown one's own lines and before the report's path.
TEST(Summary, ASmallWindowNamesEachOfItsLaunches) {
  for (size_t n : {2u, 4u}) {
    SCOPED_TRACE(n);
    Job job(n);
    job.tracker.record_call(call("cuStreamSynchronize", 700, CallKind::sync_stream));
    std::vector<std::string> lines = summary_lines(job.tracker.findings(), "/tmp/r.json");
    expect_single_lines(lines);
    ASSERT_GE(lines.size(), 2u);
    ASSERT_THAT(lines[1], HasSubstr("[window: the failing launch is one of " + std::to_string(n) + " launches"));
    // No sync and no breadcrumbs: the oldest, launch 0, is the one shown.
    ASSERT_THAT(lines[1], HasSubstr("kernel " + std::string(Job::kKernels[0]) + " "));
    std::vector<std::string> window = starting_with(lines, "window: ");
    ASSERT_THAT(window, SizeIs(n));
    for (size_t i = 0; i < n; ++i) {
      EXPECT_THAT(window[i], ::testing::StartsWith("window: " + std::to_string(i + 1) + " of " + std::to_string(n)));
      size_t naming = 0;
      for (const std::string& l : window) naming += l.find(": " + Job::named(i)) != std::string::npos;
      EXPECT_EQ(naming, 1u) << "launch " << i << " is named once: " << Job::named(i);
    }
    size_t marked = 0;
    for (const std::string& l : window) {
      if (l.find(", the one shown: ") == std::string::npos) continue;
      ++marked;
      EXPECT_THAT(l, HasSubstr(Job::named(0)));
    }
    EXPECT_EQ(marked, 1u);
    EXPECT_EQ(lines[2], "launched from /tmp/job/train.py:20 in step (Python)") << "the shown one's line comes first";
    EXPECT_EQ(lines[3], window[0]);
    EXPECT_THAT(lines.back(), ::testing::StartsWith("report: /tmp/r.json "));
  }
}

// A window of five is left to the report: only the one shown is named, as before.
TEST(Summary, AWindowOfFiveIsNotListed) {
  Job job(5);
  job.tracker.record_call(call("cuStreamSynchronize", 700, CallKind::sync_stream));
  std::vector<std::string> lines = summary_lines(job.tracker.findings(), "/tmp/r.json");
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr("[window: the failing launch is one of 5 launches"));
  EXPECT_THAT(starting_with(lines, "window: "), IsEmpty());
  for (size_t i = 1; i < 5; ++i) {
    for (const std::string& l : lines) EXPECT_THAT(l, ::testing::Not(HasSubstr(Job::kKernels[i])));
  }
  EXPECT_THAT(lines, ::testing::Contains("launched from /tmp/job/train.py:20 in step (Python)"));
}

// Of five that can have failed, the two the device's line fits (listed first) are the window: it is named whole.
TEST(Summary, TheLaunchesThatFitTheDevicesLineAreTheWindowNamed) {
  Job job(5);
  job.tracker.record_call(call("cuStreamSynchronize", 700, CallKind::sync_stream));
  Findings f = job.tracker.findings();
  ASSERT_EQ(f.candidates.size(), 5u);
  f.candidates_fitting = 2;  // as the decision says when the line fits two of them: those, first in its order
  std::vector<std::string> window = starting_with(summary_lines(f, "/tmp/r.json"), "window: ");
  ASSERT_THAT(window, SizeIs(2));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_THAT(window[i], ::testing::StartsWith("window: " + std::to_string(i + 1) + " of 2"));
    EXPECT_THAT(window[i], HasSubstr("kernel " + std::string(f.candidates[i].kernel) + " on stream "));
  }
  f.candidates_fitting = 5;  // all fit: a window of five, left to the report
  EXPECT_THAT(starting_with(summary_lines(f, "/tmp/r.json"), "window: "), IsEmpty());
}

// One launch that can have failed: the summary is the claim and its lines, nothing listed.
TEST(Summary, AnExactClaimListsNothing) {
  Job job(1);
  job.tracker.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  std::vector<std::string> lines = summary_lines(job.tracker.findings(), "/tmp/r.json");
  ASSERT_THAT(lines, SizeIs(4));
  EXPECT_THAT(lines[1], ::testing::StartsWith("kernel triton_poi_fused_add_0 <<<(64,2,1), (256,1,1), 48, stream "
                                              "0x7f00>>> via cudaLaunchKernel [exact: "));
  EXPECT_EQ(lines[2], "launched from /tmp/job/train.py:20 in step (Python)");
  EXPECT_THAT(lines[3], ::testing::StartsWith("report: /tmp/r.json ("));
}

// A launch of a window with no stack kept (FIRSTASSERT_PYTHON=0, FIRSTASSERT_STACK_DEPTH=0) says so.
TEST(Summary, AWindowLaunchWithoutAStackSaysSo) {
  Tracker t(64);
  t.record_launch(event("triton_poi_fused_add_0"));
  t.record_launch(event("triton_red_fused_sum_1"));
  t.record_call(call("cuStreamSynchronize", 700, CallKind::sync_stream));
  std::vector<std::string> window = starting_with(summary_lines(t.findings(), ""), "window: ");
  ASSERT_THAT(window, SizeIs(2));
  EXPECT_THAT(window, ::testing::Contains(
                          "window: 2 of 2, the one shown: kernel triton_poi_fused_add_0 on stream 0xabc, no stack kept"));
  EXPECT_THAT(window, ::testing::Contains("window: 1 of 2: kernel triton_red_fused_sum_1 on stream 0xabc, no stack kept"));
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
