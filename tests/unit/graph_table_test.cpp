// GraphTable: the kernel nodes of CUDA graphs, their breadcrumb slots, and which executable graph runs which nodes.
// The slot memory is a plain host array standing in for the host-mapped words (device address kDevice), zeroed once
// as device/graph_breadcrumbs does; a test "completes" a node by setting its slot word to 1, as the leaf after the
// node does on the device, and clears it as a replay's reset would. Handles are numbers. The fixture destroys the
// graphs and executable graphs a test made before the table goes.
#include "core/graph_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"

namespace firstassert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kDevice = 0x10000;
constexpr uint32_t kWordBytes = sizeof(uint32_t);

constexpr uintptr_t kGraph = 0x6a0001;
constexpr uintptr_t kOtherGraph = 0x6a0002;
constexpr uintptr_t kClone = 0x6a0003;
constexpr uintptr_t kExec = 0xe0001;
constexpr uintptr_t kOtherExec = 0xe0002;

constexpr const char* kKernels[] = {"_Z6first_v", "_Z7second_v", "_Z6third_v", "_Z7fourth_v", "_Z6fifth_v"};

std::vector<uint32_t> node_numbers(const std::vector<LaunchRecord>& nodes) {
  std::vector<uint32_t> out;
  for (const LaunchRecord& n : nodes) out.push_back(n.graph_node);
  return out;
}

std::vector<uint32_t> open_nodes(const std::vector<LaunchRecord>& nodes) {
  std::vector<uint32_t> out;
  for (const LaunchRecord& n : nodes) {
    if (n.graph_open) out.push_back(n.graph_node);
  }
  return out;
}

std::vector<GraphNodeState> states(const std::vector<LaunchRecord>& nodes) {
  std::vector<GraphNodeState> out;
  for (const LaunchRecord& n : nodes) out.push_back(n.graph_state);
  return out;
}

std::vector<SlotReset> resets(const GraphTable& table, uintptr_t exec) {
  GraphTable::Resets r = table.resets_for(exec);
  return std::vector<SlotReset>(r.begin, r.end);
}

class GraphTableTest : public ::testing::Test {
 protected:
  void SetUp() override { table->set_slot_memory(words.data(), kDevice); }

  void TearDown() override {
    for (uintptr_t exec : execs) table->exec_destroyed(exec);
    for (uintptr_t graph : graphs) table->graph_destroyed(graph);
    EXPECT_EQ(table->node_count(), 0u) << "destroying every graph and executable graph frees every record";
  }

  // A kernel node, as a capture (chain) or cudaGraphAddKernelNode (handle, deps) reports it.
  struct Node {
    const char* kernel = "_Z6kernelv";
    uint64_t chain = 0;
    uintptr_t handle = 0;
    std::vector<uintptr_t> deps = {};
  };

  std::optional<GraphSlot> add(uintptr_t graph, const Node& n) {
    graphs.insert(graph);
    GraphNodeEvent e;
    e.kernel = n.kernel;
    e.grid = {2, 1, 1};
    e.block = {64, 1, 1};
    e.node = n.handle;
    e.chain = n.chain;
    e.deps = n.deps.data();
    e.dep_count = n.deps.size();
    return table->add_node(graph, e);
  }

  // count captured nodes on one chain, their slots in order.
  std::vector<GraphSlot> capture(uintptr_t graph, size_t count, uint64_t chain = 0xc4a1) {
    std::vector<GraphSlot> slots;
    for (size_t i = 0; i < count; ++i) {
      std::optional<GraphSlot> s = add(graph, {.kernel = kKernels[i % 5], .chain = chain});
      EXPECT_TRUE(s.has_value()) << "node " << i;
      if (s) slots.push_back(*s);
    }
    return slots;
  }

  void instantiate(uintptr_t exec, uintptr_t graph) {
    execs.insert(exec);
    table->instantiated(exec, graph);
  }

  // What the device's leaf writes when the node completed.
  static void complete(const GraphSlot& s) { *s.host = 1; }

  std::vector<uint32_t> words = std::vector<uint32_t>(GraphTable::kMaxNodes, 0);
  std::unique_ptr<GraphTable> table = std::make_unique<GraphTable>();
  std::set<uintptr_t> graphs, execs;  // made by the test, destroyed in TearDown
};

// ---- Slots ------------------------------------------------------------------------------------------------------

TEST_F(GraphTableTest, EachNodeGetsItsOwnSlotWhoseHostAndDeviceAddressesCorrespond) {
  EXPECT_TRUE(table->has_slot_memory());
  std::vector<GraphSlot> slots = capture(kGraph, 5);
  ASSERT_EQ(slots.size(), 5u);
  std::set<const volatile uint32_t*> hosts;
  std::set<uint64_t> devices;
  for (const GraphSlot& s : slots) {
    hosts.insert(s.host);
    devices.insert(s.device);
    ASSERT_GE(s.host, words.data());
    ASSERT_LT(s.host, words.data() + words.size()) << "a slot lies in the slot memory";
    size_t index = static_cast<size_t>(s.host - words.data());
    EXPECT_EQ(s.device, kDevice + index * kWordBytes) << "the device writes the word the host reads";
  }
  EXPECT_EQ(hosts.size(), 5u);
  EXPECT_EQ(devices.size(), 5u);
}

