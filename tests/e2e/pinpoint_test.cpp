// Pinpointing end to end: which launch failed, with what confidence, by stream breadcrumbs, forced
// synchronization, the device's own assertion line and the hints, on simulator programs under the shim.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "shim_run.h"

namespace {

using e2e::Outcome;
using e2e::printed_word;
using e2e::run_in;
using nlohmann::json;

const std::string kShim = FIRSTASSERT_SHIM;
using e2e::kNllLoss;
const std::string kIndexSelect = "_ZN2at6native21indexSelectLargeIndexIflEEvPT_PKS2_PKT0_lll";
const std::string kForcedSync = "cuStreamSynchronize (forced by firstassert after the launch)";

// Every pinpointing test runs through both event sources: the reports must be the same.
class Pinpoint : public ::testing::TestWithParam<const char*> {
 protected:
  Outcome run_job(const e2e::TempDir& dir, const std::string& mode, std::map<std::string, std::string> env = {}) {
    env["LD_PRELOAD"] = kShim;
    env["FIRSTASSERT_BACKEND"] = GetParam();
    Outcome o = run_in(dir, {PINPOINT_JOB, mode}, env);
    if (!o.report.is_null() && !o.report.is_discarded()) {
      EXPECT_EQ(o.report["tool"]["backend"], GetParam());
    }
    return o;
  }
  Outcome run_program(const e2e::TempDir& dir, std::vector<std::string> argv, std::map<std::string, std::string> env) {
    env["LD_PRELOAD"] = kShim;
    env["FIRSTASSERT_BACKEND"] = GetParam();
    return run_in(dir, argv, env);
  }
};

const json& culprit(const Outcome& o) { return o.report["culprit"]; }

TEST_P(Pinpoint, FifthOfEightInFlightLaunchesIsExactByBreadcrumbsWithoutAnySync) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(printed_word(o.run.out, "next call"), "cudaSuccess") << "no forced sync: the program ran on";
  EXPECT_EQ(o.report["first_error"]["api"], "cudaDeviceSynchronize");
  EXPECT_EQ(o.report["candidates"].size(), 1u) << "of the eight in flight, only the first unfinished can have failed";
  EXPECT_EQ(culprit(o)["seq"], 4);
  EXPECT_EQ(culprit(o)["mangled"], kNllLoss);
  EXPECT_EQ(culprit(o)["confidence"], "exact");
  EXPECT_NE(culprit(o)["reason"].get<std::string>().find("stream breadcrumbs"), std::string::npos);
}

TEST_P(Pinpoint, DeviceMessageIsParsedAndAttachedWithItsHint) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  ASSERT_EQ(o.report["device_messages"].size(), 1u);
  const json& m = o.report["device_messages"][0];
  EXPECT_EQ(m["file"], "../aten/src/ATen/native/cuda/Loss.cu");
  EXPECT_EQ(m["line"], 250);
  EXPECT_EQ(m["function"], "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(m["block"], json::array({0, 0, 0}));
  EXPECT_EQ(m["thread"], json::array({2, 0, 0}));
  EXPECT_EQ(m["condition"], "t >= 0 && t < n_classes");
  EXPECT_EQ(culprit(o)["device_message"]["function"], "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(culprit(o)["hint"]["id"], "class-index-out-of-range");
  EXPECT_NE(o.run.err.find("firstassert: hint: a class label is outside [0, number of classes)"), std::string::npos)
      << o.run.err;
}

// Lines another library wrote before, their newlines written apart (std::endl: putc), stay lines of their own: an
// assertion line among them is parsed from its own start, not glued to the log line before it.
TEST_P(Pinpoint, LinesEndedByStdEndlAreNotGluedTogether) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "logged-in-flight");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& messages = o.report["device_messages"];
  ASSERT_EQ(messages.size(), 2u) << messages.dump(1);
  EXPECT_EQ(messages[0]["file"], "/pytorch/aten/src/ATen/native/cuda/Loss.cu");
  EXPECT_EQ(messages[0]["thread"], json::array({7, 0, 0}));
  EXPECT_EQ(messages[1]["file"], "../aten/src/ATen/native/cuda/Loss.cu");
}

