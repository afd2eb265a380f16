// CUDA graphs end to end (issue 19): a replay that asserts is reported as the graph's kernel node that did, with the
// stacks where the program captured it, through either event source; the program's graph, its dependencies and what
// it computes are as without the shim; records of destroyed graphs are freed.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shim_run.h"

namespace {

using e2e::line_of;
using e2e::Outcome;
using e2e::run_in;
using nlohmann::json;

const std::string kShim = FIRSTASSERT_SHIM;
const std::string kAdd = "_ZN2at6native22elementwise_add_kernelIfEEvPT_PKS2_S5_S2_l";
const std::string kBusy = "_ZN10simkernels11busy_kernelEy";

// Whether some native frame of launch is graph_job.cpp at marker's line.
bool has_frame_at(const json& launch, const std::string& marker) {
  int line = line_of(GRAPH_JOB_SOURCE, marker);
  for (const json& f : launch["native_stack"]) {
    if (f["file"].is_string() && f["file"].get<std::string>().ends_with("graph_job.cpp") && f["line"] == line)
      return true;
  }
  return false;
}

std::vector<std::string> states(const json& culprit) {
  std::vector<std::string> out;
  for (const json& n : culprit["graph_nodes"]) out.push_back(n["state"]);
  return out;
}

std::vector<std::string> kernels(const json& culprit) {
  std::vector<std::string> out;
  for (const json& n : culprit["graph_nodes"]) out.push_back(n["mangled"]);
  return out;
}

// The node numbers of the report's candidates, in ascending order.
std::vector<int> candidate_nodes(const json& report) {
  std::vector<int> out;
  for (const json& c : report["candidates"]) out.push_back(c["graph_node"]["node"]);
  std::sort(out.begin(), out.end());
  return out;
}

class Graphs : public ::testing::TestWithParam<const char*> {
 protected:
  Outcome run_job(const e2e::TempDir& dir, const std::string& mode, std::map<std::string, std::string> env = {}) {
    env["LD_PRELOAD"] = kShim;
    env["FIRSTASSERT_BACKEND"] = GetParam();
    Outcome o = run_in(dir, {GRAPH_JOB, mode}, env);
    if (!o.report.is_null() && !o.report.is_discarded()) {
      EXPECT_EQ(o.report["tool"]["backend"], GetParam());
    }
    return o;
  }
};

TEST_P(Graphs, CapturedNodeThatAssertsOnTheThirdReplayIsNamedExactlyWithItsCaptureSite) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "capture");
  EXPECT_EQ(o.run.exit_code, 1) << o.run.err;
  EXPECT_EQ(e2e::printed(o.run.out, "replays"), 3);
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["api"], "cudaGraphLaunch");
  EXPECT_EQ(c["graph"], true);
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_NE(c["reason"].get<std::string>().find("graph breadcrumbs"), std::string::npos) << c["reason"];
  EXPECT_EQ(c["grid"], json::array({1, 1, 1}));
  EXPECT_EQ(c["block"], json::array({32, 1, 1})) << "the node's configuration, not the graph launch's";
  EXPECT_EQ(c["graph_node"]["node"], 3);
  EXPECT_EQ(c["graph_node"]["nodes"], 5);
  EXPECT_EQ(c["graph_node"]["state"], "not completed");
  EXPECT_TRUE(has_frame_at(c, "// CAPTURED_NLL_LOSS")) << "the stack where it was captured\n" << c["native_stack"].dump(2);
  ASSERT_TRUE(c["graph_node"]["captured_at"].is_string());
  EXPECT_NE(c["graph_node"]["captured_at"].get<std::string>().find("graph_job.cpp:"), std::string::npos)
      << c["graph_node"]["captured_at"];
  EXPECT_EQ(states(c), (std::vector<std::string>{"completed", "completed", "not completed", "not completed",
                                                 "not completed"}))
      << "the healthy replays set every slot; the reset before the third cleared them";
  EXPECT_EQ(kernels(c), (std::vector<std::string>{kAdd, kBusy, e2e::kNllLoss, kAdd, kBusy})) << "the order captured";
  // The stderr line a person reads.
  EXPECT_NE(o.run.err.find("firstassert: kernel nll_loss_forward_reduce_cuda_kernel_2d (node 3 of 5 of a CUDA graph "
                           "captured at "),
            std::string::npos)
      << o.run.err;
  EXPECT_NE(o.run.err.find(") <<<(1,1,1), (32,1,1), 0, stream "), std::string::npos) << o.run.err;
  EXPECT_NE(o.run.err.find(">>> via cudaGraphLaunch [exact: graph breadcrumbs"), std::string::npos) << o.run.err;
  // The candidates are the graph's nodes that can have failed (not the graph launch, nor the two nodes that wait
  // behind the unfinished third).
  ASSERT_EQ(o.report["candidates"].size(), 1u) << o.report["candidates"].dump(2);
  EXPECT_EQ(o.report["candidates"][0]["graph_node"]["node"], 3);
}

