// What the pinpointing adds to the report and to the stderr summary: the culprit's confidence, reason, device message
// and hint; the device messages; the refused launches (no place in the launch order: seq null), and the first error
// taken from a refused launch when no sticky error came. Findings are built through a real Tracker; device messages
// come from the process's device_message_log(), fed once with one PyTorch assertion line before any test runs
// (whatever their order), so each test picks kernels that this message names, or not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/device_messages.h"
#include "core/tracker.h"
#include "report/report_json.h"
#include "report/summary.h"

namespace firstassert {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr const char* kNll = "_Z38nll_loss_forward_reduce_cuda_kernel_2dPfPKl";  // the function the message names
constexpr const char* kOther = "_Z11busy_kernelv";                                // named by no message
constexpr const char* kIndexSelect = "_Z19index_select_kernelPf";                 // a hint by its name only
constexpr const char* kMessage =
    "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
    "[5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n";

class Pinpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    static const bool fed = [] {
      device_message_log().feed(kMessage, std::strlen(kMessage));
      return true;
    }();
    (void)fed;
    ASSERT_EQ(device_message_log().count(), 1u) << "nothing else in this binary may feed the process's log";
  }

  void launch(const char* kernel, uintptr_t stream = 0x10) {
    LaunchEvent e;
    e.kernel = kernel;
    e.stream = stream;
    e.grid = {64, 2, 1};
    e.block = {256, 1, 1};
    e.shared_mem = 48;
    t.record_launch(e);
  }

  void refuse(const char* kernel, int code, ApiDomain domain = ApiDomain::runtime) {
    LaunchEvent e;
    e.kernel = kernel;
    e.stream = 0x30;
    e.grid = {1, 1, 1};
    e.block = {2048, 1, 1};
    e.api = domain == ApiDomain::driver ? LaunchApi::cuLaunchKernel : LaunchApi::cudaLaunchKernel;
    t.record_launch_error(e, domain, code);
  }

  void fault(int code = 710) {
    ApiCall c;
    c.api = "cudaDeviceSynchronize";
    c.code = code;
    c.kind = CallKind::sync_device;
    t.record_call(c);
  }

  json render() {
    ProcessInfo p;
    p.pid = 1;
    p.host = "node";
    Findings f = t.findings();
    std::vector<LoadedModule> modules;
    ReportInput in{p, f, modules, {"0.1.0", "cupti", ""}, false, 1764472365123456789};
    return json::parse(report_json(in));
  }

  Tracker t{64};
};