TEST_F(GraphTableTest, SlotsOfAnotherGraphAreDistinct) {
  std::vector<GraphSlot> a = capture(kGraph, 3);
  std::vector<GraphSlot> b = capture(kOtherGraph, 3, 0xc4a2);
  std::set<uint64_t> devices;
  for (const GraphSlot& s : a) devices.insert(s.device);
  for (const GraphSlot& s : b) devices.insert(s.device);
  EXPECT_EQ(devices.size(), 6u);
}

// A destroyed executable graph's replay may still be running and write its slots: the host never writes them, not
// when it hands them out, not when it reuses them; every replay's reset clears them on the device.
TEST_F(GraphTableTest, TheTableNeverWritesTheSlotMemory) {
  std::fill(words.begin(), words.end(), 0x5a5a5a5au);
  capture(kGraph, 300);
  capture(kOtherGraph, 3, 0xc4a2);
  instantiate(kExec, kGraph);
  (void)table->nodes_of(kExec);
  (void)resets(*table, kExec);
  table->exec_destroyed(kExec);
  table->graph_destroyed(kGraph);
  execs.erase(kExec);
  graphs.erase(kGraph);
  // Every run but the other graph's: the never-used ones, then the two just freed.
  std::set<uint64_t> devices;
  for (size_t i = 0; i < GraphTable::kMaxNodes - GraphTable::kSlotsPerChunk; ++i) {
    std::optional<GraphSlot> s = add(kClone, {});
    ASSERT_TRUE(s.has_value()) << "node " << i;
    devices.insert(s->device);
  }
  EXPECT_EQ(devices.size(), GraphTable::kMaxNodes - GraphTable::kSlotsPerChunk);
  EXPECT_EQ(*devices.begin(), kDevice) << "the freed runs were reused";
  EXPECT_EQ(std::count(words.begin(), words.end(), 0x5a5a5a5au), static_cast<ptrdiff_t>(words.size()));
}

// The run of slots a slot lies in (kSlotsPerChunk words each, from kDevice).
uint64_t run_of(const GraphSlot& s) { return (s.device - kDevice) / kWordBytes / GraphTable::kSlotsPerChunk; }

// Runs never used are handed out before freed ones; among freed runs, the one freed longest ago first.
TEST_F(GraphTableTest, FreedRunsAreReusedOldestFirstAfterTheNeverUsedOnes) {
  constexpr uint64_t kRuns = GraphTable::kMaxNodes / GraphTable::kSlotsPerChunk;
  std::optional<GraphSlot> first = add(0x7a0000, {});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(run_of(*first), 0u);
  table->graph_destroyed(0x7a0000);
  graphs.erase(0x7a0000);
  std::optional<GraphSlot> next = add(0x7a0001, {});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(run_of(*next), 1u) << "not the run just freed: a replay may still write it";
  for (uint64_t run = 2; run < kRuns; ++run) {
    std::optional<GraphSlot> s = add(0x7a0000 + run, {});
    ASSERT_TRUE(s.has_value());
    ASSERT_EQ(run_of(*s), run);
  }
  // Every run used once: now the freed ones, oldest freed first (run 0, then 40, 7, 90).
  for (uint64_t run : {40u, 7u, 90u}) {
    table->graph_destroyed(0x7a0000 + run);
    graphs.erase(0x7a0000 + run);
  }
  std::vector<uint64_t> reused;
  for (uintptr_t graph = 0x7b0000; graph < 0x7b0005; ++graph) {
    std::optional<GraphSlot> s = add(graph, {});
    if (s) reused.push_back(run_of(*s));
  }
  EXPECT_THAT(reused, ElementsAre(0, 40, 7, 90)) << "and no run for the fifth graph";
}

TEST_F(GraphTableTest, ANodeReadsCompletedWhenItsSlotWordIsOne) {
  std::vector<GraphSlot> slots = capture(kGraph, 3);
  ASSERT_EQ(slots.size(), 3u);
  instantiate(kExec, kGraph);
  EXPECT_THAT(states(table->nodes_of(kExec)),
              ElementsAre(GraphNodeState::not_completed, GraphNodeState::not_completed, GraphNodeState::not_completed));
  complete(slots[0]);
  complete(slots[2]);
  EXPECT_THAT(states(table->nodes_of(kExec)),
              ElementsAre(GraphNodeState::completed, GraphNodeState::not_completed, GraphNodeState::completed))
      << "the slots are read when asked, not when instantiated";
  *slots[2].host = 0;  // cleared before the next replay
  EXPECT_EQ(table->nodes_of(kExec)[2].graph_state, GraphNodeState::not_completed);
}

