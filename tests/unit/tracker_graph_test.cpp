// Tracker and CUDA graphs: a graph launch left open by the first sticky error is the kernel nodes of its replay, as
// the graph probe reports them (GraphTable::nodes_of, or records made by hand), so the culprit can be one kernel node.
// The graph breadcrumbs are a plain host array standing in for the host-mapped slot words; a test "completes" a node
// by setting its word to 1. The device's assertion lines come from device_message_log(), the process's: it is fed
// once, with one message naming scatter_kernel, and every other kernel here is one it does not name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/device_messages.h"
#include "core/graph_table.h"
#include "core/tracker.h"
#include "tracker_feed.h"

namespace firstassert {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr uintptr_t kStreamA = 0x5000a0;
constexpr uintptr_t kStreamB = 0x5000b0;
constexpr uintptr_t kGraph = 0x6a0001;
constexpr uintptr_t kExec = 0xe0001;
constexpr uintptr_t kOtherExec = 0xe0002;
constexpr uint64_t kDevice = 0x10000;
constexpr uint64_t kChain = 0xc4a1;

// Named by the device message below...
constexpr const char* kScatter = "_Z14scatter_kernelPi";  // scatter_kernel(int*)
// ...and not.
constexpr const char* kGemm = "_Z11gemm_kernelv";
constexpr const char* kRelu = "_Z11relu_kernelv";
constexpr const char* kNorm = "_Z11norm_kernelv";
constexpr const char* kAdd = "_Z10add_kernelv";
constexpr const char* kBusy = "_Z11busy_kernelv";

constexpr const char* kMessages =
    "model.cu:17: scatter_kernel: block: [0,0,0], thread: [3,0,0] Assertion `index < size` failed.\n";

class TrackerGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    static const bool fed = [] {
      device_message_log().feed(kMessages, std::strlen(kMessages));
      return true;
    }();
    (void)fed;
    ASSERT_EQ(device_message_log().count(), 1u) << "nothing else in this binary may feed the process's log";
    table.set_slot_memory(words.data(), kDevice);
    t.set_graph_probe([this](uintptr_t exec) {
      asked.push_back(exec);
      return table.nodes_of(exec);
    });
  }

  void TearDown() override {
    for (uintptr_t exec : {kExec, kOtherExec}) table.exec_destroyed(exec);
    table.graph_destroyed(kGraph);
  }

  // A kernel node captured on one stream (chain), or added with dependencies (handle, deps); its slot.
  GraphSlot node(const char* kernel, uintptr_t handle = 0, std::vector<uintptr_t> deps = {}) {
    GraphNodeEvent e;
    e.kernel = t.intern(kernel);
    e.grid = {8, 1, 1};
    e.block = {256, 1, 1};
    e.node = handle;
    e.chain = handle == 0 ? kChain : 0;
    e.deps = deps.data();
    e.dep_count = deps.size();
    std::optional<GraphSlot> slot = table.add_node(kGraph, e);
    EXPECT_TRUE(slot.has_value());
    return slot.value_or(GraphSlot{});
  }

  // cudaGraphInstantiate, then the graph destroyed at once, as PyTorch does.
  void instantiate(uintptr_t exec = kExec) {
    table.instantiated(exec, kGraph);
    table.graph_destroyed(kGraph);
  }

  static void complete(const GraphSlot& s) { *s.host = 1; }

  uint64_t graph_launch(uintptr_t exec, uintptr_t stream) {
    LaunchEvent e;
    e.api = LaunchApi::cudaGraphLaunch;
    e.graph = true;
    e.graph_exec = exec;
    e.stream = stream;
    e.device = 0;
    return test::accepted(t, e, "cudaGraphLaunch");
  }

  uint64_t launch(const char* kernel, uintptr_t stream) {
    return test::accepted(t, test::kernel_launch(kernel, stream), "cudaLaunchKernel");
  }

  void call(const char* api, int code, CallKind kind, uintptr_t stream = 0) {
    t.record_call(test::call_of(api, code, kind, stream));
  }

  // CUDA_ERROR_ASSERT from the driver: the primary error.
  void fault() {
    ApiCall c;
    c.domain = ApiDomain::driver;
    c.api = "cuCtxSynchronize";
    c.code = 710;
    c.kind = CallKind::sync_device;
    t.record_call(c);
  }

  // Stream breadcrumbs: completed_before per stream key.
  void breadcrumbs(std::map<uint64_t, uint64_t> marks) { test::breadcrumbs(t, std::move(marks)); }

  std::vector<uint32_t> words = std::vector<uint32_t>(GraphTable::kMaxNodes, 0);
  GraphTable table;
  Tracker t{256};
  std::vector<uintptr_t> asked;  // the executable graphs the probe was asked for
};

