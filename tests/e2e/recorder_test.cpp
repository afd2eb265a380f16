// The recorder end to end: simulator programs run under libfirstassert.so, activated each of the three ways, and
// the report they leave is read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "shim_run.h"

namespace {

using nlohmann::json;

const std::string kShim = FIRSTASSERT_SHIM;
using e2e::kNllLoss;

using e2e::has_candidate;
using e2e::Outcome;
using e2e::printed;
using e2e::run_in;

// What every report of a failing job must say, whatever activated the shim.
void expect_assert_report(const Outcome& o, const std::string& kernel_mangled, const std::string& launch_api) {
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& r = o.report;
  ASSERT_FALSE(r.is_discarded()) << "the report is not valid JSON";
  EXPECT_EQ(r["schema"], "firstassert/1");
  EXPECT_EQ(r["final"], true) << "the report is rewritten at exit";
  EXPECT_EQ(r["first_error"]["code"], 710);
  EXPECT_TRUE(has_candidate(r, kernel_mangled)) << r["candidates"].dump(2);
  ASSERT_FALSE(r["culprit"].is_null());
  // One stream, breadcrumbs on: the failing launch is named exactly (tests/e2e/pinpoint_test.cpp goes further).
  EXPECT_EQ(r["culprit"]["mangled"], kernel_mangled);
  EXPECT_EQ(r["culprit"]["confidence"], "exact") << r["culprit"]["reason"];
  bool api_seen = false;
  for (const json& c : r["candidates"]) api_seen |= c["mangled"] == kernel_mangled && c["api"] == launch_api;
  EXPECT_TRUE(api_seen) << "the failing kernel was launched through " << launch_api;

  // Nothing recorded twice: as many launches as the API accepted, each seq once.
  EXPECT_EQ(r["launches_recorded"], printed(o.run.out, "launches"));
  std::set<uint64_t> seqs;
  for (const json& l : r["recent_launches"]) EXPECT_TRUE(seqs.insert(l["seq"].get<uint64_t>()).second);
  // Each failing call the program made after the first is one secondary error.
  EXPECT_EQ(r["secondary"]["count"], printed(o.run.out, "failing calls after the first"));
  EXPECT_NE(o.run.err.find("firstassert: first device-side assert (" + r["first_error"]["name"].get<std::string>() +
                            ", 710)"),
            std::string::npos)
      << o.run.err;
  EXPECT_NE(o.run.err.find("firstassert: report: " + o.reports.front()), std::string::npos) << o.run.err;
}

TEST(Recorder, RuntimeJobUnderLdPreload) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 1);
  expect_assert_report(o, kNllLoss, "cudaLaunchKernel");
  EXPECT_EQ(o.report["first_error"]["api"], "cudaDeviceSynchronize");
  EXPECT_EQ(o.report["first_error"]["name"], "cudaErrorAssert");
  EXPECT_EQ(o.report["secondary"]["count"], 5);
  // The CUPTI beside the runtime the job loaded, not the toolkit's (which ld.so.conf would give).
  EXPECT_EQ(o.report["tool"]["cupti"], std::string(SIM_DIR) + "/libcupti.so.13");
  EXPECT_NE(o.run.err.find("Assertion `t >= 0 && t < n_classes` failed."), std::string::npos);
}