TEST_F(GraphTableTest, WithoutSlotMemoryNodesAreRecordedButUnknown) {
  table = std::make_unique<GraphTable>();  // no set_slot_memory
  EXPECT_FALSE(table->has_slot_memory());
  EXPECT_FALSE(add(kGraph, {.kernel = kKernels[0], .chain = 1}).has_value()) << "no slot to give";
  EXPECT_FALSE(add(kGraph, {.kernel = kKernels[1], .chain = 1}).has_value());
  EXPECT_EQ(table->node_count(), 2u) << "the nodes are recorded all the same";
  instantiate(kExec, kGraph);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_THAT(states(nodes), ElementsAre(GraphNodeState::unknown, GraphNodeState::unknown));
  EXPECT_THAT(open_nodes(nodes), ElementsAre(1, 2)) << "nothing says which completed: any can have failed";
  EXPECT_THAT(resets(*table, kExec), IsEmpty()) << "nothing to clear";
}

TEST_F(GraphTableTest, SlotMemoryIsGivenOnce) {
  std::vector<uint32_t> other(GraphTable::kMaxNodes);
  table->set_slot_memory(other.data(), 0x990000);
  std::optional<GraphSlot> s = add(kGraph, {});
  ASSERT_TRUE(s.has_value());
  EXPECT_GE(s->host, words.data());
  EXPECT_LT(s->host, words.data() + words.size()) << "the first memory stays";
  EXPECT_GE(s->device, kDevice);
  EXPECT_LT(s->device, kDevice + GraphTable::kMaxNodes * kWordBytes);
}

TEST_F(GraphTableTest, DistrustedSlotsMakeEveryNodeUnknown) {
  std::vector<GraphSlot> slots = capture(kGraph, 3);
  instantiate(kExec, kGraph);
  complete(slots[0]);
  ASSERT_EQ(table->nodes_of(kExec)[0].graph_state, GraphNodeState::completed);
  table->distrust_slots();
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  EXPECT_THAT(states(nodes), ElementsAre(GraphNodeState::unknown, GraphNodeState::unknown, GraphNodeState::unknown));
  EXPECT_THAT(open_nodes(nodes), ElementsAre(1, 2, 3));
  // Nodes made from now on as well.
  add(kOtherGraph, {.chain = 7});
  instantiate(kOtherExec, kOtherGraph);
  EXPECT_THAT(states(table->nodes_of(kOtherExec)), ElementsAre(GraphNodeState::unknown));
}

TEST_F(GraphTableTest, AnUnusedSlotMakesItsNodeUnknown) {
  std::vector<GraphSlot> slots = capture(kGraph, 3);
  table->slot_unused(kGraph, slots[2]);  // no leaf could be added after node 3
  complete(slots[0]);
  complete(slots[1]);
  complete(slots[2]);  // whatever its word says, nothing writes it
  instantiate(kExec, kGraph);
  EXPECT_THAT(states(table->nodes_of(kExec)),
              ElementsAre(GraphNodeState::completed, GraphNodeState::completed, GraphNodeState::unknown));
  table->slot_unused(0x6affff, slots[0]);  // an unknown graph: nothing happens
}

// ---- Nodes of an executable graph -------------------------------------------------------------------------------

TEST_F(GraphTableTest, NodesOfAnExecAreNumberedAndKeepWhatTheirEventsSaid) {
  const uintptr_t native[3] = {0x401000, 0x402000, 0x403000};
  const PythonFrame python[2] = {{"model.py", "forward", 12}, {"train.py", "step", 80}};
  GraphNodeEvent e;
  e.kernel = "_Z4gemmPf";
  e.grid = {7, 8, 9};
  e.block = {32, 4, 2};
  e.shared_mem = 4096;
  e.native_stack = native;
  e.native_depth = 3;
  e.python_stack = python;
  e.python_depth = 2;
  e.chain = 0xc4a1;
  graphs.insert(kGraph);
  ASSERT_TRUE(table->add_node(kGraph, e).has_value());
  add(kGraph, {.kernel = "_Z4relu_v", .chain = 0xc4a1});
  add(kGraph, {.kernel = "_Z4sum_v", .chain = 0xc4a1});
  instantiate(kExec, kGraph);

  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_THAT(node_numbers(nodes), ElementsAre(1, 2, 3)) << "in the order they were made, from 1";
  for (const LaunchRecord& n : nodes) {
    EXPECT_EQ(n.graph_nodes, 3u);
    EXPECT_TRUE(n.graph);
    EXPECT_EQ(n.graph_exec, kExec);
    EXPECT_EQ(n.thread, current_thread_id()) << "the thread that made the node";
    EXPECT_GT(n.wall_ns, 0);
  }
  const LaunchRecord& first = nodes[0];
  EXPECT_STREQ(first.kernel, "_Z4gemmPf");
  EXPECT_EQ(first.grid.x, 7u);
  EXPECT_EQ(first.grid.y, 8u);
  EXPECT_EQ(first.grid.z, 9u);
  EXPECT_EQ(first.block.x, 32u);
  EXPECT_EQ(first.block.y, 4u);
  EXPECT_EQ(first.block.z, 2u);
  EXPECT_EQ(first.shared_mem, 4096u);
  ASSERT_EQ(first.stack_depth, 3u);
  EXPECT_EQ(first.stack[0], 0x401000u);
  EXPECT_EQ(first.stack[2], 0x403000u);
  ASSERT_EQ(first.python_depth, 2u);
  EXPECT_STREQ(first.python[0].file, "model.py");
  EXPECT_STREQ(first.python[0].function, "forward");
  EXPECT_EQ(first.python[0].line, 12);
  EXPECT_STREQ(first.python[1].function, "step");
  EXPECT_EQ(first.python[1].line, 80);
  EXPECT_STREQ(nodes[1].kernel, "_Z4relu_v");
  EXPECT_EQ(nodes[1].stack_depth, 0u);
  EXPECT_EQ(nodes[1].python_depth, 0u);
  EXPECT_STREQ(nodes[2].kernel, "_Z4sum_v");
}

