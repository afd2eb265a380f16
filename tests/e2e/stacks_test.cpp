// Host stacks end to end: the culprit's native frames name the program's functions with file:line, and its Python
// frames name the user's file, function and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "shim_run.h"

namespace {

using e2e::line_of;
using e2e::Outcome;
using e2e::run_in;
using nlohmann::json;

const std::string kShim = FIRSTASSERT_SHIM;
using e2e::kNllLoss;

// The 1-based line of the source holding marker.
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(Stacks, NativeStackNamesTrainStepAndMainWithFileAndLine) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {STACK_JOB}, {{"LD_PRELOAD", kShim}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& frames = o.report["culprit"]["native_stack"];
  ASSERT_GE(frames.size(), 2u) << o.report["culprit"].dump(2);
  // The program's own frames come first: the shim, CUPTI and the CUDA libraries are cut from the top.
  EXPECT_NE(frames[0]["function"].get<std::string>().find("train_step"), std::string::npos) << frames.dump(2);
  EXPECT_TRUE(ends_with(frames[0]["file"].get<std::string>(), "stack_job.cpp")) << frames[0].dump();
  EXPECT_EQ(frames[0]["line"], line_of(STACK_JOB_SOURCE, "// LAUNCH_LINE"));
  EXPECT_EQ(frames[1]["function"], "main");
  EXPECT_EQ(frames[1]["line"], line_of(STACK_JOB_SOURCE, "// CALL_LINE"));
  EXPECT_EQ(frames[0]["module"], STACK_JOB) << "raw frames name their module";
  EXPECT_EQ(frames[0]["offset"].get<std::string>().rfind("0x", 0), 0u);
  EXPECT_NE(o.run.err.find("firstassert: native: train_step (stack_job.cpp:"), std::string::npos) << o.run.err;
}

TEST(Stacks, DepthZeroRecordsNoNativeFrames) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {STACK_JOB}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_STACK_DEPTH", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_TRUE(o.report["culprit"]["native_stack"].empty());
}

// The frames python_job.py's failing launch must carry, innermost first: compute_loss <- train_step <- main <-
// <module>, all in python_job.py, each at its marked line (the ctypes call launches from compute_loss itself).
void expect_python_job_frames(const json& frames) {
  const std::pair<const char*, const char*> expected[] = {{"compute_loss", "# LAUNCH_LINE"},
                                                          {"train_step", "# CALL_LINE"},
                                                          {"main", "# MAIN_LINE"},
                                                          {"<module>", "# MODULE_LINE"}};
  ASSERT_EQ(frames.size(), std::size(expected)) << frames.dump(2);
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(frames[i]["file"], PYTHON_JOB) << i;
    EXPECT_EQ(frames[i]["function"], expected[i].first) << i;
    EXPECT_EQ(frames[i]["line"], line_of(PYTHON_JOB, expected[i].second)) << expected[i].first;
  }
}

TEST(Stacks, PythonStackNamesTheUsersFileFunctionAndLine) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {"python3", PYTHON_JOB, SIM_DIR}, {{"LD_PRELOAD", kShim}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  expect_python_job_frames(o.report["culprit"]["python_stack"]);
  EXPECT_NE(o.run.err.find("firstassert: launched from " + std::string(PYTHON_JOB) + ":" +
                           std::to_string(line_of(PYTHON_JOB, "# LAUNCH_LINE")) + " in compute_loss (Python)"),
            std::string::npos)
      << o.run.err;
}

// The CPython versions whose Python frames firstassert promises (README, "Supported": 3.9 to 3.13). A job under
// another version runs the same and its launches carry no Python frames.
bool python_frames_promised(int minor) { return minor >= 9 && minor <= 13; }