TEST_F(Pinpoint, CulpritCarriesConfidenceReasonMessageAndHint) {
  launch(kNll);
  fault();
  json r = render();
  EXPECT_EQ(r["first_error"]["sticky"], true);
  const json& c = r["culprit"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["seq"], 0);
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_THAT(c["reason"].get<std::string>(),
              HasSubstr("the only launch not seen to complete when cudaDeviceSynchronize reported cudaErrorAssert"));

  const json& m = c["device_message"];
  ASSERT_TRUE(m.is_object());
  EXPECT_EQ(m["file"], "../aten/src/ATen/native/cuda/Loss.cu");
  EXPECT_EQ(m["line"], 250);
  EXPECT_EQ(m["function"], "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(m["block"], json({0, 0, 0}));
  EXPECT_EQ(m["thread"], json({5, 0, 0}));
  EXPECT_EQ(m["condition"], "t >= 0 && t < n_classes");
  EXPECT_FALSE(m["time"].get<std::string>().empty()) << "when the line was seen";

  const json& h = c["hint"];
  ASSERT_TRUE(h.is_object());
  EXPECT_EQ(h["id"], "class-index-out-of-range");
  EXPECT_FALSE(h["title"].get<std::string>().empty());
  EXPECT_FALSE(h["text"].get<std::string>().empty());

  ASSERT_EQ(r["device_messages"].size(), 1u);
  EXPECT_EQ(r["device_messages"][0], m) << "the report lists every message, the culprit's among them";
  EXPECT_EQ(r["launch_errors"], json::array());
}

// A culprit the message does not name: no device message, and no hint unless its name or the code has one. The
// report still lists the message.
TEST_F(Pinpoint, CulpritWithoutAMatchingMessage) {
  launch(kOther);
  fault();
  json r = render();
  const json& c = r["culprit"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_TRUE(c["device_message"].is_null());
  EXPECT_TRUE(c["hint"].is_null());
  EXPECT_EQ(r["device_messages"].size(), 1u);
}

TEST_F(Pinpoint, HintFromTheKernelNameAlone) {
  launch(kIndexSelect);
  fault();
  json r = render();
  ASSERT_TRUE(r["culprit"].is_object());
  EXPECT_TRUE(r["culprit"]["device_message"].is_null());
  ASSERT_TRUE(r["culprit"]["hint"].is_object());
  EXPECT_EQ(r["culprit"]["hint"]["id"], "index-select-out-of-range");
}

TEST_F(Pinpoint, LikelyCulpritInTheReport) {
  launch(kOther, 0x10);  // 0
  launch(kNll, 0x20);    // 1
  launch(kOther, 0x10);  // 2
  fault();
  json r = render();
  EXPECT_EQ(r["culprit"]["seq"], 1);
  EXPECT_EQ(r["culprit"]["confidence"], "likely");
  EXPECT_TRUE(r["culprit"]["device_message"].is_object());
  EXPECT_EQ(r["candidates"].size(), 3u);
}

// Refused launches never entered the launch order: seq is null, and the error is given with its name.
TEST_F(Pinpoint, LaunchErrorsAreListedWithoutASeq) {
  refuse(kOther, 9);
  refuse(kIndexSelect, 701, ApiDomain::driver);
  json r = render();
  const json& l = r["launch_errors"];
  ASSERT_EQ(l.size(), 2u);
  EXPECT_TRUE(l[0]["seq"].is_null());
  EXPECT_EQ(l[0]["code"], 9);
  EXPECT_EQ(l[0]["name"], "cudaErrorInvalidConfiguration");
  EXPECT_EQ(l[0]["kernel"], "busy_kernel()");
  EXPECT_EQ(l[0]["api"], "cudaLaunchKernel");
  EXPECT_EQ(l[0]["block"], json({2048, 1, 1}));
  EXPECT_EQ(l[0]["stream"], "0x30");
  EXPECT_TRUE(l[1]["seq"].is_null());
  EXPECT_EQ(l[1]["code"], 701);
  EXPECT_EQ(l[1]["name"], "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(l[1]["api"], "cuLaunchKernel");
}

// No sticky error: the first refused launch is the first error (not sticky) and the culprit, exactly. Being outside
// the launch order, the culprit has no seq either.
TEST_F(Pinpoint, FirstErrorFromARefusedLaunch) {
  launch(kNll);  // accepted, and never failed: not the culprit
  refuse(kOther, 9);
  refuse(kOther, 701);
  json r = render();
  const json& e = r["first_error"];
  ASSERT_TRUE(e.is_object());
  EXPECT_EQ(e["api"], "cudaLaunchKernel");
  EXPECT_EQ(e["code"], 9);
  EXPECT_EQ(e["name"], "cudaErrorInvalidConfiguration");
  EXPECT_EQ(e["sticky"], false);
  EXPECT_TRUE(e["launches_before"].is_null());
  EXPECT_FALSE(e["time"].get<std::string>().empty());
  EXPECT_FALSE(e["description"].get<std::string>().empty());

  const json& c = r["culprit"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["kernel"], "busy_kernel()");
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_THAT(c["reason"].get<std::string>(), HasSubstr("refused this launch with cudaErrorInvalidConfiguration"));
  EXPECT_TRUE(c["device_message"].is_null()) << "the message names another kernel";
  ASSERT_TRUE(c["hint"].is_object()) << "the refusal's code has a hint";
  EXPECT_EQ(c["hint"]["id"], "too-many-threads");
  EXPECT_TRUE(c["seq"].is_null()) << "a refused launch has no seq, as in launch_errors; got " << c["seq"].dump();
}

TEST_F(Pinpoint, StickyErrorStaysTheFirstErrorOverARefusal) {
  refuse(kOther, 9);
  launch(kNll);
  fault();
  json r = render();
  EXPECT_EQ(r["first_error"]["code"], 710);
  EXPECT_EQ(r["first_error"]["sticky"], true);
  EXPECT_EQ(r["culprit"]["seq"], 0);
  EXPECT_EQ(r["culprit"]["hint"]["id"], "class-index-out-of-range");
  EXPECT_EQ(r["launch_errors"].size(), 1u);
}

// ---- Summary lines ----------------------------------------------------------------------------------------------

TEST_F(Pinpoint, SummaryHasDeviceAndHintLinesWhenKnown) {
  launch(kNll);
  fault();
  std::vector<std::string> lines = summary_lines(t.findings(), "/tmp/r.json");
  ASSERT_THAT(lines, SizeIs(5));
  EXPECT_THAT(lines[0], HasSubstr("device-side assert"));
  EXPECT_THAT(lines[1], HasSubstr("kernel nll_loss_forward_reduce_cuda_kernel_2d "));
  EXPECT_THAT(lines[1], HasSubstr("[exact: "));
  EXPECT_EQ(lines[2],
            "device: ../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block [0,0,0], "
            "thread [5,0,0]: `t >= 0 && t < n_classes` failed");
  EXPECT_THAT(lines[3], StartsWith("hint: a class label is outside [0, number of classes). "));
  EXPECT_THAT(lines[4], StartsWith("report: /tmp/r.json"));
  for (const std::string& l : lines) EXPECT_EQ(l.find('\n'), std::string::npos) << l;
}

TEST_F(Pinpoint, SummaryWithoutMessageOrHintHasNeither) {
  launch(kOther);
  fault();
  std::vector<std::string> lines = summary_lines(t.findings(), "/tmp/r.json");
  ASSERT_THAT(lines, SizeIs(3));
  for (const std::string& l : lines) {
    EXPECT_THAT(l, Not(StartsWith("device:")));
    EXPECT_THAT(l, Not(StartsWith("hint:")));
  }
}

TEST_F(Pinpoint, SummaryHintFromTheKernelNameWithoutADeviceLine) {
  launch(kIndexSelect);
  fault();
  std::vector<std::string> lines = summary_lines(t.findings(), "");
  ASSERT_THAT(lines, SizeIs(4));
  EXPECT_THAT(lines[2], StartsWith("hint: an index is >= the size of the dimension"));
}

TEST_F(Pinpoint, SummaryShowsTheLikelyCulpritsReason) {
  launch(kOther, 0x10);
  launch(kNll, 0x20);
  fault();
  std::vector<std::string> lines = summary_lines(t.findings(), "");
  ASSERT_THAT(lines, SizeIs(5));
  EXPECT_THAT(lines[1], HasSubstr("kernel nll_loss_forward_reduce_cuda_kernel_2d "));
  // No breadcrumbs: both launches can have failed, and only the nll_loss one fits the device's line.
  EXPECT_THAT(lines[1], HasSubstr("[likely: 2 launches not seen to complete when cudaDeviceSynchronize reported "
                                  "cudaErrorAssert could have failed"));
  EXPECT_THAT(lines[1], HasSubstr("only this one fits the device's assertion line "
                                  "(nll_loss_forward_reduce_cuda_kernel_2d, block [0,0,0], thread [5,0,0])"));
  EXPECT_THAT(lines[2], StartsWith("device: "));
}

TEST_F(Pinpoint, LaunchErrorLineNamesTheKernelConfigurationErrorAndHint) {
  refuse(kOther, 9);
  Findings f = t.findings();
  ASSERT_EQ(f.launch_errors.size(), 1u);
  EXPECT_EQ(launch_error_line(f.launch_errors[0]),
            "cudaLaunchKernel refused busy_kernel <<<(1,1,1), (2048,1,1), 0, stream 0x30>>>: "
            "cudaErrorInvalidConfiguration (9); invalid launch configuration");
  EXPECT_THAT(summary_lines(f, ""), ::testing::IsEmpty()) << "the refusal has its own line, not the fault summary";
}

TEST_F(Pinpoint, LaunchErrorLineWithoutAHint) {
  refuse(kOther, 2);
  Findings f = t.findings();
  ASSERT_EQ(f.launch_errors.size(), 1u);
  EXPECT_EQ(launch_error_line(f.launch_errors[0]),
            "cudaLaunchKernel refused busy_kernel <<<(1,1,1), (2048,1,1), 0, stream 0x30>>>: "
            "cudaErrorMemoryAllocation (2)");
}

TEST_F(Pinpoint, LaunchErrorLineUsesDriverNames) {
  refuse(kOther, 701, ApiDomain::driver);
  Findings f = t.findings();
  ASSERT_EQ(f.launch_errors.size(), 1u);
  std::string line = launch_error_line(f.launch_errors[0]);
  EXPECT_THAT(line, StartsWith("cuLaunchKernel refused busy_kernel "));
  EXPECT_THAT(line, HasSubstr(": CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701); too many resources requested"));
}

}  // namespace
}  // namespace firstassert