TEST_F(GraphTableTest, TheEventsStacksAreCopied) {
  uintptr_t native[2] = {0x401000, 0x402000};
  PythonFrame python[1] = {{"model.py", "forward", 12}};
  GraphNodeEvent e;
  e.kernel = "_Z4gemmPf";
  e.native_stack = native;
  e.native_depth = 2;
  e.python_stack = python;
  e.python_depth = 1;
  graphs.insert(kGraph);
  table->add_node(kGraph, e);
  native[0] = 0xbad;  // the event's buffers are valid only during the call
  python[0].line = -1;
  instantiate(kExec, kGraph);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].stack[0], 0x401000u);
  EXPECT_EQ(nodes[0].python[0].line, 12);
}

TEST_F(GraphTableTest, DeepStacksAreCutToWhatARecordHolds) {
  std::vector<uintptr_t> native(200);
  for (size_t i = 0; i < native.size(); ++i) native[i] = 0x400000 + i;
  std::vector<PythonFrame> python(100, PythonFrame{"deep.py", "recurse", 1});
  GraphNodeEvent e;
  e.kernel = "_Z4deepv";
  e.native_stack = native.data();
  e.native_depth = 200;
  e.python_stack = python.data();
  e.python_depth = 100;
  graphs.insert(kGraph);
  table->add_node(kGraph, e);
  instantiate(kExec, kGraph);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].stack_depth, kMaxStackFrames);
  EXPECT_EQ(nodes[0].stack[kMaxStackFrames - 1], 0x400000u + kMaxStackFrames - 1) << "the innermost frames are kept";
  EXPECT_EQ(nodes[0].python_depth, kMaxPythonFrames);
}

TEST_F(GraphTableTest, UnknownExecHasNoNodes) {
  capture(kGraph, 2);
  EXPECT_THAT(table->nodes_of(kExec), IsEmpty()) << "not instantiated";
  instantiate(kExec, 0x6affff);  // from a graph the table never saw
  EXPECT_THAT(table->nodes_of(kExec), IsEmpty());
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
  EXPECT_FALSE(table->add_node(0, GraphNodeEvent{}).has_value()) << "graph 0 is no graph";
  table->instantiated(0, kGraph);
  EXPECT_THAT(table->nodes_of(0), IsEmpty());
}

// ---- Which nodes can have failed --------------------------------------------------------------------------------

// A captured chain ran in order: nodes 1 and 2 completed, 3 did not, so 4 and 5 (waiting for 3) cannot have failed.
TEST_F(GraphTableTest, InAChainOnlyTheFirstNodeNotCompletedIsOpen) {
  std::vector<GraphSlot> slots = capture(kGraph, 5);
  ASSERT_EQ(slots.size(), 5u);
  instantiate(kExec, kGraph);
  complete(slots[0]);
  complete(slots[1]);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  EXPECT_THAT(states(nodes), ElementsAre(GraphNodeState::completed, GraphNodeState::completed,
                                         GraphNodeState::not_completed, GraphNodeState::not_completed,
                                         GraphNodeState::not_completed));
  EXPECT_THAT(open_nodes(nodes), ElementsAre(3));
}

TEST_F(GraphTableTest, NoNodeCompletedLeavesOnlyTheFirstOfTheChainOpen) {
  capture(kGraph, 4);
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), ElementsAre(1));
}

TEST_F(GraphTableTest, EveryNodeCompletedLeavesNoneOpen) {
  for (const GraphSlot& s : capture(kGraph, 4)) complete(s);
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), IsEmpty());
}

// Two streams in one capture are two chains: each one's first unfinished node is open.
TEST_F(GraphTableTest, TwoChainsOfOneCaptureEachHaveTheirOpenNode) {
  constexpr uint64_t kX = 0xc4a1, kY = 0xc4a2;
  GraphSlot x1 = *add(kGraph, {.kernel = kKernels[0], .chain = kX});
  GraphSlot y1 = *add(kGraph, {.kernel = kKernels[1], .chain = kY});
  GraphSlot x2 = *add(kGraph, {.kernel = kKernels[2], .chain = kX});
  add(kGraph, {.kernel = kKernels[3], .chain = kY});  // y2
  add(kGraph, {.kernel = kKernels[4], .chain = kX});  // x3
  complete(x1);
  complete(y1);
  (void)x2;
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), ElementsAre(3, 4)) << "x2 and y2";
}

