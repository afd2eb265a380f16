#include "graph.h"

#include <functional>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "driver_state.h"
#include "kernel_registry.h"

namespace simcuda {
namespace {

enum class HandleKind { Graph, Node, Exec };

struct Handles {
  std::mutex mutex;
  std::unordered_map<const void*, HandleKind> live;
};

Handles& handles() {
  static auto* h = new Handles;  // never destroyed: graphs may be destroyed during exit
  return *h;
}

void remember(const void* p, HandleKind kind) {
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.live[p] = kind;
}

void forget(const void* p) {
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.live.erase(p);
}

bool live(const void* p, HandleKind kind) {
  if (p == nullptr) return false;
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  auto it = h.live.find(p);
  return it != h.live.end() && it->second == kind;
}

std::vector<Work> node_work(const GraphNode& node) {
  switch (node.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      Work work = node.launch;
      work.waits.clear();
      return {std::move(work)};
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
      return mem_op_work(node.mem_ops);
    default:
      return {};  // empty nodes only order the others
  }
}

std::unordered_map<const GraphNode*, size_t> indices(const Graph& graph) {
  std::unordered_map<const GraphNode*, size_t> index;
  for (size_t i = 0; i < graph.nodes.size(); ++i) index.emplace(graph.nodes[i].get(), i);
  return index;
}

}  // namespace

Graph* graph_handle(CUgraph h) { return live(h, HandleKind::Graph) ? reinterpret_cast<Graph*>(h) : nullptr; }
GraphNode* node_handle(CUgraphNode h) { return live(h, HandleKind::Node) ? reinterpret_cast<GraphNode*>(h) : nullptr; }
GraphExec* exec_handle(CUgraphExec h) { return live(h, HandleKind::Exec) ? reinterpret_cast<GraphExec*>(h) : nullptr; }
void register_exec(GraphExec* exec) { remember(exec, HandleKind::Exec); }
void register_graph(Graph* graph) { remember(graph, HandleKind::Graph); }
void forget_exec(GraphExec* exec) { forget(exec); }
void forget_graph(Graph* graph) { forget(graph); }

Graph::Graph() = default;

Graph::~Graph() {
  for (const auto& node : nodes) forget(node.get());
}

GraphNode* Graph::add(CUgraphNodeType type, const std::vector<GraphNode*>& dependencies) {
  auto node = std::make_unique<GraphNode>();
  node->graph = this;
  node->type = type;
  node->dependencies = dependencies;
  for (GraphNode* dependency : dependencies) dependency->dependents.push_back(node.get());
  remember(node.get(), HandleKind::Node);
  nodes.push_back(std::move(node));
  return nodes.back().get();
}

CUresult set_kernel_params(GraphNode& node, const CUDA_KERNEL_NODE_PARAMS& params) {
  if (params.func == nullptr && params.kern == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A CUkernel is the simulator's Kernel as a CUfunction is (cudaGetKernel gives the same handle).
  CUfunction function = params.func != nullptr ? params.func : reinterpret_cast<CUfunction>(params.kern);
  Work work;
  CUresult r = make_kernel_work(function, dim3{params.gridDimX, params.gridDimY, params.gridDimZ},
                                dim3{params.blockDimX, params.blockDimY, params.blockDimZ}, params.kernelParams,
                                params.extra, &work);
  if (r != CUDA_SUCCESS) return r;
  node.launch = std::move(work);
  node.shared_bytes = params.sharedMemBytes;
  node.given_as_kern = params.func == nullptr;
  node.context = node.given_as_kern ? params.ctx : nullptr;  // ignored when func is set
  node.argument_pointers.clear();
  return CUDA_SUCCESS;
}

void get_kernel_params(GraphNode& node, CUDA_KERNEL_NODE_PARAMS* params) {
  // The node owns the argument values; kernelParams points at them (stable until the parameters are set again).
  node.argument_pointers.clear();
  for (size_t offset : node.launch.arg_offsets) node.argument_pointers.push_back(node.launch.arg_bytes.data() + offset);
  *params = CUDA_KERNEL_NODE_PARAMS{};
  params->func = node.given_as_kern ? nullptr : reinterpret_cast<CUfunction>(node.launch.kernel);
  params->gridDimX = node.launch.grid.x;
  params->gridDimY = node.launch.grid.y;
  params->gridDimZ = node.launch.grid.z;
  params->blockDimX = node.launch.block.x;
  params->blockDimY = node.launch.block.y;
  params->blockDimZ = node.launch.block.z;
  params->sharedMemBytes = node.shared_bytes;
  params->kernelParams = node.argument_pointers.empty() ? nullptr : node.argument_pointers.data();
  params->extra = nullptr;
  params->kern = node.given_as_kern ? reinterpret_cast<CUkernel>(node.launch.kernel) : nullptr;
  params->ctx = node.context;
}

CUresult check_mem_ops(const CUstreamBatchMemOpParams* ops, size_t count) {
  if (ops == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    const CUstreamBatchMemOpParams& op = ops[i];
    switch (op.operation) {
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      case CU_STREAM_MEM_OP_WRITE_VALUE_64: {
        size_t bytes = op.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64 ? 8 : 4;
        CUdeviceptr address = op.writeValue.address;
        if (address % bytes != 0 || !device_accessible(reinterpret_cast<void*>(address), bytes))
          return CUDA_ERROR_INVALID_VALUE;
        break;
      }
      case CU_STREAM_MEM_OP_BARRIER:
        break;
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
        say_unsupported_once("wait-value and flush-remote-writes stream memory operations");
        return CUDA_ERROR_NOT_SUPPORTED;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

std::vector<Work> mem_op_work(const std::vector<CUstreamBatchMemOpParams>& ops) {
  std::vector<Work> work;
  for (const CUstreamBatchMemOpParams& op : ops) {
    bool wide = op.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
    if (!wide && op.operation != CU_STREAM_MEM_OP_WRITE_VALUE_32) continue;  // barriers: nothing to do
    Work write;
    write.kind = wide ? Work::Kind::WriteValue64 : Work::Kind::WriteValue32;
    write.address = reinterpret_cast<void*>(op.writeValue.address);
    write.value = wide ? op.writeValue.value64 : op.writeValue.value;
    work.push_back(std::move(write));
  }
  return work;
}

std::unique_ptr<Graph> clone_graph(const Graph& graph) {
  auto copy = std::make_unique<Graph>();
  std::unordered_map<const GraphNode*, GraphNode*> counterpart;
  for (const auto& node : graph.nodes) {
    GraphNode* c = copy->add(node->type, {});
    c->original = node.get();
    c->launch = node->launch;
    c->shared_bytes = node->shared_bytes;
    c->given_as_kern = node->given_as_kern;
    c->context = node->context;
    c->mem_ops = node->mem_ops;
    c->mem_op_context = node->mem_op_context;
    c->mem_op_flags = node->mem_op_flags;
    counterpart.emplace(node.get(), c);
  }
  // Edges may run from a later node to an earlier one (cuGraphAddDependencies): wired once all nodes exist.
  for (const auto& node : graph.nodes) {
    GraphNode* c = counterpart.at(node.get());
    for (const GraphNode* dependency : node->dependencies) c->dependencies.push_back(counterpart.at(dependency));
    for (const GraphNode* dependent : node->dependents) c->dependents.push_back(counterpart.at(dependent));
  }
  return copy;
}

CUresult instantiate_graph(const Graph& graph, std::unique_ptr<GraphExec>* out) {
  auto exec = std::make_unique<GraphExec>();
  const size_t n = graph.nodes.size();
  auto index = indices(graph);
  exec->nodes.resize(n);
  std::vector<size_t> waiting(n);
  using ReadyQueue = std::priority_queue<size_t, std::vector<size_t>, std::greater<>>;
  ReadyQueue instant, kernels;  // each: the node created first on top
  auto ready = [&](size_t i) { (graph.nodes[i]->type == CU_GRAPH_NODE_TYPE_KERNEL ? kernels : instant).push(i); };
  for (size_t i = 0; i < n; ++i) {
    const GraphNode& node = *graph.nodes[i];
    GraphExec::Node& e = exec->nodes[i];
    e.type = node.type;
    e.source = &node;
    for (const GraphNode* dependency : node.dependencies) e.dependencies.push_back(index.at(dependency));
    e.work = node_work(node);
    waiting[i] = node.dependencies.size();
    if (waiting[i] == 0) ready(i);
  }
  while (!instant.empty() || !kernels.empty()) {
    ReadyQueue& from = !instant.empty() ? instant : kernels;
    size_t i = from.top();
    from.pop();
    exec->order.push_back(i);
    for (const GraphNode* dependent : graph.nodes[i]->dependents) {
      size_t j = index.at(dependent);
      if (--waiting[j] == 0) ready(j);
    }
  }
  if (exec->order.size() != n) return CUDA_ERROR_INVALID_VALUE;  // a cycle
  *out = std::move(exec);
  return CUDA_SUCCESS;
}

CUresult update_exec(GraphExec& exec, const Graph& graph, CUgraphExecUpdateResultInfo* info) {
  auto result = [&](CUgraphExecUpdateResult outcome, const GraphNode* node, const GraphNode* from) {
    if (info != nullptr) {
      info->result = outcome;
      info->errorNode = reinterpret_cast<CUgraphNode>(const_cast<GraphNode*>(node));
      info->errorFromNode = reinterpret_cast<CUgraphNode>(const_cast<GraphNode*>(from));
    }
    return outcome == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  };
  if (graph.nodes.size() != exec.nodes.size())
    return result(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, nullptr, nullptr);
  auto index = indices(graph);
  std::vector<std::vector<Work>> work(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& node = *graph.nodes[i];
    const GraphExec::Node& paired = exec.nodes[i];
    if (node.type != paired.type) return result(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, &node, nullptr);
    if (node.dependencies.size() != paired.dependencies.size())
      return result(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &node, nullptr);
    for (size_t j = 0; j < node.dependencies.size(); ++j) {
      if (index.at(node.dependencies[j]) != paired.dependencies[j])
        return result(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &node, node.dependencies[j]);
    }
    work[i] = node_work(node);
    if (node.type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP && work[i].size() != paired.work.size())
      return result(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, &node, nullptr);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) exec.nodes[i].work = std::move(work[i]);
  return result(CU_GRAPH_EXEC_UPDATE_SUCCESS, nullptr, nullptr);
}

}  // namespace simcuda
