// The interposition fallback end to end: with a profiler holding the CUPTI slot, every launch path (runtime,
// <<<>>>'s __cudaLaunchKernel, a driver launch fetched by dlsym, one fetched through cuGetProcAddress) still yields
// the right report; with the slot free, each launch is counted once whichever source records it.
#include <gtest/gtest.h>

#include <string>

#include "shim_run.h"

namespace {

using e2e::Outcome;
using e2e::printed;
using e2e::run_in;

const std::string kShim = FIRSTASSERT_SHIM;
using e2e::kNllLoss;

struct Path {
  const char* name;
  const char* api;  // what the culprit was launched through
};

class Interposition : public ::testing::TestWithParam<Path> {};

TEST_P(Interposition, ProfilerHoldsCuptiAndTheReportIsRight) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {INTERPOSE_JOB, GetParam().name}, {{"LD_PRELOAD", kShim}});
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_NE(o.run.err.find("the CUPTI subscriber slot is taken by CUPTI for stand-in profiler"), std::string::npos)
      << o.run.err;
  EXPECT_EQ(o.report["tool"]["backend"], "interpose");
  EXPECT_EQ(o.report["first_error"]["code"], 710);
  EXPECT_EQ(o.report["culprit"]["mangled"], kNllLoss);
  EXPECT_EQ(o.report["culprit"]["api"], GetParam().api);
  EXPECT_EQ(o.report["culprit"]["confidence"], "exact");
  EXPECT_EQ(o.report["launches_recorded"], printed(o.run.out, "launches")) << "each launch once";
  EXPECT_EQ(o.report["launches_recorded"], 2);
  ASSERT_EQ(o.report["device_messages"].size(), 1u);
}

TEST_P(Interposition, WithCuptiFreeEachLaunchIsCountedOnce) {
  for (const char* backend : {"auto", "interpose"}) {
    e2e::TempDir dir;
    Outcome o = run_in(dir, {INTERPOSE_JOB, GetParam().name, "--no-profiler"},
                       {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_BACKEND", backend}});
    ASSERT_EQ(o.reports.size(), 1u) << backend << ": " << o.run.err;
    EXPECT_EQ(o.report["tool"]["backend"], std::string(backend) == "auto" ? "cupti" : "interpose");
    EXPECT_EQ(o.report["launches_recorded"], 2) << backend;
    EXPECT_EQ(o.report["culprit"]["mangled"], kNllLoss) << backend;
    EXPECT_EQ(o.report["culprit"]["api"], GetParam().api) << backend;
  }
}

// With CUDA_LAUNCH_BLOCKING=1 the culprit's launch returns with the context already lost, when no CUDA call answers
// any more: the kernel must have been named before the call went through.
TEST_P(Interposition, LaunchBlockingStillNamesTheCulprit) {
  for (const char* backend : {"auto", "interpose"}) {
    e2e::TempDir dir;
    Outcome o = run_in(dir, {INTERPOSE_JOB, GetParam().name, "--no-profiler"},
                       {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_BACKEND", backend}, {"CUDA_LAUNCH_BLOCKING", "1"}});
    ASSERT_EQ(o.reports.size(), 1u) << backend << ": " << o.run.err;
    EXPECT_EQ(printed(o.run.out, "launches"), 1) << backend << ": the faulting launch itself fails when blocking";
    EXPECT_EQ(o.report["first_error"]["code"], 710) << backend;
    EXPECT_EQ(o.report["culprit"]["mangled"], kNllLoss) << backend << ": " << o.run.err;
    EXPECT_EQ(o.report["culprit"]["api"], GetParam().api) << backend;
    EXPECT_EQ(o.report["culprit"]["confidence"], "exact") << backend;
  }
}

// A Python extension's libcudart is loaded RTLD_LOCAL, out of RTLD_NEXT's sight: the hooks still find it, and the
// calls work as without the shim (whether the hooks record or only pass through).
TEST(InterpositionScope, RuntimeLoadedLocallyStillWorks) {
  for (const char* backend : {"interpose", "auto"}) {
    e2e::TempDir dir;
    std::string script =
        "import ctypes, sys\n"
        "rt = ctypes.CDLL(sys.argv[1] + '/libcudart.so.13')\n"  // RTLD_LOCAL, as Python loads extensions
        "p = ctypes.c_void_p()\n"
        "print('cudaMalloc:', rt.cudaMalloc(ctypes.byref(p), 64))\n"
        "print('sync:', rt.cudaDeviceSynchronize())\n";
    Outcome o = run_in(dir, {"python3", "-c", script, SIM_DIR}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_BACKEND", backend}});
    EXPECT_EQ(o.run.exit_code, 0) << backend << ": " << o.run.err;
    EXPECT_EQ(printed(o.run.out, "cudaMalloc"), 0) << backend << ": " << o.run.out << o.run.err;
    EXPECT_EQ(printed(o.run.out, "sync"), 0) << backend;
    EXPECT_EQ(o.run.err.find("is not in the CUDA library"), std::string::npos) << o.run.err;
  }
}

INSTANTIATE_TEST_SUITE_P(LaunchPaths, Interposition,
                         ::testing::Values(Path{"runtime", "cudaLaunchKernel"}, Path{"nvcc", "__cudaLaunchKernel"},
                                           Path{"dlsym", "cuLaunchKernel"}, Path{"procaddress", "cuLaunchKernel"}),
                         [](const ::testing::TestParamInfo<Path>& info) { return std::string(info.param.name); });

}  // namespace