std::vector<uint32_t> node_numbers(const std::vector<LaunchRecord>& records) {
  std::vector<uint32_t> out;
  for (const LaunchRecord& r : records) out.push_back(r.graph_node);
  return out;
}

std::vector<uint64_t> seqs(const std::vector<LaunchRecord>& records) {
  std::vector<uint64_t> out;
  for (const LaunchRecord& r : records) out.push_back(r.seq);
  return out;
}

// A captured chain of five kernels; the replay's breadcrumbs say 1 and 2 completed: node 3 failed, and 4 and 5
// never ran. An earlier launch on the stream completed by the stream breadcrumbs.
TEST_F(TrackerGraph, TheOneOpenNodeOfAReplayIsTheExactCulprit) {
  std::vector<GraphSlot> slots;
  for (const char* kernel : {kGemm, kRelu, kNorm, kAdd, kGemm}) slots.push_back(node(kernel));
  instantiate();
  complete(slots[0]);
  complete(slots[1]);
  uint64_t before = launch(kBusy, kStreamA);       // 0
  uint64_t replay = graph_launch(kExec, kStreamA);  // 1
  breadcrumbs({{kStreamA, replay}});
  fault();
  EXPECT_THAT(asked, ElementsAre(kExec)) << "asked once, when the primary error was seen";

  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_EQ(f.culprit->graph_node, 3u);
  EXPECT_EQ(f.culprit->graph_nodes, 5u);
  EXPECT_STREQ(f.culprit->kernel, kNorm);
  EXPECT_EQ(f.culprit->grid.x, 8u) << "the node's configuration";
  EXPECT_EQ(f.culprit->block.x, 256u);
  EXPECT_TRUE(f.culprit->graph);
  EXPECT_EQ(f.culprit->graph_exec, kExec);
  EXPECT_EQ(f.culprit->seq, replay) << "the replay's place in the launch order";
  EXPECT_EQ(f.culprit->stream, kStreamA);
  EXPECT_EQ(f.culprit->api, LaunchApi::cudaGraphLaunch);
  EXPECT_EQ(f.culprit->graph_state, GraphNodeState::not_completed);
  EXPECT_TRUE(f.culprit->graph_open);
  EXPECT_THAT(f.reason, AllOf(HasSubstr("graph breadcrumbs"), HasSubstr("2 of the graph's 5 kernel nodes completed"),
                              HasSubstr("node 3 is the only one left"), HasSubstr("stream 0x5000a0")));
  EXPECT_FALSE(f.culprit_message.has_value()) << "no message names norm_kernel";

  // Every node of the graph as the replay ran them, in the order they were made.
  ASSERT_EQ(f.culprit_graph.size(), 5u);
  EXPECT_THAT(node_numbers(f.culprit_graph), ElementsAre(1, 2, 3, 4, 5));
  for (const LaunchRecord& n : f.culprit_graph) {
    EXPECT_EQ(n.seq, replay);
    EXPECT_EQ(n.stream, kStreamA);
    EXPECT_EQ(n.api, LaunchApi::cudaGraphLaunch);
    EXPECT_EQ(n.graph_exec, kExec);
  }
  EXPECT_STREQ(f.culprit_graph[0].kernel, kGemm);
  EXPECT_STREQ(f.culprit_graph[3].kernel, kAdd);
  EXPECT_EQ(f.culprit_graph[1].graph_state, GraphNodeState::completed);
  EXPECT_EQ(f.culprit_graph[4].graph_state, GraphNodeState::not_completed);

  // The candidates: the replay's nodes that can have failed, in place of the graph launch. Node 3 only: 4 and 5 wait
  // for it, and the launch before the replay completed (stream breadcrumbs).
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(3));
  EXPECT_THAT(seqs(f.candidates), ElementsAre(replay));
  EXPECT_THAT(seqs(f.candidates), Not(Contains(before)));
  EXPECT_EQ(f.candidates_total, 1u);
}

