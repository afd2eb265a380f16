// CUDA graphs on the simulator, as CUDA 13 documents them: stream capture of kernels and stream memory operations
// (batch memory-operation nodes), graphs built and inspected node by node (driver and runtime), clones, replay in
// dependency order on the launching stream, a device assert in one node of a replay, and cuGraphExecUpdate.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/stock_kernels.h"
#include "simcuda.h"
#include "support/fresh_process.h"
#include "support/test_kernels.h"

namespace graphtest {
// observe_kernel(id, slot): logs (id, *slot) when it runs: what it saw of the writes before it.
void observe_kernel(int, const uint64_t*) {
  static volatile int calls = 0;
  calls = calls + 1;
}
}  // namespace graphtest

namespace {

const char* kRecordName = "_ZN7simtest13record_kernelEi";
const char* kAssertName = "_ZN7simtest13assert_kernelEj";
const char* kObserveName = "_ZN9graphtest14observe_kernelEiPKm";
const char* kBusyName = "_ZN10simkernels11busy_kernelEy";
const char* kAssertLine =
    "train.cu:42: assert_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.\n";

std::mutex log_mutex;
std::vector<std::pair<int, uint64_t>> observed;  // (id, slot value seen)

std::vector<std::pair<int, uint64_t>> observations() {
  std::lock_guard lock(log_mutex);
  return observed;
}

void register_kernels() {
  simtest::register_test_kernels();
  static std::once_flag once;
  std::call_once(once, [] {
    const size_t sizes[] = {sizeof(int), sizeof(void*)};
    simcuda_register_kernel_with_params(reinterpret_cast<const void*>(&graphtest::observe_kernel), kObserveName,
                                        [](void** args, dim3, dim3) {
                                          int id = *static_cast<int*>(args[0]);
                                          auto* slot = *static_cast<const volatile uint64_t**>(args[1]);
                                          std::lock_guard lock(log_mutex);
                                          observed.emplace_back(id, *slot);
                                        },
                                        2, sizes);
  });
  std::lock_guard lock(log_mutex);
  observed.clear();
  simtest::clear_recorded_ids();
}

// In this process: initialize, make the primary context current, load a module.
void bring_up(CUmodule* module) {
  ASSERT_NE(simkernels_host_stub("busy"), nullptr);  // loads and registers the stock kernels
  register_kernels();
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext context;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleLoadData(module, "simulated cubin"), CUDA_SUCCESS);
}

CUfunction function(CUmodule module, const char* name) {
  CUfunction f = nullptr;
  EXPECT_EQ(cuModuleGetFunction(&f, module, name), CUDA_SUCCESS) << name;
  return f;
}