// As pip lays it out: the shim in site-packages/firstassert/_native/, PyTorch's CUDA 13 wheels' CUPTI in
// site-packages/nvidia/cu13/lib/, and a runtime loaded from a directory without CUPTI (LD_LIBRARY_PATH).
TEST(Recorder, CuptiOfTheNvidiaWheelsInTheShimsOwnEnvironment) {
  namespace fs = std::filesystem;
  e2e::TempDir dir, site, runtime;
  std::string native = site.path() + "/firstassert/_native", wheel = site.path() + "/nvidia/cu13/lib";
  fs::create_directories(native);
  fs::create_directories(wheel);
  for (const char* name : {"libfirstassert.so", "libfirstassert_recorder.so"})
    fs::copy_file(fs::path(kShim).parent_path() / name, native + "/" + name);
  fs::copy_file(std::string(SIM_DIR) + "/libcupti.so.13", wheel + "/libcupti.so.13");
  for (const char* name : {"libcudart.so.13", "libcuda.so.1"})
    fs::copy_file(std::string(SIM_DIR) + "/" + name, runtime.path() + "/" + name);
  Outcome o = run_in(dir, {RUNTIME_JOB},
                     {{"LD_PRELOAD", native + "/libfirstassert.so"}, {"LD_LIBRARY_PATH", runtime.path()}});
  EXPECT_EQ(o.run.exit_code, 1);
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["tool"]["backend"], "cupti") << o.run.err;
  EXPECT_EQ(o.report["tool"]["cupti"], fs::canonical(wheel + "/libcupti.so.13").string());
}

TEST(Recorder, RuntimeJobUnderCudaInjection) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"CUDA_INJECTION64_PATH", kShim}});
  EXPECT_EQ(o.run.exit_code, 1);
  expect_assert_report(o, kNllLoss, "cudaLaunchKernel");
}

TEST(Recorder, RuntimeJobEnablingAfterCudaStarted) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB, "--enable-after"}, {{"FIRSTASSERT_TEST_SHIM", kShim}});
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  expect_assert_report(o, kNllLoss, "cudaLaunchKernel");
}

TEST(Recorder, RuntimeJobEnablingBeforeCudaStarted) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB, "--enable-before"}, {{"FIRSTASSERT_TEST_SHIM", kShim}});
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  expect_assert_report(o, kNllLoss, "cudaLaunchKernel");
}

TEST(Recorder, DriverApiJobLikeTriton) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {DRIVER_JOB}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  expect_assert_report(o, kNllLoss, "cuLaunchKernelEx");
  EXPECT_EQ(o.report["first_error"]["api"], "cuCtxSynchronize");
  EXPECT_EQ(o.report["first_error"]["name"], "CUDA_ERROR_ASSERT");
  EXPECT_EQ(o.report["secondary"]["count"], 3);
}

// Its own meson test (recorder_nvcc): the program is built only where the toolkit has nvcc.
TEST(Recorder, NvccTripleChevronProgram) {
#ifndef TRIPLE_CHEVRON
  GTEST_SKIP() << "no nvcc under the toolkit (meson's cuda-root), so no <<<>>> program was built";
#else
  e2e::TempDir dir;
  Outcome o = run_in(dir, {TRIPLE_CHEVRON}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 0) << "the program's own checks still pass under the shim\n" << o.run.err;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["first_error"]["code"], 710);
  EXPECT_TRUE(has_candidate(o.report, "_Z19check_labels_kernelPKlii")) << o.report["candidates"].dump(2);
  EXPECT_EQ(o.report["culprit"]["api"], "__cudaLaunchKernel");
  EXPECT_EQ(o.report["culprit"]["kernel"], "check_labels_kernel(long const*, int, int)");
  EXPECT_EQ(o.report["launches_recorded"], 2) << "the healthy launch and the failing one, each once";
#endif
}