// Node by node: a -> b, a -> c, (b, c) -> d. With a completed, b and c ran in parallel and either can have failed;
// d waited for both.
TEST_F(GraphTableTest, DiamondAddedNodeByNodeLeavesBothBranchesOpen) {
  constexpr uintptr_t a = 0x900a, b = 0x900b, c = 0x900c, d = 0x900d;
  GraphSlot sa = *add(kGraph, {.kernel = kKernels[0], .handle = a});
  add(kGraph, {.kernel = kKernels[1], .handle = b, .deps = {a}});
  add(kGraph, {.kernel = kKernels[2], .handle = c, .deps = {a}});
  add(kGraph, {.kernel = kKernels[3], .handle = d, .deps = {b, c}});
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), ElementsAre(1)) << "nothing completed: only a can have run";
  complete(sa);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  EXPECT_THAT(open_nodes(nodes), ElementsAre(2, 3));
  EXPECT_STREQ(nodes[1].kernel, kKernels[1]);
  EXPECT_STREQ(nodes[2].kernel, kKernels[2]);
}

TEST_F(GraphTableTest, OneCompletedBranchOfTheDiamondClosesOnlyItself) {
  constexpr uintptr_t a = 0x900a, b = 0x900b, c = 0x900c, d = 0x900d;
  GraphSlot sa = *add(kGraph, {.handle = a});
  GraphSlot sb = *add(kGraph, {.handle = b, .deps = {a}});
  add(kGraph, {.handle = c, .deps = {a}});
  add(kGraph, {.handle = d, .deps = {b, c}});
  complete(sa);
  complete(sb);
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), ElementsAre(3)) << "d still waits for c";
}

// A dependency whose breadcrumb says nothing does not prove the node after it never ran.
TEST_F(GraphTableTest, AnUnknownPredecessorDoesNotClose) {
  constexpr uintptr_t a = 0x900a, b = 0x900b, c = 0x900c;
  GraphSlot sa = *add(kGraph, {.handle = a});
  GraphSlot sb = *add(kGraph, {.handle = b, .deps = {a}});
  table->slot_unused(kGraph, sb);  // b: unknown
  add(kGraph, {.handle = c, .deps = {b}});
  complete(sa);
  instantiate(kExec, kGraph);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  EXPECT_THAT(states(nodes),
              ElementsAre(GraphNodeState::completed, GraphNodeState::unknown, GraphNodeState::not_completed));
  EXPECT_THAT(open_nodes(nodes), ElementsAre(2, 3));
}

// Dependencies on nodes that are not kernel nodes (memcpy, event...) or not known are no dependencies here.
TEST_F(GraphTableTest, DependenciesOnNodesThatAreNotKernelNodesAreIgnored) {
  constexpr uintptr_t memcpy_node = 0x9fff, a = 0x900a, b = 0x900b;
  add(kGraph, {.handle = a, .deps = {memcpy_node}});
  add(kGraph, {.handle = b, .deps = {memcpy_node, 0}});
  instantiate(kExec, kGraph);
  EXPECT_THAT(open_nodes(table->nodes_of(kExec)), ElementsAre(1, 2)) << "two roots, as far as kernel nodes go";
}

// ---- Lifetimes --------------------------------------------------------------------------------------------------

// PyTorch destroys the graph right after instantiating it: the exec keeps its own copy.
TEST_F(GraphTableTest, TheExecOutlivesItsGraph) {
  std::vector<GraphSlot> slots = capture(kGraph, 3);
  EXPECT_EQ(table->node_count(), 3u);
  instantiate(kExec, kGraph);
  EXPECT_EQ(table->node_count(), 6u) << "the exec's copy counts";
  table->graph_destroyed(kGraph);
  graphs.erase(kGraph);
  EXPECT_EQ(table->node_count(), 3u);
  complete(slots[0]);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_STREQ(nodes[2].kernel, kKernels[2]);
  EXPECT_EQ(nodes[0].graph_state, GraphNodeState::completed) << "its slots are still read";
  EXPECT_THAT(open_nodes(nodes), ElementsAre(2));
  EXPECT_EQ(resets(*table, kExec).size(), 1u) << "its slots are still cleared before each replay";

  table->exec_destroyed(kExec);
  execs.erase(kExec);
  EXPECT_THAT(table->nodes_of(kExec), IsEmpty());
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
  EXPECT_EQ(table->node_count(), 0u);
}

TEST_F(GraphTableTest, DestroyingUnknownHandlesChangesNothing) {
  capture(kGraph, 2);
  instantiate(kExec, kGraph);
  table->graph_destroyed(0x6affff);
  table->exec_destroyed(0xeffff);
  EXPECT_EQ(table->node_count(), 4u);
  EXPECT_EQ(table->nodes_of(kExec).size(), 2u);
}