// cudaGetDevice is not followed (docs/architecture.md, "Which calls are followed"): the program learns of the fault
// there first, and the next followed call, cudaGetLastError, reports it. Nothing is lost: the culprit is exact.
TEST_P(Pinpoint, AnErrorAnUnfollowedCallReturnsFirstIsReportedByTheNextFollowedOne) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "unfollowed-first");
  EXPECT_EQ(printed_word(o.run.out, "cudaGetDevice"), "cudaErrorAssert") << "the unfollowed call saw it first";
  EXPECT_EQ(printed_word(o.run.out, "cudaGetLastError"), "cudaErrorAssert");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["first_error"]["api"], "cudaGetLastError");
  EXPECT_EQ(culprit(o)["mangled"], kNllLoss);
  EXPECT_EQ(culprit(o)["confidence"], "exact") << culprit(o)["reason"];
}

TEST_P(Pinpoint, WithoutBreadcrumbsTheDeviceMessageNarrowsTheWindow) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight", {{"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(culprit(o)["seq"], 4);
  EXPECT_EQ(culprit(o)["confidence"], "likely") << culprit(o)["reason"];
  EXPECT_NE(culprit(o)["reason"].get<std::string>().find(
                "only this one fits the device's assertion line (nll_loss_forward_reduce_cuda_kernel_2d"),
            std::string::npos);
  EXPECT_EQ(o.report["decision"]["candidates"], 8) << "without breadcrumbs all eight in flight can have failed";
}

// Launches 0 and 1 on stream A, 2 to 4 on B; launch 3 (index_select) asserts while launch 0 (busy, a minute long)
// still runs on A. The breadcrumbs leave one unfinished launch per stream, 0 and 3, and only index_select fits the
// device's line: likely.
TEST_P(Pinpoint, TwoBusyStreamsTheDeviceMessageChoosesTheStream) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "two-streams");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(culprit(o)["seq"], 3);
  EXPECT_EQ(culprit(o)["mangled"], kIndexSelect);
  EXPECT_EQ(culprit(o)["confidence"], "likely") << culprit(o)["reason"];
  EXPECT_NE(culprit(o)["reason"].get<std::string>().find(
                "2 launches (the first unfinished launch of each launching thread on 2 streams) could have failed; "
                "only this one fits the device's assertion line (indexSelectLargeIndex"),
            std::string::npos)
      << culprit(o)["reason"];
  const json& candidates = o.report["candidates"];
  ASSERT_EQ(candidates.size(), 2u) << candidates.dump(2);
  std::map<int, const json*> by_seq;
  for (const json& c : candidates) by_seq[c["seq"].get<int>()] = &c;
  ASSERT_EQ(by_seq.count(0), 1u) << candidates.dump(2);
  ASSERT_EQ(by_seq.count(3), 1u) << candidates.dump(2);
  EXPECT_EQ((*by_seq[0])["kernel"], "simkernels::busy_kernel(unsigned long long)");
  EXPECT_NE((*by_seq[0])["stream"], culprit(o)["stream"]) << "one candidate per stream";
  EXPECT_EQ(culprit(o)["hint"]["id"], "index-select-out-of-range");
}

TEST_P(Pinpoint, SyncAllNamesTheLaunchExactlyAndTheNextCallAlreadyFails) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight", {{"FIRSTASSERT_SYNC", "all"}, {"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(printed_word(o.run.out, "next call"), "cudaErrorAssert");
  EXPECT_EQ(o.report["first_error"]["api"], kForcedSync);
  EXPECT_EQ(culprit(o)["seq"], 4);
  EXPECT_EQ(culprit(o)["confidence"], "exact");
  EXPECT_EQ(o.report["launches_recorded"], 5) << "nothing was launched after the failing one";
}