// Without stream breadcrumbs: the graph launch is the only launch pending, and its breadcrumbs name the node.
TEST_F(TrackerGraph, WithoutStreamBreadcrumbsTheReplaysOpenNodeIsStillExact) {
  std::vector<GraphSlot> slots;
  for (const char* kernel : {kGemm, kRelu, kNorm}) slots.push_back(node(kernel));
  instantiate();
  complete(slots[0]);
  uint64_t replay = graph_launch(kExec, kStreamA);
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_EQ(f.culprit->graph_node, 2u);
  EXPECT_STREQ(f.culprit->kernel, kRelu);
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_THAT(f.reason, AllOf(HasSubstr("graph breadcrumbs"), HasSubstr("no other launch was outstanding")));
  EXPECT_EQ(f.culprit_graph.size(), 3u);
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(2)) << "node 3 waits for node 2, which did not complete";
}

// Node by node: a -> b, a -> c. a completed; b and c ran in parallel, neither completed. The device's assertion
// names scatter_kernel, which only c runs.
TEST_F(TrackerGraph, TwoOpenNodesAndADeviceMessageNamingOneIsLikely) {
  constexpr uintptr_t a = 0x900a, b = 0x900b, c = 0x900c;
  GraphSlot sa = node(kGemm, a);
  node(kRelu, b, {a});
  node(kScatter, c, {a});
  instantiate();
  complete(sa);
  uint64_t replay = graph_launch(kExec, kStreamA);
  breadcrumbs({{kStreamA, replay}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_EQ(f.culprit->graph_node, 3u);
  EXPECT_STREQ(f.culprit->kernel, kScatter);
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_THAT(f.reason, HasSubstr("2 launches (the first unfinished launch of each launching thread on 1 stream) "
                                  "could have failed"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (scatter_kernel, block [0,0,0], "
                                  "thread [3,0,0])"));
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->function, "scatter_kernel");
  EXPECT_STREQ(f.culprit_message->condition, "index < size");
  EXPECT_EQ(f.culprit_graph.size(), 3u);
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(3, 2));
}

// The same diamond with kernels no message names (no stream breadcrumbs): the window of the two. Of nodes of one
// replay, the one made first (b, node 2) is shown as the oldest, not claimed.
TEST_F(TrackerGraph, TwoOpenNodesWithoutAMessageLeaveTheWindow) {
  constexpr uintptr_t a = 0x900a, b = 0x900b, c = 0x900c;
  GraphSlot sa = node(kGemm, a);
  node(kRelu, b, {a});
  node(kNorm, c, {a});
  instantiate();
  complete(sa);
  graph_launch(kExec, kStreamA);
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_EQ(f.culprit->graph_node, 2u);
  EXPECT_STREQ(f.culprit->kernel, kRelu);
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(3, 2));
  EXPECT_THAT(f.reason, HasSubstr("one of 2 launches not seen to complete when cuCtxSynchronize reported "
                                  "CUDA_ERROR_ASSERT"));
  EXPECT_THAT(f.reason, HasSubstr("none of them fits the device's assertion line"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest is shown, not claimed"));
  EXPECT_EQ(f.culprit_graph.size(), 3u);
}

// The probe knows nothing of the exec (never instantiated as far as the table knows): the graph launch stays whole.
TEST_F(TrackerGraph, AnEmptyProbeResultLeavesTheGraphLaunchTheCulprit) {
  uint64_t replay = graph_launch(kOtherExec, kStreamA);
  fault();
  EXPECT_THAT(asked, ElementsAre(kOtherExec));
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_TRUE(f.culprit->graph);
  EXPECT_EQ(f.culprit->graph_node, 0u) << "the graph launch, not a node";
  EXPECT_EQ(f.culprit->graph_exec, kOtherExec);
  EXPECT_EQ(f.culprit->kernel, nullptr);
  EXPECT_THAT(f.reason, Not(HasSubstr("graph breadcrumbs")));
  EXPECT_THAT(f.culprit_graph, IsEmpty());
  EXPECT_THAT(seqs(f.candidates), ElementsAre(replay));
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(0));
}

TEST_F(TrackerGraph, WithoutAGraphProbeTheGraphLaunchIsTheCulprit) {
  Tracker plain(64);
  LaunchEvent e;
  e.api = LaunchApi::cudaGraphLaunch;
  e.graph = true;
  e.graph_exec = kExec;
  e.stream = kStreamA;
  uint64_t replay = plain.record_launch(e);
  ApiCall c;
  c.domain = ApiDomain::driver;
  c.api = "cuCtxSynchronize";
  c.code = 710;
  c.kind = CallKind::sync_device;
  plain.record_call(c);
  Findings f = plain.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_EQ(f.culprit->graph_node, 0u);
  EXPECT_THAT(f.culprit_graph, IsEmpty());
}

// The slots are read when the primary error is seen: what happens to them, or to the exec, later changes nothing.
TEST_F(TrackerGraph, TheReplaysNodesAreReadWhenThePrimaryErrorIsSeen) {
  std::vector<GraphSlot> slots;
  for (const char* kernel : {kGemm, kRelu, kNorm}) slots.push_back(node(kernel));
  instantiate();
  complete(slots[0]);
  graph_launch(kExec, kStreamA);
  fault();
  complete(slots[1]);
  complete(slots[2]);
  table.exec_destroyed(kExec);  // the program tears down after the error
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->graph_node, 2u);
  EXPECT_STREQ(f.confidence, "exact");
  ASSERT_EQ(f.culprit_graph.size(), 3u);
  EXPECT_EQ(f.culprit_graph[2].graph_state, GraphNodeState::not_completed);
  EXPECT_THAT(asked, ElementsAre(kExec)) << "findings() does not ask again";
}