TEST_F(GraphTableTest, NodesAddedAfterInstantiationAreNotTheExecs) {
  capture(kGraph, 2);
  instantiate(kExec, kGraph);
  add(kGraph, {.kernel = "_Z5laterv", .chain = 0xc4a1});
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].graph_nodes, 2u);
  EXPECT_EQ(resets(*table, kExec).front().bytes, 2 * kWordBytes) << "nor are their slots cleared for it";
  instantiate(kOtherExec, kGraph);
  EXPECT_EQ(table->nodes_of(kOtherExec).size(), 3u) << "a new instantiation runs them";
  EXPECT_STREQ(table->nodes_of(kOtherExec)[2].kernel, "_Z5laterv");
}

TEST_F(GraphTableTest, AClonesNodesAreTheOriginals) {
  std::vector<GraphSlot> slots = capture(kGraph, 3);
  table->cloned(kClone, kGraph);
  graphs.insert(kClone);
  EXPECT_EQ(table->node_count(), 6u);
  table->graph_destroyed(kGraph);
  graphs.erase(kGraph);
  instantiate(kExec, kClone);
  complete(slots[0]);  // the clone's leaves write the same slots
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_STREQ(nodes[0].kernel, kKernels[0]);
  EXPECT_STREQ(nodes[2].kernel, kKernels[2]);
  EXPECT_EQ(nodes[0].graph_state, GraphNodeState::completed);
  EXPECT_THAT(open_nodes(nodes), ElementsAre(2)) << "the chain is cloned too";
  ASSERT_EQ(resets(*table, kExec).size(), 1u);
  EXPECT_EQ(resets(*table, kExec).front().device, slots[0].device);
}

TEST_F(GraphTableTest, CloningAnUnknownGraphMakesNothing) {
  table->cloned(kClone, 0x6affff);
  table->cloned(0, kGraph);
  instantiate(kExec, kClone);
  EXPECT_THAT(table->nodes_of(kExec), IsEmpty());
  EXPECT_EQ(table->node_count(), 0u);
}

// cudaGraphExecUpdate: the exec now runs the other graph's nodes (and clears its slots).
TEST_F(GraphTableTest, AnUpdatedExecRunsTheOtherGraphsNodes) {
  capture(kGraph, 2);
  std::vector<GraphSlot> other;
  for (const char* kernel : {"_Z3onev", "_Z3twov", "_Z5threev"}) other.push_back(*add(kOtherGraph, {.kernel = kernel, .chain = 5}));
  instantiate(kExec, kGraph);
  EXPECT_EQ(table->node_count(), 2u + 3u + 2u);
  table->updated(kExec, kOtherGraph);
  EXPECT_EQ(table->node_count(), 2u + 3u + 3u) << "the old copy is dropped";
  complete(other[0]);
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_STREQ(nodes[0].kernel, "_Z3onev");
  EXPECT_STREQ(nodes[2].kernel, "_Z5threev");
  EXPECT_EQ(nodes[0].graph_nodes, 3u);
  EXPECT_THAT(open_nodes(nodes), ElementsAre(2));
  std::vector<SlotReset> r = resets(*table, kExec);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device, other[0].device);
  EXPECT_EQ(r[0].bytes, 3 * kWordBytes);
}

TEST_F(GraphTableTest, NodeCountGoesBackToZeroWhenEverythingIsDestroyed) {
  capture(kGraph, 4);
  capture(kOtherGraph, 2, 0xc4a2);
  table->cloned(kClone, kGraph);
  instantiate(kExec, kGraph);
  instantiate(kOtherExec, kClone);
  EXPECT_EQ(table->node_count(), 4u + 2u + 4u + 4u + 4u);
  table->graph_destroyed(kGraph);
  table->graph_destroyed(kOtherGraph);
  table->graph_destroyed(kClone);
  table->exec_destroyed(kExec);
  table->exec_destroyed(kOtherExec);
  graphs.clear();
  execs.clear();
  EXPECT_EQ(table->node_count(), 0u);
}

// ---- Clears before a replay -------------------------------------------------------------------------------------

TEST_F(GraphTableTest, ResetsCoverExactlyTheUsedSlots) {
  std::vector<GraphSlot> slots = capture(kGraph, 5);
  instantiate(kExec, kGraph);
  std::vector<SlotReset> r = resets(*table, kExec);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device, slots[0].device) << "from the graph's first slot";
  EXPECT_EQ(r[0].bytes, 5 * kWordBytes);
  for (const GraphSlot& s : slots) {
    EXPECT_GE(s.device, r[0].device);
    EXPECT_LT(s.device, r[0].device + r[0].bytes);
  }
}

TEST_F(GraphTableTest, AFullChunkIsOneReset) {
  std::vector<GraphSlot> slots = capture(kGraph, GraphTable::kSlotsPerChunk);
  instantiate(kExec, kGraph);
  std::vector<SlotReset> r = resets(*table, kExec);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device, slots[0].device);
  EXPECT_EQ(r[0].bytes, GraphTable::kSlotsPerChunk * kWordBytes);
}