TEST_P(Pinpoint, SyncEveryThreeCatchesItAtTheNextForcedSyncAndBreadcrumbsNarrow) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight", {{"FIRSTASSERT_SYNC", "every:3"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  // Forced syncs follow launches 2 and 5: the first passes; launch 4 waits behind launch 3, so the program's next
  // call still succeeds, and the second forced sync meets the fault.
  EXPECT_EQ(printed_word(o.run.out, "next call"), "cudaSuccess");
  EXPECT_EQ(o.report["first_error"]["api"], kForcedSync);
  EXPECT_EQ(o.report["candidates"].size(), 1u)
      << "of the launches since the last forced sync, the breadcrumbs leave the first unfinished";
  EXPECT_EQ(culprit(o)["seq"], 4);
  EXPECT_EQ(culprit(o)["confidence"], "exact");
}

TEST_P(Pinpoint, SyncKernelRegexSynchronizesOnlyMatchingKernels) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "in-flight", {{"FIRSTASSERT_SYNC", "kernel:nll_loss"}, {"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(printed_word(o.run.out, "next call"), "cudaErrorAssert") << "synchronized right after nll_loss";
  EXPECT_EQ(o.report["first_error"]["api"], kForcedSync);
  EXPECT_EQ(culprit(o)["seq"], 4);

  e2e::TempDir other;
  Outcome unmatched =
      run_job(other, "in-flight", {{"FIRSTASSERT_SYNC", "kernel:^no_such_kernel$"}, {"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(unmatched.reports.size(), 1u) << unmatched.run.err;
  EXPECT_EQ(printed_word(unmatched.run.out, "next call"), "cudaSuccess") << "no kernel matched: no forced sync";
  EXPECT_EQ(unmatched.report["first_error"]["api"], "cudaDeviceSynchronize");
}

TEST_P(Pinpoint, CapturingStreamGetsNoBreadcrumbAndNoForcedSync) {
  e2e::TempDir dir;
  Outcome o = run_program(dir, {RUNTIME_JOB, "--graph"}, {{"FIRSTASSERT_SYNC", "all"}, {"FIRSTASSERT_LOG", "info"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  // Had a write or a sync reached the capturing stream, the capture would have been invalidated and the graph
  // never launched.
  EXPECT_EQ(culprit(o)["api"], "cudaGraphLaunch");
  EXPECT_NE(o.run.err.find("firstassert: FIRSTASSERT_SYNC: no forced synchronization while a stream is capturing"),
            std::string::npos)
      << o.run.err;
  EXPECT_EQ(o.run.err.find("simcuda: capturing work other than kernel launches"), std::string::npos) << o.run.err;
}

TEST_P(Pinpoint, RefusedLaunchIsTheFirstErrorOfAJobThatEndsWell) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "big-block");
  EXPECT_EQ(o.run.exit_code, 0);
  EXPECT_EQ(printed_word(o.run.out, "launch"), "cudaErrorInvalidConfiguration");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["first_error"]["code"], 9);
  EXPECT_EQ(o.report["first_error"]["sticky"], false);
  EXPECT_EQ(culprit(o)["confidence"], "exact");
  EXPECT_EQ(culprit(o)["kernel"], "simkernels::busy_kernel(unsigned long long)");
  EXPECT_EQ(culprit(o)["block"], json::array({2048, 1, 1}));
  EXPECT_EQ(culprit(o)["grid"], json::array({2, 1, 1}));
  EXPECT_EQ(culprit(o)["hint"]["id"], "too-many-threads");
  EXPECT_EQ(o.report["launch_errors"].size(), 1u);
  EXPECT_EQ(o.report["final"], true);
  EXPECT_NE(o.run.err.find("firstassert: report: " + o.reports.front()), std::string::npos) << o.run.err;
  EXPECT_NE(o.run.err.find("firstassert: cudaLaunchKernel refused busy_kernel <<<(2,1,1), (2048,1,1), 0, stream "
                           "0x0>>>: cudaErrorInvalidConfiguration (9); invalid launch configuration"),
            std::string::npos)
      << o.run.err;
}

TEST_P(Pinpoint, RefusedLaunchReportSurvivesAnAbort) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "big-block-abort");
  EXPECT_EQ(o.run.exit_code, 128 + 6);
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["first_error"]["code"], 9);
  EXPECT_EQ(o.report["final"], false);
}

// What the program itself wrote on stderr reaches the user byte for byte, in order, with or without the shim.
TEST_P(Pinpoint, ProgramStderrIsByteIdenticalUnderTheShim) {
  for (const char* mode : {"in-flight", "two-streams", "kill"}) {
    e2e::TempDir bare_dir, shim_dir;
    e2e::Run bare = e2e::run({PINPOINT_JOB, mode}, {}, bare_dir.path());
    Outcome traced = run_job(shim_dir, mode);
    EXPECT_EQ(traced.run.exit_code, bare.exit_code) << mode;
    EXPECT_EQ(traced.run.out, bare.out) << mode;
    EXPECT_NE(bare.err.find("Assertion `"), std::string::npos) << mode << ": " << bare.err;
    EXPECT_EQ(e2e::without_firstassert_lines(traced.run.err), bare.err) << mode;
  }
}

TEST_P(Pinpoint, KilledRightAfterTheAssertLineTheReportIsComplete) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "kill");
  EXPECT_EQ(o.run.exit_code, 128 + 9);
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  ASSERT_FALSE(o.report.is_discarded()) << "the report written at detection is whole, valid JSON";
  EXPECT_EQ(o.report["final"], false) << "no exit handler ran";
  EXPECT_EQ(culprit(o)["seq"], 4);
  EXPECT_EQ(o.report["device_messages"].size(), 1u);
  EXPECT_EQ(o.report["secondary"]["count"], 0);
}