// Only graph launches among the candidates are asked about: one proven complete by a stream sync is not. The other
// replay's one node and the launch on B can have failed (no stream breadcrumbs): a window, the older (B's) shown.
TEST_F(TrackerGraph, OnlyPendingGraphLaunchesAreProbed) {
  node(kGemm);
  table.instantiated(kExec, kGraph);
  table.instantiated(kOtherExec, kGraph);
  table.graph_destroyed(kGraph);
  graph_launch(kExec, kStreamA);
  call("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA);
  uint64_t busy = launch(kBusy, kStreamB);
  uint64_t replay = graph_launch(kOtherExec, kStreamA);
  fault();
  EXPECT_THAT(asked, ElementsAre(kOtherExec));
  Findings f = t.findings();
  ASSERT_EQ(f.candidates.size(), 2u);
  EXPECT_THAT(seqs(f.candidates), ElementsAre(replay, busy));
  EXPECT_EQ(f.candidates[0].graph_exec, kOtherExec);
  EXPECT_EQ(f.candidates[0].graph_node, 1u) << "the replay's node, not the graph launch";
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_EQ(f.culprit->seq, busy);
}

// An earlier launch on the stream never completed: the replay after it cannot have started, so that launch is the
// culprit and the only candidate (the replay's nodes are not: it never began), and no graph is the culprit's.
TEST_F(TrackerGraph, AnUnfinishedLaunchBeforeTheReplayIsTheCulprit) {
  std::vector<GraphSlot> slots;
  for (const char* kernel : {kGemm, kRelu}) slots.push_back(node(kernel));
  instantiate();
  uint64_t before = launch(kBusy, kStreamA);
  uint64_t replay = graph_launch(kExec, kStreamA);
  breadcrumbs({{kStreamA, before}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, before);
  EXPECT_STREQ(f.culprit->kernel, kBusy);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs"));
  EXPECT_THAT(f.culprit_graph, IsEmpty());
  EXPECT_THAT(seqs(f.candidates), ElementsAre(before));
  EXPECT_THAT(seqs(f.candidates), Not(Contains(replay)));
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(0));
}

// The tracker relies on the probe's records alone: node number, count, state and whether it can have failed. The
// replay's fields (seq, stream, api, ...) replace whatever the records held.
TEST_F(TrackerGraph, HandMadeNodeRecordsFromTheProbe) {
  Tracker hand(64);
  const char* kernels[] = {hand.intern(kGemm), hand.intern(kRelu), hand.intern(kNorm), hand.intern(kAdd)};
  const GraphNodeState state[] = {GraphNodeState::completed, GraphNodeState::unknown, GraphNodeState::not_completed,
                                  GraphNodeState::not_completed};
  const bool open[] = {false, false, true, false};  // what a probe may decide, whatever the states suggest
  hand.set_graph_probe([&](uintptr_t exec) {
    std::vector<LaunchRecord> nodes;
    if (exec != kExec) return nodes;
    for (uint32_t i = 0; i < 4; ++i) {
      LaunchRecord r;
      r.kernel = kernels[i];
      r.graph = true;
      r.graph_exec = exec;
      r.graph_node = i + 1;
      r.graph_nodes = 4;
      r.graph_state = state[i];
      r.graph_open = open[i];
      r.seq = 999;
      r.stream = 0xdead;
      r.api = LaunchApi::cuLaunchKernel;
      nodes.push_back(r);
    }
    return nodes;
  });
  LaunchEvent e;
  e.api = LaunchApi::cuGraphLaunch;
  e.graph = true;
  e.graph_exec = kExec;
  e.stream = kStreamB;
  e.context = 0xc0;
  e.correlation_id = 42;
  uint64_t replay = hand.record_launch(e);
  ApiCall c;
  c.domain = ApiDomain::driver;
  c.api = "cuStreamSynchronize";
  c.code = 710;
  c.kind = CallKind::sync_stream;
  c.stream = kStreamB;
  hand.record_call(c);

  Findings f = hand.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_EQ(f.culprit->graph_node, 3u);
  EXPECT_STREQ(f.culprit->kernel, kNorm);
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_EQ(f.culprit->stream, kStreamB);
  EXPECT_EQ(f.culprit->context, 0xc0u);
  EXPECT_EQ(f.culprit->correlation_id, 42u);
  EXPECT_EQ(f.culprit->api, LaunchApi::cuGraphLaunch);
  EXPECT_THAT(f.reason, HasSubstr("1 of the graph's 4 kernel nodes completed, and node 3"));
  ASSERT_EQ(f.culprit_graph.size(), 4u);
  for (const LaunchRecord& n : f.culprit_graph) {
    EXPECT_EQ(n.seq, replay);
    EXPECT_EQ(n.stream, kStreamB);
  }
  EXPECT_THAT(node_numbers(f.candidates), ElementsAre(3)) << "the probe's graph_open decides, whatever the states";
}

// Every kernel node of the replay completed: no node can have failed, and the graph launch itself is named.
TEST_F(TrackerGraph, AReplayWhoseNodesAllCompletedNamesTheGraphLaunch) {
  std::vector<GraphSlot> slots;
  for (const char* kernel : {kGemm, kRelu}) slots.push_back(node(kernel));
  instantiate();
  for (const GraphSlot& s : slots) complete(s);
  uint64_t replay = graph_launch(kExec, kStreamA);
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, replay);
  EXPECT_EQ(f.culprit->graph_node, 0u);
  EXPECT_THAT(f.culprit_graph, IsEmpty());
}

}  // namespace
}  // namespace firstassert