TEST_F(GraphTableTest, RunsThatFollowEachOtherAreOneResetOthersTheirOwn) {
  constexpr size_t kNodes = GraphTable::kSlotsPerChunk + 44;
  capture(kOtherGraph, 3, 0xc4a2);  // another graph's run first: the second graph's slots do not start at 0
  std::vector<GraphSlot> slots = capture(kGraph, kNodes);
  ASSERT_EQ(slots.size(), kNodes);
  instantiate(kExec, kGraph);
  std::vector<SlotReset> r = resets(*table, kExec);
  ASSERT_EQ(r.size(), 1u) << "two runs side by side: one memset";
  EXPECT_EQ(r[0].device, slots[0].device);
  EXPECT_EQ(r[0].bytes, kNodes * kWordBytes);
  // A run of a third graph between two of this one's: two memsets.
  constexpr uintptr_t kThird = 0x6a0009;
  capture(kThird, 1, 0xc4a3);
  std::vector<GraphSlot> more = capture(kGraph, GraphTable::kSlotsPerChunk - 44 + 1);
  slots.insert(slots.end(), more.begin(), more.end());
  instantiate(kOtherExec, kGraph);
  r = resets(*table, kOtherExec);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bytes, 2 * GraphTable::kSlotsPerChunk * kWordBytes);
  EXPECT_EQ(r[1].device, slots.back().device);
  EXPECT_EQ(r[1].bytes, kWordBytes);
// Every slot of the graph lies in exactly one reset, and the resets hold nothing else.
  uint64_t total = 0;
  for (const SlotReset& one : r) total += one.bytes;
  EXPECT_EQ(total, slots.size() * kWordBytes);
  for (const GraphSlot& s : slots) {
    int covering = 0;
    for (const SlotReset& one : r) covering += s.device >= one.device && s.device < one.device + one.bytes;
    EXPECT_EQ(covering, 1) << "slot at 0x" << std::hex << s.device;
  }
}

TEST_F(GraphTableTest, NoResetsForAnUnknownOrDestroyedExec) {
  capture(kGraph, 3);
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
  EXPECT_THAT(resets(*table, 0), IsEmpty());
  instantiate(kExec, kGraph);
  EXPECT_EQ(resets(*table, kExec).size(), 1u);
  EXPECT_THAT(resets(*table, kOtherExec), IsEmpty());
  table->exec_destroyed(kExec);
  execs.erase(kExec);
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
}

// ---- Bounds -----------------------------------------------------------------------------------------------------

TEST_F(GraphTableTest, BeyondTheBoundNodesAreNotRecordedAndItIsSaidOnce) {
  constexpr size_t kMax = GraphTable::kMaxNodes;
  std::set<uint64_t> devices;
  for (size_t i = 0; i < kMax; ++i) {
    std::optional<GraphSlot> s = add(kGraph, {});
    ASSERT_TRUE(s.has_value()) << "node " << i;
    devices.insert(s->device);
  }
  EXPECT_EQ(devices.size(), kMax) << "every slot of the memory, each once";
  EXPECT_EQ(*devices.begin(), kDevice);
  EXPECT_EQ(*devices.rbegin(), kDevice + (kMax - 1) * kWordBytes) << "never past the memory's kMaxNodes words";
  EXPECT_EQ(table->node_count(), kMax);

  ::testing::internal::CaptureStderr();
  std::optional<GraphSlot> beyond = add(kGraph, {});
  std::optional<GraphSlot> again = add(kOtherGraph, {});
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(beyond.has_value());
  EXPECT_FALSE(again.has_value());
  EXPECT_EQ(table->node_count(), kMax);
  EXPECT_THAT(said, HasSubstr("firstassert: CUDA graphs: more than 32768 kernel nodes are alive"));
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;

  // A graph destroyed frees its records: nodes are recorded (and get slots) again.
  table->graph_destroyed(kGraph);
  graphs.erase(kGraph);
  EXPECT_EQ(table->node_count(), 0u);
  std::optional<GraphSlot> after = add(kOtherGraph, {});
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(table->node_count(), 1u);
}

// Freed runs of slots are given to the next graphs: however many graphs come and go, slots stay in the memory.
TEST_F(GraphTableTest, FreedSlotChunksAreReused) {
  constexpr size_t kMax = GraphTable::kMaxNodes;
  for (int round = 0; round < 3; ++round) {
    uintptr_t graph = 0x7a0000 + round;
    std::set<uint64_t> devices;
    for (size_t i = 0; i < kMax; ++i) {
      std::optional<GraphSlot> s = add(graph, {});
      ASSERT_TRUE(s.has_value()) << "round " << round << ", node " << i;
      ASSERT_GE(s->host, words.data());
      ASSERT_LT(s->host, words.data() + words.size());
      ASSERT_EQ(s->device, kDevice + static_cast<uint64_t>(s->host - words.data()) * kWordBytes);
      devices.insert(s->device);
    }
    EXPECT_EQ(devices.size(), kMax) << "round " << round;
    table->graph_destroyed(graph);
    graphs.erase(graph);
  }
  // Many small graphs in turn: each reuses what the one before freed.
  for (int i = 0; i < 1000; ++i) {
    uintptr_t graph = 0x7b0000 + i;
    std::optional<GraphSlot> s = add(graph, {});
    ASSERT_TRUE(s.has_value()) << "graph " << i;
    ASSERT_LT(s->device, kDevice + kMax * kWordBytes);
    instantiate(0xeb0000 + i, graph);
    table->graph_destroyed(graph);
    graphs.erase(graph);
    table->exec_destroyed(0xeb0000 + i);
    execs.erase(0xeb0000 + i);
  }
  EXPECT_EQ(table->node_count(), 0u);
}