// Zeroed host memory the device can write to.
struct Slots {
  void* host = nullptr;
  CUdeviceptr device = 0;
  volatile uint64_t* at = nullptr;
  explicit Slots(size_t n) {
    EXPECT_EQ(cuMemHostAlloc(&host, n * sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    at = static_cast<volatile uint64_t*>(host);
    for (size_t i = 0; i < n; ++i) at[i] = 0;
    EXPECT_EQ(cuMemHostGetDevicePointer(&device, host, 0), CUDA_SUCCESS);
  }
  ~Slots() { cuMemFreeHost(host); }
  CUdeviceptr slot(size_t i) const { return device + i * sizeof(uint64_t); }
};

// What a count-then-fill query of a graph (cuGraphGetNodes, cuGraphGetRootNodes) lists.
std::vector<CUgraphNode> listed(CUresult (*query)(CUgraph, CUgraphNode*, size_t*), CUgraph graph) {
  size_t count = 0;
  EXPECT_EQ(query(graph, nullptr, &count), CUDA_SUCCESS);
  std::vector<CUgraphNode> nodes(count);
  if (count > 0) {
    EXPECT_EQ(query(graph, nodes.data(), &count), CUDA_SUCCESS);
  }
  return nodes;
}

std::vector<CUgraphNode> nodes_of(CUgraph graph) { return listed(cuGraphGetNodes, graph); }

std::vector<CUgraphNode> dependencies_of(CUgraphNode node) {
  size_t count = 0;
  EXPECT_EQ(cuGraphNodeGetDependencies(node, nullptr, nullptr, &count), CUDA_SUCCESS);
  std::vector<CUgraphNode> deps(count);
  std::vector<CUgraphEdgeData> edges(count);
  if (count > 0) {
    EXPECT_EQ(cuGraphNodeGetDependencies(node, deps.data(), edges.data(), &count), CUDA_SUCCESS);
  }
  for (const CUgraphEdgeData& e : edges) EXPECT_EQ(e.type, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
  return deps;
}

std::vector<CUgraphNode> dependents_of(CUgraphNode node) {
  size_t count = 0;
  EXPECT_EQ(cuGraphNodeGetDependentNodes(node, nullptr, nullptr, &count), CUDA_SUCCESS);
  std::vector<CUgraphNode> deps(count);
  if (count > 0) {
    EXPECT_EQ(cuGraphNodeGetDependentNodes(node, deps.data(), nullptr, &count), CUDA_SUCCESS);
  }
  return deps;
}

std::vector<CUgraphNode> roots_of(CUgraph graph) { return listed(cuGraphGetRootNodes, graph); }

CUgraphNodeType type_of(CUgraphNode node) {
  auto type = static_cast<CUgraphNodeType>(-1);
  EXPECT_EQ(cuGraphNodeGetType(node, &type), CUDA_SUCCESS);
  return type;
}

CUresult launch_record(CUfunction record, CUstream stream, int id, unsigned grid = 1, unsigned shared = 0) {
  void* args[] = {&id};
  return cuLaunchKernel(record, grid, 1, 1, 32, 1, 1, shared, stream, args, nullptr);
}

CUresult launch_observe(CUfunction observe, CUstream stream, int id, CUdeviceptr slot) {
  void* args[] = {&id, &slot};
  return cuLaunchKernel(observe, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr);
}

CUresult launch_assert(CUfunction asserting, CUstream stream) {
  unsigned thread = 5;
  void* args[] = {&thread};
  return cuLaunchKernel(asserting, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr);
}

CUstreamBatchMemOpParams write64(CUdeviceptr address, uint64_t value) {
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  op.writeValue.address = address;
  op.writeValue.value64 = value;
  return op;
}

CUgraphNode add_write(CUgraph graph, std::vector<CUgraphNode> deps, CUdeviceptr address, uint64_t value) {
  CUstreamBatchMemOpParams op = write64(address, value);
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  params.count = 1;
  params.paramArray = &op;
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddBatchMemOpNode(&node, graph, deps.data(), deps.size(), &params), CUDA_SUCCESS);
  return node;
}

CUgraphNode add_observe(CUgraph graph, std::vector<CUgraphNode> deps, CUfunction observe, int id, CUdeviceptr slot) {
  void* args[] = {&id, &slot};
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = observe;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = args;
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddKernelNode(&node, graph, deps.data(), deps.size(), &params), CUDA_SUCCESS);
  return node;
}

size_t position(const std::vector<std::pair<int, uint64_t>>& log, int id) {
  auto it = std::find_if(log.begin(), log.end(), [id](const auto& e) { return e.first == id; });
  return static_cast<size_t>(it - log.begin());
}

class Graphs : public ::testing::Test {
 protected:
  void SetUp() override {
    bring_up(&module_);
    if (HasFatalFailure()) return;
    record_ = function(module_, kRecordName);
    observe_ = function(module_, kObserveName);
    ASSERT_EQ(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    cuStreamDestroy(stream_);
    cuModuleUnload(module_);
  }
  CUmodule module_ = nullptr;
  CUfunction record_ = nullptr, observe_ = nullptr;
  CUstream stream_ = nullptr;
};

// Five kernels, each followed by a stream write: ten nodes, kernel and batch memory-operation in turn, each
// depending on the one before, with the kernels' launch configuration and copied arguments, and the writes' operation.
TEST_F(Graphs, CaptureOfKernelsAndStreamWritesGivesOneNodeEachLinearInTheStream) {
  Slots slots(5);
  ASSERT_EQ(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(launch_record(record_, stream_, i, i + 1, 16 * i), CUDA_SUCCESS);
    if (i % 2 == 0)
      ASSERT_EQ(cuStreamWriteValue64(stream_, slots.slot(i), 100 + i, 0), CUDA_SUCCESS);
    else
      ASSERT_EQ(cuStreamWriteValue32(stream_, slots.slot(i), 100 + i, 0), CUDA_SUCCESS);
  }
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_TRUE(simtest::recorded_ids().empty()) << "captured work ran";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(slots.at[i], 0u) << "a captured write landed";

  std::vector<CUgraphNode> nodes = nodes_of(graph);
  ASSERT_EQ(nodes.size(), 10u);
  EXPECT_EQ(roots_of(graph), std::vector<CUgraphNode>{nodes[0]});
  for (size_t k = 0; k < nodes.size(); ++k) {
    SCOPED_TRACE("node " + std::to_string(k));
    int i = static_cast<int>(k / 2);
    EXPECT_EQ(dependencies_of(nodes[k]), k == 0 ? std::vector<CUgraphNode>{} : std::vector<CUgraphNode>{nodes[k - 1]});
    EXPECT_EQ(dependents_of(nodes[k]), k == 9 ? std::vector<CUgraphNode>{} : std::vector<CUgraphNode>{nodes[k + 1]});
    if (k % 2 == 0) {
      ASSERT_EQ(type_of(nodes[k]), CU_GRAPH_NODE_TYPE_KERNEL);
      CUDA_KERNEL_NODE_PARAMS params{};
      ASSERT_EQ(cuGraphKernelNodeGetParams(nodes[k], &params), CUDA_SUCCESS);
      EXPECT_EQ(params.func, record_);
      EXPECT_EQ(params.gridDimX, static_cast<unsigned>(i + 1));
      EXPECT_EQ(params.blockDimX, 32u);
      EXPECT_EQ(params.blockDimY, 1u);
      EXPECT_EQ(params.sharedMemBytes, static_cast<unsigned>(16 * i));
      ASSERT_NE(params.kernelParams, nullptr);
      EXPECT_EQ(*static_cast<int*>(params.kernelParams[0]), i) << "the argument, copied at capture";
      EXPECT_EQ(params.extra, nullptr);
    } else {
      ASSERT_EQ(type_of(nodes[k]), CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
      CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
      ASSERT_EQ(cuGraphBatchMemOpNodeGetParams(nodes[k], &params), CUDA_SUCCESS);
      ASSERT_EQ(params.count, 1u);
      const CUstreamBatchMemOpParams& op = params.paramArray[0];
      EXPECT_EQ(op.operation, i % 2 == 0 ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32);
      EXPECT_EQ(op.writeValue.address, slots.slot(i));
      EXPECT_EQ(i % 2 == 0 ? op.writeValue.value64 : op.writeValue.value, static_cast<uint64_t>(100 + i));
    }
  }

  // Arrays of another size than the graph's: a larger one is padded with null, a smaller one filled.
  std::vector<CUgraphNode> larger(12, reinterpret_cast<CUgraphNode>(0x1));
  size_t count = larger.size();
  ASSERT_EQ(cuGraphGetNodes(graph, larger.data(), &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 10u);
  EXPECT_EQ(larger[9], nodes[9]);
  EXPECT_EQ(larger[10], nullptr);
  std::vector<CUgraphNode> smaller(3);
  count = smaller.size();
  ASSERT_EQ(cuGraphGetNodes(graph, smaller.data(), &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(smaller[2], nodes[2]);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(simtest::recorded_ids(), (std::vector<int>{0, 1, 2, 3, 4}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(slots.at[i], static_cast<uint64_t>(100 + i));
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

// A diamond whose last node is created first: the replay follows the dependencies, not the creation order, and
// runs in the stream's order with the work around it.
TEST_F(Graphs, DiamondBuiltNodeByNodeReplaysInDependencyOrder) {
  Slots slots(1);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphNode d = add_observe(graph, {}, observe_, 4, slots.slot(0));
  CUgraphNode a = add_observe(graph, {}, observe_, 1, slots.slot(0));
  CUgraphNode b = add_observe(graph, {a}, observe_, 2, slots.slot(0));
  CUgraphNode c = add_write(graph, {a}, slots.slot(0), 7);
  CUgraphNode from[] = {b, c}, to[] = {d, d};
  ASSERT_EQ(cuGraphAddDependencies(graph, from, to, nullptr, 2), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphAddDependencies(graph, from, to, nullptr, 1), CUDA_ERROR_INVALID_VALUE) << "an existing edge";
  EXPECT_EQ(roots_of(graph), std::vector<CUgraphNode>{a});
  EXPECT_EQ(dependencies_of(d), (std::vector<CUgraphNode>{b, c}));
  EXPECT_EQ(dependents_of(a), (std::vector<CUgraphNode>{b, c}));
  EXPECT_EQ(type_of(c), CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(launch_observe(observe_, stream_, 0, slots.slot(0)), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(launch_observe(observe_, stream_, 99, slots.slot(0)), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  auto log = observations();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0], std::make_pair(0, uint64_t{0})) << "work queued before the graph runs before it";
  EXPECT_EQ(log[1].first, 1) << "a, the root, first";
  EXPECT_EQ(log[1].second, 0u) << "a ran after c's write";
  EXPECT_LT(position(log, 2), position(log, 4)) << "d ran before b";
  EXPECT_EQ(log[position(log, 4)].second, 7u) << "d ran before c's write landed";
  EXPECT_EQ(log[4], std::make_pair(99, uint64_t{7})) << "work queued after the graph runs after it";

  // An edge closing a cycle: no valid order, no executable graph.
  CUgraphNode back_from[] = {d}, back_to[] = {a};
  ASSERT_EQ(cuGraphAddDependencies(graph, back_from, back_to, nullptr, 1), CUDA_SUCCESS);
  CUgraphExec cyclic = nullptr;
  EXPECT_EQ(cuGraphInstantiate(&cyclic, graph, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

// How a tool adds breadcrumbs to a graph it did not build: clone it, add a leaf write after each kernel node, and
// replay the clone. Each kernel sees the breadcrumbs of the kernels before it; the original graph is untouched.
TEST_F(Graphs, CloneWithALeafWriteAfterEachKernelNodeReplaysTheWritesInOrder) {
  Slots progress(1);
  ASSERT_EQ(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  for (int id = 1; id <= 3; ++id) ASSERT_EQ(launch_observe(observe_, stream_, id, progress.slot(0)), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
  std::vector<CUgraphNode> originals = nodes_of(graph);
  ASSERT_EQ(originals.size(), 3u);

  CUgraph clone = nullptr;
  ASSERT_EQ(cuGraphClone(&clone, graph), CUDA_SUCCESS);
  std::vector<CUgraphNode> kernels = nodes_of(clone);
  ASSERT_EQ(kernels.size(), 3u);
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_NE(kernels[i], originals[i]) << "a clone has nodes of its own";
    CUgraphNode found = nullptr;
    ASSERT_EQ(cuGraphNodeFindInClone(&found, originals[i], clone), CUDA_SUCCESS);
    EXPECT_EQ(found, kernels[i]);
    ASSERT_EQ(type_of(kernels[i]), CU_GRAPH_NODE_TYPE_KERNEL);
    add_write(clone, {kernels[i]}, progress.slot(0), i + 1);
  }
  EXPECT_EQ(nodes_of(clone).size(), 6u);
  EXPECT_EQ(nodes_of(graph).size(), 3u) << "the original graph changed";

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, clone, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(observations(), (std::vector<std::pair<int, uint64_t>>{{1, 0}, {2, 1}, {3, 2}}));
  EXPECT_EQ(progress.at[0], 3u);

  // The original replays without breadcrumbs.
  progress.at[0] = 0;
  CUgraphExec plain = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&plain, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(plain, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(progress.at[0], 0u);
  EXPECT_EQ(observations().size(), 6u);
  EXPECT_EQ(cuGraphExecDestroy(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(clone), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

// Two captures of the same steps: the second's parameters update the first's executable graph. Another node count,
// a node of another type or other dependencies do not, and leave it as it was.
TEST_F(Graphs, ExecUpdateTakesNewParametersOnlyWhenTheTopologyIsTheSame) {
  Slots slots(1);
  auto capture = [&](int first, uint64_t written, int second, bool extra_kernel) {
    CUgraph graph = nullptr;
    EXPECT_EQ(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    EXPECT_EQ(launch_record(record_, stream_, first), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamWriteValue64(stream_, slots.slot(0), written, 0), CUDA_SUCCESS);
    EXPECT_EQ(launch_record(record_, stream_, second), CUDA_SUCCESS);
    if (extra_kernel) {
      EXPECT_EQ(launch_record(record_, stream_, second + 1), CUDA_SUCCESS);
    }
    EXPECT_EQ(cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
    return graph;
  };
  auto replay = [&](CUgraphExec exec) {
    simtest::clear_recorded_ids();
    EXPECT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
    return simtest::recorded_ids();
  };
  CUgraph first = capture(1, 11, 2, false);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, first, 0), CUDA_SUCCESS);
  EXPECT_EQ(replay(exec), (std::vector<int>{1, 2}));
  EXPECT_EQ(slots.at[0], 11u);

  CUgraph same = capture(10, 110, 20, false);
  CUgraphExecUpdateResultInfo info{};
  ASSERT_EQ(cuGraphExecUpdate(exec, same, &info), CUDA_SUCCESS);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  EXPECT_EQ(replay(exec), (std::vector<int>{10, 20})) << "the kernel nodes' new arguments";
  EXPECT_EQ(slots.at[0], 110u) << "the write node's new value";

  CUgraph longer = capture(5, 55, 6, true);
  EXPECT_EQ(cuGraphExecUpdate(exec, longer, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_EQ(info.errorNode, nullptr) << "the node count differs";

  // Same count, the second node a kernel rather than a write.
  CUgraph retyped = nullptr;
  ASSERT_EQ(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  for (int id : {5, 6, 7}) ASSERT_EQ(launch_record(record_, stream_, id), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamEndCapture(stream_, &retyped), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecUpdate(exec, retyped, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
  EXPECT_EQ(info.errorNode, nodes_of(retyped)[1]);

  // Same nodes and types, the last depending on the first instead of the second.
  CUgraph rewired = nullptr;
  ASSERT_EQ(cuGraphCreate(&rewired, 0), CUDA_SUCCESS);
  CUgraphNode k1 = add_observe(rewired, {}, record_, 5, 0);
  CUgraphNode w = add_write(rewired, {k1}, slots.slot(0), 55);
  CUgraphNode k2 = add_observe(rewired, {k1}, record_, 6, 0);
  (void)w;
  EXPECT_EQ(cuGraphExecUpdate(exec, rewired, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_EQ(info.errorNode, k2);
  EXPECT_EQ(info.errorFromNode, k1);

  EXPECT_EQ(replay(exec), (std::vector<int>{10, 20})) << "a failed update changed the executable graph";

  // One node's parameters, named by the node of the graph it was instantiated from.
  int id = 30;
  void* args[] = {&id};
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = record_;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = args;
  ASSERT_EQ(cuGraphExecKernelNodeSetParams(exec, nodes_of(first)[2], &params), CUDA_SUCCESS);
  EXPECT_EQ(replay(exec), (std::vector<int>{10, 30}));

  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  for (CUgraph g : {first, same, longer, retyped, rewired}) EXPECT_EQ(cuGraphDestroy(g), CUDA_SUCCESS);
}

TEST_F(Graphs, StreamBatchMemOpRunsInStreamOrderAndIsCapturedAsOneNode) {
  Slots slots(2);
  CUstreamBatchMemOpParams ops[3] = {write64(slots.slot(0), 1), write64(slots.slot(1), 2), {}};
  ops[2].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  ops[2].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  unsigned long long us = 100000;
  void* busy_args[] = {&us};
  CUfunction busy = function(module_, kBusyName);
  ASSERT_EQ(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, stream_, busy_args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBatchMemOp(stream_, 3, ops, 0), CUDA_SUCCESS);
  EXPECT_EQ(slots.at[0], 0u) << "the writes wait for the kernel before them";
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(slots.at[0], 1u);
  EXPECT_EQ(slots.at[1], 2u);

  ASSERT_EQ(cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ops[0].writeValue.value64 = 10;
  ASSERT_EQ(cuStreamBatchMemOp(stream_, 3, ops, 0), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream_, &graph), CUDA_SUCCESS);
  std::vector<CUgraphNode> nodes = nodes_of(graph);
  ASSERT_EQ(nodes.size(), 1u);
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  ASSERT_EQ(cuGraphBatchMemOpNodeGetParams(nodes[0], &params), CUDA_SUCCESS);
  EXPECT_EQ(params.count, 3u);
  EXPECT_EQ(params.paramArray[2].operation, CU_STREAM_MEM_OP_BARRIER);
  EXPECT_EQ(slots.at[0], 1u);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(slots.at[0], 10u);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(Graphs, InstantiateWithParamsReportsItsResult) {
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphNode empty = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&empty, graph, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(type_of(empty), CU_GRAPH_NODE_TYPE_EMPTY);
  add_observe(graph, {empty}, record_, 3, 0);
  CUDA_GRAPH_INSTANTIATE_PARAMS params{};
  params.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  params.hUploadStream = stream_;
  params.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithParams(&exec, graph, &params), CUDA_SUCCESS);
  EXPECT_EQ(params.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
  EXPECT_EQ(params.hErrNode_out, nullptr);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(simtest::recorded_ids(), std::vector<int>{3});
  CUgraphExec refused = nullptr;
  EXPECT_EQ(cuGraphInstantiateWithFlags(&refused, graph, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD), CUDA_ERROR_INVALID_VALUE)
      << "uploading needs a stream: only the params form can ask for it";
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(Graphs, HandlesAndNodeParametersAreChecked) {
  Slots slots(1);
  CUgraph graph = nullptr, other = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphCreate(&graph, 1), CUDA_ERROR_INVALID_VALUE) << "flags must be 0";
  CUgraphNode foreign = add_write(other, {}, slots.slot(0), 1);
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph, &foreign, 1), CUDA_ERROR_INVALID_VALUE) << "a node of another graph";
  CUgraphNode mine = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&mine, graph, nullptr, 0), CUDA_SUCCESS);
  CUgraphNode twice[] = {mine, mine};
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph, twice, 2), CUDA_ERROR_INVALID_VALUE) << "a repeated dependency";
  CUstreamBatchMemOpParams misaligned = write64(slots.slot(0) + 4, 1);
  CUDA_BATCH_MEM_OP_NODE_PARAMS batch{};
  batch.count = 1;
  batch.paramArray = &misaligned;
  EXPECT_EQ(cuGraphAddBatchMemOpNode(&node, graph, nullptr, 0, &batch), CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS kernel{};
  kernel.func = record_;
  kernel.gridDimX = kernel.gridDimY = kernel.gridDimZ = 1;
  kernel.blockDimX = 2048;
  kernel.blockDimY = kernel.blockDimZ = 1;
  int id = 1;
  void* args[] = {&id};
  kernel.kernelParams = args;
  EXPECT_EQ(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kernel), CUDA_ERROR_INVALID_VALUE) << "2048 threads";
  EXPECT_EQ(nodes_of(graph).size(), 1u) << "a refused node joined the graph";
  CUDA_KERNEL_NODE_PARAMS read{};
  EXPECT_EQ(cuGraphKernelNodeGetParams(mine, &read), CUDA_ERROR_INVALID_VALUE) << "not a kernel node";
  CUgraphNodeType type;
  EXPECT_EQ(cuGraphNodeGetType(reinterpret_cast<CUgraphNode>(&type), &type), CUDA_ERROR_INVALID_VALUE);
  size_t count = 0;
  EXPECT_EQ(cuGraphGetNodes(reinterpret_cast<CUgraph>(&count), nullptr, &count), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphNodeGetType(foreign, &type), CUDA_ERROR_INVALID_VALUE) << "a node of a destroyed graph";
  EXPECT_EQ(cuGraphDestroy(other), CUDA_ERROR_INVALID_VALUE);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphLaunch(exec, stream_), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}

TEST_F(Graphs, GetProcAddressGivesTheVersionedGraphEntryPoints) {
  const std::pair<const char*, const char*> expected[] = {
      {"cuGraphCreate", "cuGraphCreate"},
      {"cuGraphAddKernelNode", "cuGraphAddKernelNode_v2"},
      {"cuGraphAddBatchMemOpNode", "cuGraphAddBatchMemOpNode"},
      {"cuGraphKernelNodeGetParams", "cuGraphKernelNodeGetParams_v2"},
      {"cuGraphNodeGetDependencies", "cuGraphNodeGetDependencies_v2"},
      {"cuGraphAddDependencies", "cuGraphAddDependencies_v2"},
      {"cuGraphGetNodes", "cuGraphGetNodes"},
      {"cuGraphNodeGetType", "cuGraphNodeGetType"},
      {"cuGraphClone", "cuGraphClone"},
      {"cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams"},
      {"cuGraphExecUpdate", "cuGraphExecUpdate_v2"},
      {"cuStreamBatchMemOp", "cuStreamBatchMemOp_v2"},
  };
  for (const auto& [name, symbol] : expected) {
    void* fn = nullptr;
    ASSERT_EQ(cuGetProcAddress(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, nullptr), CUDA_SUCCESS) << name;
    EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, symbol)) << name;
    EXPECT_NE(fn, nullptr) << symbol << " is not exported";
  }
  void* fn = nullptr;
  ASSERT_EQ(cuGetProcAddress("cuGraphInstantiateWithParams", &fn, CUDA_VERSION,
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuGraphInstantiateWithParams_ptsz"));
  ASSERT_EQ(cuGetProcAddress("cuStreamBatchMemOp", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                             nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuStreamBatchMemOp_v2_ptsz"));

  // Before 12.3 the base name meant the signature without edge data, which the simulator does not implement.
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  EXPECT_EQ(cuGetProcAddress("cuGraphNodeGetDependencies", &fn, 12020, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(fn, nullptr);
  ASSERT_EQ(cuGetProcAddress("cuGraphNodeGetDependencies", &fn, 12030, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_EQ(fn, dlsym(RTLD_DEFAULT, "cuGraphNodeGetDependencies_v2"));
}

// The runtime's graph API over the driver's: kernel nodes by host stub, their arguments copied when added.
TEST_F(Graphs, RuntimeBuildsInspectsClonesAndUpdatesGraphs) {
  (void)cudaGetLastError();
  const void* stub = reinterpret_cast<const void*>(&simtest::record_kernel);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaGraphCreate(&graph, 0), cudaSuccess);
  int id = 7;
  void* args[] = {&id};
  cudaKernelNodeParams params{};
  params.func = const_cast<void*>(stub);
  params.gridDim = dim3{2, 1, 1};
  params.blockDim = dim3{32, 1, 1};
  params.kernelParams = args;
  cudaGraphNode_t first = nullptr, empty = nullptr, second = nullptr;
  ASSERT_EQ(cudaGraphAddKernelNode(&first, graph, nullptr, 0, &params), cudaSuccess);
  id = 8;  // the node holds a copy
  ASSERT_EQ(cudaGraphAddEmptyNode(&empty, graph, &first, 1), cudaSuccess);
  id = 9;
  ASSERT_EQ(cudaGraphAddKernelNode(&second, graph, nullptr, 0, &params), cudaSuccess);
  ASSERT_EQ(cudaGraphAddDependencies(graph, &empty, &second, nullptr, 1), cudaSuccess);

  size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  EXPECT_EQ(count, 3u);
  cudaGraphNodeType type = cudaGraphNodeTypeCount;
  ASSERT_EQ(cudaGraphNodeGetType(empty, &type), cudaSuccess);
  EXPECT_EQ(type, cudaGraphNodeTypeEmpty);
  ASSERT_EQ(cudaGraphNodeGetType(second, &type), cudaSuccess);
  EXPECT_EQ(type, cudaGraphNodeTypeKernel);
  cudaKernelNodeParams read{};
  ASSERT_EQ(cudaGraphKernelNodeGetParams(first, &read), cudaSuccess);
  EXPECT_EQ(read.func, stub);
  EXPECT_EQ(read.gridDim.x, 2u);
  EXPECT_EQ(read.blockDim.x, 32u);
  EXPECT_EQ(*static_cast<int*>(read.kernelParams[0]), 7);
  cudaGraphNode_t deps[2] = {};
  cudaGraphEdgeData edges[2];
  count = 2;
  ASSERT_EQ(cudaGraphNodeGetDependencies(second, deps, edges, &count), cudaSuccess);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(deps[0], empty);
  cudaGraphNode_t roots[3] = {};
  count = 3;
  ASSERT_EQ(cudaGraphGetRootNodes(graph, roots, &count), cudaSuccess);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(roots[0], first);

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaGraphInstantiateParams instantiate{};
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiateWithParams(&exec, graph, &instantiate), cudaSuccess);
  EXPECT_EQ(instantiate.result_out, cudaGraphInstantiateSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(simtest::recorded_ids(), (std::vector<int>{7, 9}));

  // A clone with new arguments for its first kernel updates the executable graph.
  cudaGraph_t clone = nullptr;
  ASSERT_EQ(cudaGraphClone(&clone, graph), cudaSuccess);
  std::vector<cudaGraphNode_t> cloned(3);
  count = 3;
  ASSERT_EQ(cudaGraphGetNodes(clone, cloned.data(), &count), cudaSuccess);
  id = 70;
  ASSERT_EQ(cudaGraphKernelNodeSetParams(cloned[0], &params), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  ASSERT_EQ(cudaGraphExecUpdate(exec, clone, &info), cudaSuccess);
  EXPECT_EQ(info.result, cudaGraphExecUpdateSuccess);
  simtest::clear_recorded_ids();
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(simtest::recorded_ids(), (std::vector<int>{70, 9}));

  cudaGraph_t lone = nullptr;
  ASSERT_EQ(cudaGraphCreate(&lone, 0), cudaSuccess);
  cudaGraphNode_t only = nullptr;
  ASSERT_EQ(cudaGraphAddEmptyNode(&only, lone, nullptr, 0), cudaSuccess);
  EXPECT_EQ(cudaGraphExecUpdate(exec, lone, &info), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, cudaGraphExecUpdateErrorTopologyChanged);
  EXPECT_EQ(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);

  params.func = reinterpret_cast<void*>(&count);
  EXPECT_EQ(cudaGraphAddKernelNode(&only, lone, nullptr, 0, &params), cudaErrorInvalidDeviceFunction);
  (void)cudaGetLastError();
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  for (cudaGraph_t g : {graph, clone, lone}) EXPECT_EQ(cudaGraphDestroy(g), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// What a tool needs to learn which node of a replay faulted: the writes after the kernels before the asserting one
// land; the write after it, the rest of the graph and the work after the graph never run; the sync that learns of it
// prints the assertion line and returns 710, which sticks.
TEST(GraphFault, KernelNodeThatAssertsDropsTheRestOfTheReplay) {
  FRESH_PROCESS({
    CUmodule module = nullptr;
    bring_up(&module);
    if (::testing::Test::HasFatalFailure()) return;
    CUfunction record = function(module, kRecordName), asserting = function(module, kAssertName);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    Slots slots(6);
    ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    for (int i = 1; i <= 5; ++i) {
      ASSERT_EQ(i == 3 ? launch_assert(asserting, stream) : launch_record(record, stream, i), CUDA_SUCCESS);
      ASSERT_EQ(cuStreamWriteValue64(stream, slots.slot(i - 1), i, 0), CUDA_SUCCESS);
    }
    CUgraph graph = nullptr;
    ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
    CUgraphExec exec = nullptr;
    ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);

    // A busy kernel first, so that the work after the graph is queued before its fault.
    unsigned long long us = 50000;
    void* busy_args[] = {&us};
    ASSERT_EQ(cuLaunchKernel(function(module, kBusyName), 1, 1, 1, 1, 1, 1, 0, stream, busy_args, nullptr),
              CUDA_SUCCESS);
    simtest::StderrCapture err;
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS) << "the launch is queued; the fault comes later";
    ASSERT_EQ(cuStreamWriteValue64(stream, slots.slot(5), 99, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(err.text(), kAssertLine);
    EXPECT_EQ(slots.at[0], 1u);
    EXPECT_EQ(slots.at[1], 2u) << "the write after the second kernel";
    for (int i = 2; i < 6; ++i) EXPECT_EQ(slots.at[i], 0u) << "slot " << i << ": written after the fault";
    EXPECT_EQ(simtest::recorded_ids(), (std::vector<int>{1, 2}));

    EXPECT_EQ(cuGraphLaunch(exec, stream), CUDA_ERROR_ASSERT) << "sticky";
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    // The graph can still be read, to map what landed to its nodes.
    std::vector<CUgraphNode> nodes = nodes_of(graph);
    ASSERT_EQ(nodes.size(), 10u);
    EXPECT_EQ(type_of(nodes[4]), CU_GRAPH_NODE_TYPE_KERNEL);
    CUDA_KERNEL_NODE_PARAMS params{};
    ASSERT_EQ(cuGraphKernelNodeGetParams(nodes[4], &params), CUDA_SUCCESS);
    EXPECT_EQ(params.func, asserting);
  });
}

// cuStreamGetCaptureInfo during a capture: the graph being captured (the one cuStreamEndCapture returns) and the
// stream's current dependency, the node just captured. A node added to that graph as a leaf depending on it leaves
// the stream's own chain alone; a stream-ordered memset clears the leaves' slots before each replay.
TEST(GraphFault, LeafWritesAddedDuringCaptureShowTheReplayProgressAfterAReset) {
  FRESH_PROCESS({
    CUmodule module = nullptr;
    bring_up(&module);
    if (::testing::Test::HasFatalFailure()) return;
    CUfunction record = function(module, kRecordName), asserting = function(module, kAssertName);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    ASSERT_EQ(cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr, nullptr, nullptr, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);

    Slots slots(3);
    ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CUgraph capturing = nullptr;
    cuuint64_t first_id = 0;
    std::vector<CUgraphNode> kernels;
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(i == 1 ? launch_assert(asserting, stream) : launch_record(record, stream, i + 1), CUDA_SUCCESS);
      cuuint64_t id = 0;
      CUgraph graph = nullptr;
      const CUgraphNode* deps = nullptr;
      const CUgraphEdgeData* edges = reinterpret_cast<const CUgraphEdgeData*>(0x1);
      size_t count = 0;
      ASSERT_EQ(cuStreamGetCaptureInfo(stream, &status, &id, &graph, &deps, &edges, &count), CUDA_SUCCESS);
      ASSERT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
      ASSERT_EQ(count, 1u);
      EXPECT_EQ(edges, nullptr) << "default edges only";
      if (i == 0) capturing = graph, first_id = id;
      EXPECT_EQ(graph, capturing);
      EXPECT_EQ(id, first_id);
      EXPECT_EQ(type_of(deps[0]), CU_GRAPH_NODE_TYPE_KERNEL);
      kernels.push_back(deps[0]);
      CUstreamBatchMemOpParams op{};
      op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
      op.writeValue.address = slots.slot(i);
      op.writeValue.value = 1;
      CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
      params.count = 1;
      params.paramArray = &op;
      CUgraphNode leaf = nullptr;
      ASSERT_EQ(cuGraphAddBatchMemOpNode(&leaf, graph, deps, count, &params), CUDA_SUCCESS);
    }
    CUgraph graph = nullptr;
    ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
    EXPECT_EQ(graph, capturing);
    ASSERT_EQ(nodes_of(graph).size(), 6u);
    EXPECT_EQ(dependencies_of(kernels[1]), std::vector<CUgraphNode>{kernels[0]}) << "the stream's chain is unchanged";
    EXPECT_EQ(dependencies_of(kernels[2]), std::vector<CUgraphNode>{kernels[1]});
    ASSERT_EQ(cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr, nullptr, nullptr, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);

    CUgraphExec exec = nullptr;
    ASSERT_EQ(cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
    for (int i = 0; i < 3; ++i) slots.at[i] = 7;
    simtest::StderrCapture err;
    ASSERT_EQ(cuMemsetD8Async(slots.device, 0, 3 * sizeof(uint64_t), stream), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(err.text(), kAssertLine);
    EXPECT_EQ(slots.at[0], 1u) << "the first kernel's leaf";
    EXPECT_EQ(slots.at[1], 0u) << "the asserting kernel's leaf never ran";
    EXPECT_EQ(slots.at[2], 0u) << "reset before the replay, and the third kernel never ran";
  });
}

// Breadcrumbs added to a clone after each kernel node: the last one that landed names the node before the one that
// faulted.
TEST(GraphFault, LeafBreadcrumbsOfAClonedGraphStopAtTheFaultingNode) {
  FRESH_PROCESS({
    CUmodule module = nullptr;
    bring_up(&module);
    if (::testing::Test::HasFatalFailure()) return;
    CUfunction record = function(module, kRecordName), asserting = function(module, kAssertName);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Slots progress(1);
    ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    ASSERT_EQ(launch_record(record, stream, 1), CUDA_SUCCESS);
    ASSERT_EQ(launch_assert(asserting, stream), CUDA_SUCCESS);
    ASSERT_EQ(launch_record(record, stream, 3), CUDA_SUCCESS);
    CUgraph graph = nullptr, clone = nullptr;
    ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphClone(&clone, graph), CUDA_SUCCESS);
    std::vector<CUgraphNode> kernels = nodes_of(clone);
    for (size_t i = 0; i < kernels.size(); ++i) add_write(clone, {kernels[i]}, progress.slot(0), i + 1);
    CUgraphExec exec = nullptr;
    ASSERT_EQ(cuGraphInstantiate(&exec, clone, 0), CUDA_SUCCESS);
    simtest::StderrCapture err;
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_ASSERT);
    EXPECT_EQ(err.text(), kAssertLine);
    EXPECT_EQ(progress.at[0], 1u) << "the breadcrumb of the first kernel node only";
    EXPECT_EQ(simtest::recorded_ids(), std::vector<int>{1});
  });
}

TEST(GraphLimits, WhatIsNotModelledFailsWithNotSupportedAndSaysSoOnce) {
  FRESH_PROCESS({
    CUmodule module = nullptr;
    bring_up(&module);
    if (::testing::Test::HasFatalFailure()) return;
    Slots slots(1);
    CUstream stream;
    ASSERT_EQ(cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    CUgraph graph = nullptr;
    ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    simtest::StderrCapture err;
    CUstreamBatchMemOpParams wait{};
    wait.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    wait.waitValue.address = slots.slot(0);
    CUDA_BATCH_MEM_OP_NODE_PARAMS batch{};
    batch.count = 1;
    batch.paramArray = &wait;
    CUgraphNode node = nullptr;
    EXPECT_EQ(cuGraphAddBatchMemOpNode(&node, graph, nullptr, 0, &batch), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cuStreamBatchMemOp(stream, 1, &wait, 0), CUDA_ERROR_NOT_SUPPORTED);
    ASSERT_EQ(cuGraphAddEmptyNode(&node, graph, nullptr, 0), CUDA_SUCCESS);
    CUgraphExec exec = nullptr;
    EXPECT_EQ(cuGraphInstantiate(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH), CUDA_ERROR_NOT_SUPPORTED);
    CUgraphEdgeData port{};
    port.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
    CUgraphNode other = nullptr;
    ASSERT_EQ(cuGraphAddEmptyNode(&other, graph, nullptr, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuGraphAddDependencies(graph, &node, &other, &port, 1), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS) << "none of these is sticky";
    std::string printed = err.text();
    const std::string line =
        "simcuda: wait-value and flush-remote-writes stream memory operations is not supported by the simulator\n";
    EXPECT_NE(printed.find(line), std::string::npos) << printed;
    EXPECT_EQ(printed.find(line), printed.rfind(line)) << "said once, not per call";
    EXPECT_NE(printed.find("device launch"), std::string::npos) << printed;
    EXPECT_NE(printed.find("CUgraphEdgeData"), std::string::npos) << printed;
  });
}

}  // namespace