TEST(Recorder, GraphLaunchIsRecordedAsOneLaunchAndNamesItsNode) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB, "--graph"}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["first_error"]["code"], 710);
  EXPECT_EQ(o.report["first_error"]["api"], "cudaStreamSynchronize");
  ASSERT_FALSE(o.report["culprit"].is_null());
  EXPECT_EQ(o.report["culprit"]["api"], "cudaGraphLaunch");
  EXPECT_EQ(o.report["culprit"]["graph"], true);
  // The graph's kernel node that asserted, by the breadcrumbs the replay wrote: the second of the two captured.
  EXPECT_EQ(o.report["culprit"]["mangled"], e2e::kNllLoss) << o.report["culprit"].dump(2);
  EXPECT_EQ(o.report["culprit"]["confidence"], "exact");
  EXPECT_EQ(o.report["culprit"]["graph_node"]["node"], 2);
  EXPECT_EQ(o.report["culprit"]["graph_node"]["nodes"], 2);
  ASSERT_EQ(o.report["culprit"]["graph_nodes"].size(), 2u);
  EXPECT_EQ(o.report["culprit"]["graph_nodes"][0]["state"], "completed");
  EXPECT_EQ(o.report["culprit"]["graph_nodes"][1]["state"], "not completed");
  // Captured launches are not launches: the three plain steps' 4 + 4 and the one graph launch.
  EXPECT_EQ(o.report["launches_recorded"], printed(o.run.out, "launches"));
  EXPECT_EQ(o.report["launches_recorded"], 9);
}

TEST(Recorder, InfoLevelSaysWhatIsRecording) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB, "--healthy"}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_LOG", "info"}});
  EXPECT_EQ(o.run.exit_code, 0);
  EXPECT_NE(o.run.err.find("firstassert: recording launches through CUPTI at " + std::string(SIM_DIR) +
                           "/libcupti.so.13 (activated by the CUDA driver; ring of 4096 launches"),
            std::string::npos)
      << o.run.err;
}

TEST(Recorder, HealthyJobLeavesNoTraceAndSameOutput) {
  e2e::TempDir bare_dir, shim_dir;
  Outcome bare = run_in(bare_dir, {RUNTIME_JOB, "--healthy"}, {});
  Outcome traced = run_in(shim_dir, {RUNTIME_JOB, "--healthy"}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(bare.run.exit_code, 0);
  EXPECT_EQ(traced.run.exit_code, 0);
  EXPECT_EQ(traced.run.out, bare.run.out);
  EXPECT_EQ(traced.run.err, "");
  EXPECT_TRUE(traced.reports.empty());
}

// An idle process pays only for the small preloaded stub: no recorder, no C++ runtime, no CUPTI.
TEST(Recorder, ProgramWithoutCudaMapsNoCuptiNorTheRecorder) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {"cat", "/proc/self/maps"}, {{"LD_PRELOAD", kShim}});
  ASSERT_EQ(o.run.exit_code, 0);
  EXPECT_NE(o.run.out.find("libfirstassert.so"), std::string::npos) << "the shim was preloaded";
  EXPECT_EQ(o.run.out.find("libfirstassert_recorder.so"), std::string::npos) << o.run.out;
  EXPECT_EQ(o.run.out.find("cupti"), std::string::npos) << o.run.out;
  EXPECT_EQ(o.run.out.find("libcuda"), std::string::npos) << o.run.out;
  EXPECT_EQ(o.run.err, "");
  // What the stub itself needs (a sanitizer's runtime may bring the C++ runtime into a sanitized build's process).
  e2e::Run needed = e2e::run({"readelf", "--dynamic", "--wide", kShim}, {}, dir.path());
  ASSERT_EQ(needed.exit_code, 0) << needed.err;
  EXPECT_NE(needed.out.find("Shared library: [libc.so.6]"), std::string::npos) << needed.out;
  for (const char* cxx : {"libstdc++", "libunwind", "libboost", "libgcc_s"})
    EXPECT_EQ(needed.out.find(std::string("Shared library: [") + cxx), std::string::npos) << needed.out;
  // The recorder, loaded after the program started, brings its own C++ runtime: an older libstdc++ already in the
  // process (a conda environment) cannot stop it loading.
  std::string recorder = kShim.substr(0, kShim.rfind('/') + 1) + "libfirstassert_recorder.so";
  e2e::Run recorder_needs = e2e::run({"readelf", "--dynamic", "--wide", recorder}, {}, dir.path());
  ASSERT_EQ(recorder_needs.exit_code, 0) << recorder_needs.err;
  for (const char* cxx : {"libstdc++", "libboost", "libgcc_s"})
    EXPECT_EQ(recorder_needs.out.find(std::string("Shared library: [") + cxx), std::string::npos) << recorder_needs.out;
}