// An exec's copy counts against the bound: an instantiation that would pass it leaves the exec unknown.
TEST_F(GraphTableTest, AnInstantiationPastTheBoundLeavesTheExecUnknown) {
  const size_t big = GraphTable::kMaxNodes / 2 + 1;
  for (size_t i = 0; i < big; ++i) add(kGraph, {});
  instantiate(kExec, kGraph);
  EXPECT_THAT(table->nodes_of(kExec), IsEmpty());
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
  EXPECT_EQ(table->node_count(), big);
  table->cloned(kClone, kGraph);
  EXPECT_EQ(table->node_count(), big) << "nor is a clone past the bound kept";
}

// A graph some of whose kernel nodes were not kept (the bound) says nothing of its states: a node it lost may be the
// one that failed.
TEST_F(GraphTableTest, AGraphMissingNodesReadsUnknown) {
  std::optional<GraphSlot> kept = add(kGraph, {.chain = 7});
  for (size_t i = 0; i + 1 < GraphTable::kMaxNodes; ++i) add(kOtherGraph, {});
  ::testing::internal::CaptureStderr();
  std::optional<GraphSlot> lost = add(kGraph, {.chain = 7});
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(kept.has_value());
  EXPECT_FALSE(lost.has_value());
  table->graph_destroyed(kOtherGraph);
  graphs.erase(kOtherGraph);
  instantiate(kExec, kGraph);
  *kept->host = 1;
  std::vector<LaunchRecord> nodes = table->nodes_of(kExec);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].graph_state, GraphNodeState::unknown);
  EXPECT_TRUE(nodes[0].graph_open);
}

// The driver lists a kernel node firstassert never recorded (a stream that joined the capture through an event,
// cudaGraphAddNode): that node may be the one that failed, so no state is trusted; the same count trusts them.
TEST_F(GraphTableTest, AKernelNodeTheTableNeverSawMakesTheExecUnknown) {
  std::vector<GraphSlot> slots = capture(kGraph, 2);
  complete(slots[0]);
  instantiate(kExec, kGraph);
  execs.insert(kOtherExec);
  table->instantiated(kOtherExec, kGraph, 3);
  EXPECT_THAT(states(table->nodes_of(kOtherExec)), ElementsAre(GraphNodeState::unknown, GraphNodeState::unknown));
  table->updated(kOtherExec, kGraph, 2);
  EXPECT_THAT(states(table->nodes_of(kOtherExec)),
              ElementsAre(GraphNodeState::completed, GraphNodeState::not_completed));
}

// An executable graph beyond the index is never cleared before its replays: its slots may hold another replay's.
TEST_F(GraphTableTest, AnExecBeyondTheIndexReadsUnknown) {
  std::optional<GraphSlot> slot = add(kGraph, {});
  ASSERT_TRUE(slot.has_value());
  *slot->host = 1;
  for (size_t i = 0; i < GraphTable::kMaxExecs; ++i) instantiate(0xec0000 + i, kGraph);
  instantiate(kExec, kGraph);
  EXPECT_THAT(resets(*table, kExec), IsEmpty());
  EXPECT_THAT(states(table->nodes_of(kExec)), ElementsAre(GraphNodeState::unknown));
  EXPECT_THAT(states(table->nodes_of(0xec0000)), ElementsAre(GraphNodeState::completed));
}

// A table destroyed while graphs and executable graphs live returns their runs to its own free list, which is still
// there (under AddressSanitizer this was a heap-use-after-free). The shim never destroys its table.
TEST(GraphTableLifetime, DestroyedWithLiveGraphsAndExecs) {
  std::vector<uint32_t> words(GraphTable::kMaxNodes);
  {
    GraphTable table;
    table.set_slot_memory(words.data(), kDevice);
    GraphNodeEvent e;
    e.kernel = "_Z6kernelv";
    table.add_node(kGraph, e);
    table.add_node(kOtherGraph, e);
    table.graph_destroyed(kOtherGraph);  // its run is freed
    table.add_node(kClone, e);
    table.instantiated(kExec, kGraph);  // graphs kGraph and kClone, exec kExec alive when the table goes
  }
  SUCCEED() << "checked by scripts/test --sanitize=address,undefined";
}

}  // namespace
}  // namespace firstassert
