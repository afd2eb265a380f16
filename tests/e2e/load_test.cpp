// The pinpointing under load (programs/load_job.cpp): a deep queue, many streams, streams made and destroyed by the
// thousand, a ring wrapped many times. The asserting launch's seq is the job's own count of its launches.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "shim_run.h"

namespace {

using e2e::Outcome;
using nlohmann::json;

Outcome run_load(const e2e::TempDir& dir, const std::vector<std::string>& args,
                 std::map<std::string, std::string> env = {}) {
  env["LD_PRELOAD"] = FIRSTASSERT_SHIM;
  std::vector<std::string> argv = {LOAD_JOB};
  argv.insert(argv.end(), args.begin(), args.end());
  return e2e::run_in(dir, argv, env);
}

// The report names the launch the job made assert, with this confidence.
void expect_named(const Outcome& o, const char* confidence) {
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(e2e::printed_word(o.run.out, "sync"), "cudaErrorAssert");
  const json& culprit = o.report["culprit"];
  ASSERT_TRUE(culprit.is_object()) << o.report["decision"];
  EXPECT_EQ(culprit["seq"], e2e::printed(o.run.out, "asserting launch")) << culprit["reason"];
  EXPECT_EQ(culprit["confidence"], confidence) << culprit["reason"];
  EXPECT_EQ(culprit["device_message"]["function"], "nll_loss_forward_reduce_cuda_kernel_2d");
}

TEST(Load, TheEleventhOfThreeHundredQueuedLaunchesIsExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"deep-queue"});
  expect_named(o, "exact");
  EXPECT_EQ(o.report["decision"]["candidates"], 1) << "one stream, one thread: its first unfinished launch alone";
  EXPECT_NE(o.report["culprit"]["reason"].get<std::string>().find("stream breadcrumbs"), std::string::npos);
}

// Without breadcrumbs all 300 are open (the job holds its stream until it has made them all, so none had run before
// the host made the last); the device's line names nll_loss, which only the asserting launch runs.
TEST(Load, WithoutBreadcrumbsTheDeviceLinePicksTheOneOfThreeHundred) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"deep-queue"}, {{"FIRSTASSERT_BREADCRUMBS", "0"}});
  expect_named(o, "likely");
  EXPECT_EQ(o.report["launches_recorded"], 300);
  EXPECT_EQ(o.report["decision"]["candidates"], 300);
  EXPECT_NE(o.report["culprit"]["reason"].get<std::string>().find("only this one fits"), std::string::npos);
}

TEST(Load, OneFailingStreamAmongSixtyFourFinishedOnesIsExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"many-streams", "64"});
  expect_named(o, "exact");
}

TEST(Load, AfterSixThousandStreamsMadeAndDestroyedTheAnswerIsStillExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"churn", "6000"});
  expect_named(o, "exact");
  EXPECT_EQ(o.run.err.find("breadcrumbs are off"), std::string::npos) << o.run.err;
}

// Thousands of threads come and go, each with three streams of its own and its own default stream (20,000
// (stream, thread) pairs, past the breadcrumbs' 16,384 slots): their slots come back when they end, and the answer
// stays exact.
TEST(Load, AfterFiveThousandThreadsCameAndWentTheAnswerIsStillExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"thread-churn", "5000"});
  expect_named(o, "exact");
  EXPECT_EQ(o.run.err.find("breadcrumbs are off"), std::string::npos) << o.run.err;
}

TEST(Load, AfterAMillionLaunchesTheAnswerIsStillExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"long", "1000000"});
  expect_named(o, "exact");
  EXPECT_EQ(o.report["launches_recorded"], 1000011) << "the million, then five, the assert and five more";
}

// The side stream's queued work waited on the main stream's asserting launch through an event: it never started.
TEST(Load, ASideStreamWaitingOnTheFailingStreamLeavesItExact) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"side-stream"});
  expect_named(o, "exact");
  EXPECT_NE(o.report["culprit"]["reason"].get<std::string>().find("waited (through an event) on unfinished work"),
            std::string::npos);
}

// Without breadcrumbs and without a sync, a wrapped ring cannot prove the launches it dropped complete.
TEST(Load, AWrappedRingWithoutBreadcrumbsOrSyncsIsUnknown) {
  e2e::TempDir dir;
  Outcome o = run_load(dir, {"long", "20000"}, {{"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["decision"]["confidence"], "unknown");
  EXPECT_TRUE(o.report["culprit"].is_null());
  EXPECT_NE(o.report["decision"]["reason"].get<std::string>().find("FIRSTASSERT_RING"), std::string::npos);
}

}  // namespace