// Killed (as a notebook kernel often is) after a secondary error: the report was rewritten when it came.
TEST_P(Pinpoint, KilledAfterASecondaryErrorTheReportCountsIt) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "kill-after-secondary");
  EXPECT_EQ(o.run.exit_code, 128 + 9);
  ASSERT_NE(o.run.out.find("after the sync: cudaErrorAssert"), std::string::npos) << o.run.out;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["final"], false) << "no exit handler ran";
  EXPECT_EQ(o.report["secondary"]["count"], 1) << o.report["secondary"].dump(2);
  EXPECT_EQ(culprit(o)["seq"], 4);
}

// The plain training loop (programs/training_loop_job.cpp): forward and loss on the main thread, backward on another
// thread, optimizer on the main thread, one stream, no host read in the loop, and a device line that fits every
// launch. The backward thread's launches were queued after the loss kernel's call had returned, behind its
// breadcrumb: only the loss can have failed, at the first summary on stderr and in the report at exit, whether the
// backward thread is new each step or lives for the loop, on the legacy stream or a created one.
TEST_P(Pinpoint, ThePlainTrainingLoopIsExactOnTheLossKernel) {
  struct Shape {
    const char *threads, *stream, *api;
  };
  for (const Shape& shape : {Shape{"fresh", "legacy", "runtime"}, Shape{"fresh", "created", "runtime"},
                             Shape{"persistent", "legacy", "runtime"}, Shape{"persistent", "created", "runtime"},
                             Shape{"fresh", "legacy", "driver"}, Shape{"persistent", "created", "driver"}}) {
    SCOPED_TRACE(std::string(shape.threads) + " backward thread, " + shape.stream + " stream, " + shape.api +
                 " launches");
    e2e::TempDir dir;
    Outcome o = run_program(dir, {TRAINING_LOOP_JOB, "8", "5", shape.threads, shape.stream, shape.api}, {});
    ASSERT_EQ(printed_word(o.run.out, "sync"), "cudaErrorAssert") << o.run.out << o.run.err;
    ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
    const json& c = culprit(o);
    EXPECT_EQ(c["shared_mem"], e2e::printed(o.run.out, "asserting"));
    EXPECT_EQ(c["confidence"], "exact") << c["reason"];
    EXPECT_NE(c["reason"].get<std::string>().find("cannot have run: each call began after the call of an "
                                                  "unfinished launch on the same stream had returned"),
              std::string::npos)
        << c["reason"];
    size_t summary = o.run.err.find("firstassert: kernel loss <<<");
    ASSERT_NE(summary, std::string::npos) << o.run.err;
    EXPECT_EQ(o.run.err.compare(o.run.err.find('[', summary), 7, "[exact:"), 0) << o.run.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Pinpoint, ::testing::Values("cupti", "interpose"));

}  // namespace