// One CPython version per meson test (python_frames_3.N, tests/e2e/meson.build, named by PYTHON_VERSION=3.N): with
// the GIL held and released, a promised version's frames are the job's own, and another version runs exactly the same
// with none. A version this machine has no interpreter of is a skip, with where it looked.
std::string interpreter_of_version(const std::string& version, std::string* looked) {
  std::vector<std::string> candidates;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t begin = 0; begin <= dirs.size();) {
    size_t colon = std::min(dirs.find(':', begin), dirs.size());
    if (colon > begin) candidates.push_back(dirs.substr(begin, colon - begin) + "/python" + version);
    begin = colon + 1;
  }
  const char* root = std::getenv("PYENV_ROOT");
  const char* home = std::getenv("HOME");
  std::string versions = root != nullptr ? std::string(root) + "/versions"
                                         : std::string(home != nullptr ? home : "") + "/.pyenv/versions";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(versions, error)) {
    if (entry.path().filename().string().rfind(version + ".", 0) == 0)
      candidates.push_back(entry.path().string() + "/bin/python" + version);
  }
  *looked = "python" + version + " on PATH and " + versions + "/" + version + ".*";
  for (const std::string& python : candidates) {
    if (::access(python.c_str(), X_OK) != 0) continue;
    e2e::Run said = e2e::run({python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"}, {}, ".");
    if (said.exit_code == 0 && said.out == version + "\n") return python;  // not a pyenv shim of another version
  }
  return "";
}

TEST(Stacks, PythonFramesWithTheGilHeldOrReleasedUnderOneVersion) {
  const char* version = std::getenv("PYTHON_VERSION");
  if (version == nullptr || std::string(version).rfind("3.", 0) != 0)
    GTEST_SKIP() << "PYTHON_VERSION=3.N names the version (meson sets it for each python_frames_3.N test)";
  std::string looked;
  std::string python = interpreter_of_version(version, &looked);
  if (python.empty()) GTEST_SKIP() << "no CPython " << version << " here (looked for " << looked << ")";
  bool promised = python_frames_promised(std::atoi(version + 2));
  std::printf("%s: CPython %s, %s\n", python.c_str(), version,
              promised ? "a promised version: the job's frames expected" : "not promised: no frames expected");
  for (bool release : {false, true}) {
    SCOPED_TRACE(python + (release ? ", GIL released" : ", GIL held"));
    e2e::TempDir dir;
    std::vector<std::string> argv = {python, PYTHON_JOB, SIM_DIR};
    if (release) argv.push_back("--release-gil");
    Outcome o = run_in(dir, argv, {{"LD_PRELOAD", kShim}});
    ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
    EXPECT_EQ(o.report["culprit"]["mangled"], kNllLoss) << "the rest of the report stands either way";
    const json& frames = o.report["culprit"]["python_stack"];
    if (!promised) {
      EXPECT_TRUE(frames.empty()) << frames.dump(2);
      continue;
    }
    expect_python_job_frames(frames);
  }
}

// A code object made at the address of a freed one, same file and function name, body on another line: its frames
// name the line it launched from, not the freed one's (names and lines are kept per code object address; a stack
// walked before is reused only while no code object has been freed).
void expect_the_new_code_objects_line(const char* job, const std::string& python, bool frames_promised) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {python, job, SIM_DIR}, {{"LD_PRELOAD", kShim}});
  ASSERT_NE(o.run.exit_code, 3) << "no code object address was reused: nothing to judge";
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& frames = o.report["culprit"]["python_stack"];
  if (!frames_promised) {
    EXPECT_TRUE(frames.empty()) << frames.dump(2);
    return;
  }
  bool found = false;
  for (const json& f : frames) {
    if (f["function"] != "step") continue;
    EXPECT_EQ(f["line"], e2e::printed(o.run.out, "launched from line")) << frames.dump(2);
    found = true;
  }
  EXPECT_TRUE(found) << frames.dump(2);
}

TEST(Stacks, ACodeObjectAtAFreedOnesAddressGetsItsOwnLine) {
  expect_the_new_code_objects_line(REGENERATED_CODE_JOB, "python3", true);
}

// The same when the code object is replaced between two launches whose stacks are otherwise the same, frame for frame
// and instruction for instruction (a stack walked before must not be taken for this one).
TEST(Stacks, ACodeObjectReplacedBetweenTwoLaunchesGetsItsOwnLine) {
  expect_the_new_code_objects_line(REPLACED_CODE_JOB, "python3", true);
}

// Launches from one function at one depth, from two lines in turn, hundreds of times (the stacks are remembered and
// reused, native and Python): each launch the report keeps names its own line. The job's launch n (seq n) is step(n)
// for n < 600, from FIRST_LINE with 1 block when n is even, from SECOND_LINE with 2 blocks when odd; launch 600 is
// step(0) again with a bad label, the culprit.
void expect_each_launch_to_name_its_line(const std::string& python, bool frames_promised) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {python, REPEATED_STACK_JOB, SIM_DIR}, {{"LD_PRELOAD", kShim}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  constexpr int kCulpritSeq = 600;
  EXPECT_EQ(o.report["culprit"]["seq"], kCulpritSeq);
  const json& recent = o.report["recent_launches"];
  ASSERT_GE(recent.size(), 8u);
  int first_line = line_of(REPEATED_STACK_JOB, "# FIRST_LINE"), second_line = line_of(REPEATED_STACK_JOB, "# SECOND_LINE");
  int from_first = 0, from_second = 0;
  for (const json& launch : recent) {
    int seq = launch["seq"].get<int>();
    ASSERT_LE(seq, kCulpritSeq) << launch.dump(2);
    bool first = seq % 2 == 0;  // seq 600 is even too
    EXPECT_EQ(launch["grid"], json::array({first ? 1 : 2, 1, 1})) << launch.dump(2);
    const json& frames = launch["python_stack"];
    EXPECT_FALSE(launch["native_stack"].empty());
    if (!frames_promised) {
      EXPECT_TRUE(frames.empty()) << launch.dump(2);
      continue;
    }
    ASSERT_GE(frames.size(), 2u) << launch.dump(2);
    EXPECT_EQ(frames[0]["function"], "launch") << frames.dump(2);
    EXPECT_EQ(frames[1]["function"], "step") << frames.dump(2);
    EXPECT_EQ(frames[1]["line"], first ? first_line : second_line) << launch.dump(2);
    (first ? from_first : from_second) += 1;
  }
  if (!frames_promised) return;
  EXPECT_GT(from_first, 0);
  EXPECT_GT(from_second, 0);
  const json& culprit = o.report["culprit"]["python_stack"];
  ASSERT_GE(culprit.size(), 2u) << o.report["culprit"].dump(2);
  EXPECT_EQ(culprit[1]["function"], "step") << culprit.dump(2);
  EXPECT_EQ(culprit[1]["line"], first_line) << culprit.dump(2);
}

