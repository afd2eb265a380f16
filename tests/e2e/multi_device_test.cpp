// Two simulated GPUs in one process (SIMCUDA_DEVICES=2; programs/multi_device_job.cpp), an assert on each in turn:
// the report names the asserting launch on its device, never a launch of the healthy one, names the failing GPU (its
// ordinal, name, UUID and PCI bus id, as the driver gives them) first, and says what the other one did after the
// error. Through either event source.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "shim_run.h"

namespace {

using nlohmann::json;

struct Case {
  const char* scenario;
  int failing;
  const char* backend;
};

std::string name_of(const Case& c) {
  return std::string(c.scenario) + "_on_" + std::to_string(c.failing) + "_" + c.backend;
}

class TwoDevices : public ::testing::TestWithParam<Case> {
 protected:
  e2e::Outcome run(const Case& c) {
    std::string backend = c.backend;
    std::map<std::string, std::string> env = {{"SIMCUDA_DEVICES", "2"}, {"LD_PRELOAD", FIRSTASSERT_SHIM}};
    if (backend == "cupti_breadcrumbs_off") {
      env["FIRSTASSERT_BREADCRUMBS"] = "0";  // a sync that succeeds is recorded then
      backend = "cupti";
    }
    env["FIRSTASSERT_BACKEND"] = backend;
    return e2e::run_in(dir_, {MULTI_DEVICE_JOB, c.scenario, std::to_string(c.failing)}, env);
  }
  e2e::TempDir dir_;
};

TEST_P(TwoDevices, TheFailingDevicesLaunchIsNamedAndTheOtherDeviceIsItsOwn) {
  const Case& c = GetParam();
  e2e::Outcome o = run(c);
  ASSERT_EQ(o.run.exit_code, 0) << o.run.err;
  ASSERT_EQ(e2e::printed_word(o.run.out, "failing sync"), "cudaErrorAssert") << o.run.out;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& r = o.report;
  SCOPED_TRACE(r["decision"].dump());
  EXPECT_EQ(r["first_error"]["code"], 710);
  EXPECT_EQ(r["first_error"]["device"], c.failing);
  const json& culprit = r["culprit"];
  ASSERT_TRUE(culprit.is_object());
  EXPECT_EQ(culprit["device"], c.failing);
  bool breadcrumbs = std::string(c.backend) != "cupti_breadcrumbs_off";
  if (breadcrumbs) {
    EXPECT_EQ(r["decision"]["confidence"], "exact");
    EXPECT_EQ(culprit["short_name"], "nll_loss_forward_reduce_cuda_kernel_2d");
  }
  bool held = false;  // without breadcrumbs, the window holds it
  for (const json& candidate : r["candidates"]) {
    EXPECT_EQ(candidate["device"], c.failing) << candidate;
    held |= candidate["short_name"] == "nll_loss_forward_reduce_cuda_kernel_2d";
  }
  EXPECT_TRUE(held || culprit["short_name"] == "nll_loss_forward_reduce_cuda_kernel_2d") << r["candidates"];
  EXPECT_NE(r["decision"]["reason"].get<std::string>().find(
                "only launches made in the context that returned the error (cuda:" + std::to_string(c.failing) + ")"),
            std::string::npos);

  // The GPUs, the failing one first, as the driver names them; each its own board.
  const json& devices = r["devices"];
  ASSERT_EQ(devices.size(), 2u) << devices;
  EXPECT_EQ(devices[0]["ordinal"], c.failing);
  EXPECT_TRUE(devices[0]["failed_first"].get<bool>());
  EXPECT_EQ(devices[1]["ordinal"], 1 - c.failing);
  for (const json& d : devices) {
    EXPECT_TRUE(d["name"].is_string()) << d;
    EXPECT_EQ(d["uuid"].get<std::string>().rfind("GPU-", 0), 0u) << d;
    EXPECT_EQ(d["pci_bus_id"].get<std::string>().size(), std::string("0000:18:00.0").size()) << d;
  }
  EXPECT_NE(devices[0]["uuid"], devices[1]["uuid"]);
  EXPECT_NE(devices[0]["pci_bus_id"], devices[1]["pci_bus_id"]);
  EXPECT_NE(o.run.err.find("firstassert: gpu: cuda:" + std::to_string(c.failing) + " "), std::string::npos)
      << o.run.err;
  // The summary says what was known when the error was seen: in `threads` the other device's thread may not have
  // launched yet (the report, rewritten at exit, has both).
  if (std::string(c.scenario) != "threads") {
    EXPECT_NE(o.run.err.find("1 of the 2 GPUs this process used"), std::string::npos) << o.run.err;
  }

  // After the error: the other device went on (its sync succeeded), or failed too when it asserted as well.
  const json& after = devices[1]["after_first_error"];
  std::string other_sync = e2e::printed_word(o.run.out, "other sync");
  if (std::string(c.scenario) == "both") {
    EXPECT_EQ(other_sync, "cudaErrorAssert");
    EXPECT_EQ(after["state"], "failed") << after;
    EXPECT_EQ(after["first_error"]["name"], "cudaErrorAssert") << after;
  } else if (std::string(c.scenario) == "waits") {
    // Nothing was launched on it after the error, and with breadcrumbs its sync, which succeeded, is not recorded:
    // not known either way, never failed.
    EXPECT_EQ(other_sync, "cudaSuccess");
    EXPECT_NE(after["state"], "failed") << after;
  } else {
    // It was given work after the error: its sync succeeded (recorded where the breadcrumbs are off), or those
    // launches were seen complete.
    EXPECT_EQ(other_sync, "cudaSuccess");
    EXPECT_EQ(after["state"], "working") << after;
    EXPECT_GE(after["syncs_succeeded"].get<int>() + after["launches_completed"].get<int>(), 1) << after;
  }
}

const Case kCases[] = {
    {"busy", 0, "cupti"},    {"busy", 1, "cupti"},    {"threads", 0, "cupti"},   {"threads", 1, "cupti"},
    {"peer", 0, "cupti"},    {"peer", 1, "cupti"},    {"waits", 0, "cupti"},     {"waits", 1, "cupti"},
    {"both", 0, "cupti"},    {"both", 1, "cupti"},    {"busy", 1, "interpose"},  {"threads", 0, "interpose"},
    {"peer", 1, "interpose"}, {"waits", 0, "interpose"}, {"busy", 0, "cupti_breadcrumbs_off"},
};

INSTANTIATE_TEST_SUITE_P(Scenarios, TwoDevices, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return name_of(info.param); });

}  // namespace