// LD_PRELOAD named by a relative path, and the program changes directory before CUDA starts (as Hydra does): the
// recorder, loaded only then, is still found beside the stub.
TEST(Recorder, RelativePreloadPathSurvivesAChangeOfDirectory) {
  e2e::TempDir dir;
  std::string relative = std::filesystem::relative(kShim, dir.path()).string();
  ASSERT_NE(relative.front(), '/');
  std::string script =
      "import os, runpy, sys\n"
      "os.makedirs('elsewhere')\n"
      "os.chdir('elsewhere')\n"  // where the relative path leads nowhere
      "sys.argv = sys.argv[1:]\n"
      "sys.path.insert(0, os.path.dirname(sys.argv[0]))\n"  // as running the file itself would
      "runpy.run_path(sys.argv[0], run_name='__main__')\n";
  Outcome o = run_in(dir, {"python3", "-c", script, PYTHON_JOB, SIM_DIR}, {{"LD_PRELOAD", relative}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.report["culprit"]["mangled"], kNllLoss);
  EXPECT_EQ(o.run.err.find("cannot load"), std::string::npos) << o.run.err;
}

// The preloaded stub without its recorder beside it (a copy made by hand): one line when CUDA starts, recording
// off, and the program runs and fails exactly as without firstassert.
TEST(Recorder, MissingRecorderLibraryTurnsRecordingOffWithOneLine) {
  e2e::TempDir bare_dir, dir, lonely;
  std::string stub = lonely.path() + "/libfirstassert.so";
  ASSERT_EQ(e2e::run({"cp", kShim, stub}, {}, lonely.path()).exit_code, 0);
  Outcome bare = run_in(bare_dir, {RUNTIME_JOB}, {});
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", stub}});
  EXPECT_EQ(o.run.exit_code, bare.run.exit_code);
  EXPECT_EQ(o.run.out, bare.run.out);
  EXPECT_TRUE(o.reports.empty());
  EXPECT_EQ(e2e::without_firstassert_lines(o.run.err), bare.run.err);
  EXPECT_NE(o.run.err.find("firstassert: cannot load " + lonely.path() + "/libfirstassert_recorder.so ("),
            std::string::npos)
      << o.run.err;
  EXPECT_NE(o.run.err.find("; recording is off\n"), std::string::npos) << o.run.err;
  size_t lines = 0;
  for (size_t at = o.run.err.find("firstassert: "); at != std::string::npos; at = o.run.err.find("firstassert: ", at + 1))
    lines += at == 0 || o.run.err[at - 1] == '\n';
  EXPECT_EQ(lines, 1u) << o.run.err;
}

// A profiler holds the only CUPTI subscriber slot: firstassert records through interposition instead, and the
// report is the same as through CUPTI.
TEST(Recorder, AnotherToolHoldingTheCuptiSlotMeansInterposition) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", kShim}, {"CUDA_INJECTION64_PATH", SLOT_HOLDER}});
  EXPECT_EQ(o.run.exit_code, 1) << "the job itself runs and fails as it would without firstassert";
  EXPECT_NE(o.run.err.find("firstassert: CUDA_INJECTION64_PATH named another tool, " + std::string(SLOT_HOLDER)),
            std::string::npos)
      << o.run.err;
  EXPECT_NE(o.run.err.find("firstassert: the CUPTI subscriber slot is taken by CUPTI for slot-holder (a profiler, "
                           "compute-sanitizer or cuda-gdb?); recording through interposition instead\n"),
            std::string::npos)
      << o.run.err;
  expect_assert_report(o, kNllLoss, "cudaLaunchKernel");
  EXPECT_EQ(o.report["tool"]["backend"], "interpose");
  EXPECT_EQ(o.report["secondary"]["count"], 5);
}