TEST(Stacks, RepeatedStacksKeepEachLaunchsOwnLine) { expect_each_launch_to_name_its_line("python3", true); }

// The same two, under the CPython version PYTHON_VERSION names (python_frames_3.N): 3.12 and later reuse whole stacks
// walked before while a code watcher says no code object was freed.
std::string python_of_this_test(bool* promised) {
  const char* version = std::getenv("PYTHON_VERSION");
  if (version == nullptr || std::string(version).rfind("3.", 0) != 0) return "";
  std::string looked;
  *promised = python_frames_promised(std::atoi(version + 2));
  return interpreter_of_version(version, &looked);
}

TEST(Stacks, RepeatedStacksUnderOneVersion) {
  bool promised = false;
  std::string python = python_of_this_test(&promised);
  if (python.empty()) GTEST_SKIP() << "PYTHON_VERSION=3.N names a version this machine has an interpreter of";
  expect_each_launch_to_name_its_line(python, promised);
}

TEST(Stacks, ACodeObjectAtAFreedOnesAddressUnderOneVersion) {
  bool promised = false;
  std::string python = python_of_this_test(&promised);
  if (python.empty()) GTEST_SKIP() << "PYTHON_VERSION=3.N names a version this machine has an interpreter of";
  expect_the_new_code_objects_line(REGENERATED_CODE_JOB, python, promised);
}

TEST(Stacks, ACodeObjectReplacedBetweenTwoLaunchesUnderOneVersion) {
  bool promised = false;
  std::string python = python_of_this_test(&promised);
  if (python.empty()) GTEST_SKIP() << "PYTHON_VERSION=3.N names a version this machine has an interpreter of";
  expect_the_new_code_objects_line(REPLACED_CODE_JOB, python, promised);
}

// Stacks are kept while the interpreter's code objects are counted, from the first launches until Python begins to
// exit (3.11+; before, every frame is checked at every launch): a launch from an atexit function that runs after
// firstassert's own names its function and line, and the debug lines say the count started, then stopped, in that
// order.
void expect_the_exit_launch_frames(const std::string& python, bool frames_promised, int minor) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {python, EXIT_JOB, SIM_DIR}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_LOG", "debug"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& frames = o.report["culprit"]["python_stack"];
  if (!frames_promised) {
    EXPECT_TRUE(frames.empty()) << frames.dump(2);
    return;
  }
  ASSERT_GE(frames.size(), 2u) << o.report["culprit"].dump(2);
  EXPECT_EQ(frames[0]["function"], "launch") << frames.dump(2);
  EXPECT_EQ(frames[1]["function"], "while_exiting") << frames.dump(2);
  EXPECT_EQ(frames[1]["line"], line_of(EXIT_JOB, "# EXIT_LINE")) << frames.dump(2);
  size_t counted = o.run.err.find("code objects counted"), exiting = o.run.err.find("Python is exiting");
  if (minor < 11) {
    EXPECT_EQ(counted, std::string::npos) << o.run.err;
    return;
  }
  ASSERT_NE(counted, std::string::npos) << o.run.err;
  ASSERT_NE(exiting, std::string::npos) << o.run.err;
  EXPECT_LT(counted, exiting) << o.run.err;
}

int minor_of(const std::string& python) {
  e2e::Run said = e2e::run({python, "-c", "import sys; print(sys.version_info[1])"}, {}, ".");
  return std::atoi(said.out.c_str());
}

TEST(Stacks, ALaunchWhilePythonExitsNamesItsFrames) {
  expect_the_exit_launch_frames("python3", true, minor_of("python3"));
}

TEST(Stacks, ALaunchWhilePythonExitsUnderOneVersion) {
  bool promised = false;
  std::string python = python_of_this_test(&promised);
  if (python.empty()) GTEST_SKIP() << "PYTHON_VERSION=3.N names a version this machine has an interpreter of";
  expect_the_exit_launch_frames(python, promised, minor_of(python));
}

TEST(Stacks, PythonFramesCanBeTurnedOff) {
  e2e::TempDir dir;
  Outcome o = run_in(dir, {"python3", PYTHON_JOB, SIM_DIR}, {{"LD_PRELOAD", kShim}, {"FIRSTASSERT_PYTHON", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_TRUE(o.report["culprit"]["python_stack"].empty());
}

}  // namespace