TEST_P(Graphs, NodeAddedNodeByNodeIsNamedExactlyWhereItWasAdded) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "nodes");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_EQ(c["graph_node"]["node"], 2);
  EXPECT_EQ(c["graph_node"]["nodes"], 3);
  EXPECT_EQ(states(c), (std::vector<std::string>{"completed", "not completed", "not completed"}));
  EXPECT_EQ(kernels(c), (std::vector<std::string>{kAdd, e2e::kNllLoss, kAdd}));
  EXPECT_EQ(candidate_nodes(o.report), std::vector<int>{2}) << "the third waits behind the second";
  EXPECT_TRUE(has_frame_at(c, "// ADDED_NLL_LOSS")) << c["native_stack"].dump(2);
}

// Two nodes that depend only on the first: either can have failed, and the device's assertion says which. The
// simulator runs kernel nodes that become ready together in the order they were added (tests/sim/driver/graph.cpp,
// instantiate_graph), so nll_loss (added second) runs before the add (added third), and its assert drops the add:
// both are unfinished, and only the message tells them apart.
TEST_P(Graphs, ParallelNodesAreNarrowedByTheDeviceMessage) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "diamond");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["graph_node"]["node"], 2);
  EXPECT_EQ(kernels(c), (std::vector<std::string>{kAdd, e2e::kNllLoss, kAdd}));
  EXPECT_EQ(states(c), (std::vector<std::string>{"completed", "not completed", "not completed"}));
  EXPECT_EQ(candidate_nodes(o.report), (std::vector<int>{2, 3}));
  EXPECT_EQ(c["confidence"], "likely") << c["reason"];
  EXPECT_NE(c["reason"].get<std::string>().find("only this one fits the device's assertion line (nll_loss"),
            std::string::npos)
      << c["reason"];
}

TEST_P(Graphs, ExecutableGraphUpdatedFromAnotherCaptureNamesTheNewNodes) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "update");
  EXPECT_EQ(e2e::printed_word(o.run.out, "update"), "cudaSuccess") << "the leaves of both captures match\n" << o.run.out;
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["confidence"], "exact");
  EXPECT_EQ(c["graph_node"]["node"], 2);
  EXPECT_EQ(kernels(c), (std::vector<std::string>{kAdd, e2e::kNllLoss})) << "the second capture's kernels";
}

// 2,000 graphs of 20 kernel nodes each pass through, more nodes than the table keeps at once: each destroyed graph's
// records are freed, so the last graph is still named.
TEST_P(Graphs, DestroyedGraphsFreeTheirRecords) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "many");
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  EXPECT_EQ(o.run.err.find("kernel nodes are alive"), std::string::npos) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["graph_node"]["node"], 3);
  EXPECT_EQ(c["confidence"], "exact");
}

// Without breadcrumbs the nodes are still known: the device's assertion names the one that failed among them.
TEST_P(Graphs, WithoutBreadcrumbsTheDeviceMessageNamesTheNode) {
  e2e::TempDir dir;
  Outcome o = run_job(dir, "capture", {{"FIRSTASSERT_BREADCRUMBS", "0"}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  const json& c = o.report["culprit"];
  EXPECT_EQ(c["mangled"], e2e::kNllLoss) << c.dump(2);
  EXPECT_EQ(c["confidence"], "likely") << c["reason"];
  EXPECT_EQ(c["graph_node"]["node"], 3);
  EXPECT_EQ(states(c), std::vector<std::string>(5, "unknown")) << "no slots: no node's state is known";
  EXPECT_EQ(candidate_nodes(o.report), (std::vector<int>{1, 2, 3, 4, 5})) << "any node of the replay can have failed";
}

// What the program sees of its graph and what it computes are as without the shim.
TEST_P(Graphs, HealthyProgramSeesItsOwnDependenciesAndResults) {
  e2e::TempDir bare_dir, dir;
  Outcome bare = run_in(bare_dir, {GRAPH_JOB, "healthy"}, {});
  Outcome o = run_job(dir, "healthy");
  EXPECT_EQ(bare.run.exit_code, 0) << bare.run.err;
  EXPECT_EQ(o.run.exit_code, 0) << o.run.err;
  EXPECT_TRUE(o.reports.empty());
  EXPECT_EQ(o.run.out, bare.run.out);
  EXPECT_NE(o.run.out.find("node 3 depends on: 2\n"), std::string::npos) << o.run.out;
  EXPECT_EQ(e2e::without_firstassert_lines(o.run.err), bare.run.err);
}

INSTANTIATE_TEST_SUITE_P(Backends, Graphs, ::testing::Values("cupti", "interpose"));

}  // namespace