TEST(Recorder, CuptiOnlyBackendWithTheSlotTakenTurnsRecordingOffWithOneLine) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB},
                     {{"LD_PRELOAD", kShim}, {"CUDA_INJECTION64_PATH", SLOT_HOLDER}, {"FIRSTASSERT_BACKEND", "cupti"}});
  EXPECT_EQ(o.run.exit_code, 1);
  EXPECT_NE(o.run.err.find("firstassert: the CUPTI subscriber slot is taken by CUPTI for slot-holder (a profiler, "
                           "compute-sanitizer or cuda-gdb?); recording is off\n"),
            std::string::npos)
      << o.run.err;
  EXPECT_TRUE(o.reports.empty());
}

TEST(Recorder, UnusableCuptiTurnsRecordingOffWithOneLine) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_CUPTI", "/nonexistent/libcupti.so"}});
  // The explicit path fails, so the search goes on and finds the simulator's CUPTI beside the runtime.
  EXPECT_NE(o.run.err.find("firstassert: FIRSTASSERT_CUPTI=/nonexistent/libcupti.so cannot be used"),
            std::string::npos)
      << o.run.err;
  EXPECT_EQ(o.reports.size(), 1u);
}

// NVIDIA's own CUPTI loads without a GPU driver but cannot subscribe (CUPTI_ERROR_UNKNOWN): a real "CUPTI unusable".
// Its own meson test (recorder_real_cupti): a toolkit of headers only has no CUPTI library.
TEST(Recorder, RealCuptiWithoutItsDriverMeansInterposition) {
  if (!std::filesystem::exists(TOOLKIT_CUPTI)) GTEST_SKIP() << "no NVIDIA CUPTI at " << TOOLKIT_CUPTI;
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_CUPTI", TOOLKIT_CUPTI}});
  EXPECT_EQ(o.run.exit_code, 1);
  EXPECT_NE(o.run.err.find("firstassert: cuptiSubscribe failed with "), std::string::npos) << o.run.err;
  EXPECT_NE(o.run.err.find("; recording through interposition instead\n"), std::string::npos) << o.run.err;
  ASSERT_EQ(o.reports.size(), 1u);
  EXPECT_EQ(o.report["tool"]["backend"], "interpose");
}

TEST(Recorder, WithoutPreloadNoInterpositionAndOneLine) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB},
                     {{"CUDA_INJECTION64_PATH", kShim}, {"FIRSTASSERT_CUPTI", DRIVERLESS_CUPTI}});
  EXPECT_EQ(o.run.exit_code, 1);
  EXPECT_EQ(printed(o.run.out, "failing calls after the first"), 5) << "the job ran as it does without firstassert";
  EXPECT_NE(o.run.err.find("; interposition needs the shim preloaded (LD_PRELOAD or firstassert run); recording is "
                           "off\n"),
            std::string::npos)
      << o.run.err;
  EXPECT_TRUE(o.reports.empty());
}

TEST(Recorder, BadSettingsAreNamedAndDefaultsUsed) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {RUNTIME_JOB}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_RING", "lots"}});
  EXPECT_NE(o.run.err.find("firstassert: FIRSTASSERT_RING=\"lots\" is not a whole number; using 4096"),
            std::string::npos)
      << o.run.err;
  ASSERT_EQ(o.reports.size(), 1u);
  EXPECT_EQ(o.report["first_error"]["code"], 710);
}

TEST(Recorder, PythonTrainingJobUnderLdPreload) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {"python3", TRAIN_PY, "--lib-dir", SIM_DIR}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 1);
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_TRUE(has_candidate(o.report, kNllLoss));
  EXPECT_EQ(o.report["first_error"]["api"], "cudaMemcpy");
  EXPECT_EQ(o.report["process"]["argv"][1], TRAIN_PY);
}

}  // namespace
