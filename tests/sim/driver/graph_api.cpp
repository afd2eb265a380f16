// The exported graph entry points of the driver (libcuda.so.1): building graphs node by node, inspecting them,
// cloning, instantiating, updating and launching them, under the versioned names CUDA 13 exports. Each is traced
// for CUPTI's driver domain with its genuine *_params struct. The model itself is graph.h's.
//
// Calls that only read a graph (its nodes, their types, parameters and dependencies) need an initialized driver,
// not a healthy context: a tool can still inspect a graph after one of its replays faulted the device.
#include <cuda.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "api_support.h"
#include "graph.h"

namespace {

using simcuda::Graph;
using simcuda::GraphExec;
using simcuda::GraphNode;
using simcuda::Stream;
using namespace simcuda::driver_api;

CUgraphNode handle_of(GraphNode* node) { return reinterpret_cast<CUgraphNode>(node); }

// The dependencies of a new node: nodes of graph, no duplicates.
CUresult dependencies_of(Graph& graph, const CUgraphNode* handles, size_t count, std::vector<GraphNode*>* out) {
  if (count > 0 && handles == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out->clear();
  for (size_t i = 0; i < count; ++i) {
    GraphNode* node = simcuda::node_handle(handles[i]);
    if (node == nullptr || node->graph != &graph) return CUDA_ERROR_INVALID_VALUE;
    if (std::find(out->begin(), out->end(), node) != out->end()) return CUDA_ERROR_INVALID_VALUE;
    out->push_back(node);
  }
  return CUDA_SUCCESS;
}

// What the Get* queries share: the count alone when out is null; else up to *count entries, the rest of a larger
// array set to null, and *count the number given.
CUresult list_nodes(const std::vector<GraphNode*>& nodes, CUgraphNode* out, CUgraphEdgeData* edges, size_t* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (out == nullptr) {
    *count = nodes.size();
    return CUDA_SUCCESS;
  }
  size_t given = std::min(*count, nodes.size());
  for (size_t i = 0; i < *count; ++i) {
    out[i] = i < given ? handle_of(nodes[i]) : nullptr;
    if (edges != nullptr) edges[i] = CUgraphEdgeData{};  // every edge the simulator makes is a default one
  }
  *count = given;
  return CUDA_SUCCESS;
}

bool default_edges(const CUgraphEdgeData* edges, size_t count) {
  if (edges == nullptr) return true;
  for (size_t i = 0; i < count; ++i) {
    if (edges[i].from_port != 0 || edges[i].to_port != 0 || edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT)
      return false;
  }
  return true;
}

template <typename Make>
CUresult add_node(CUgraphNode* out, CUgraph hGraph, const CUgraphNode* dependencies, size_t count,
                  CUgraphNodeType type, Make&& make) {
  if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
  Graph* graph = simcuda::graph_handle(hGraph);
  if (out == nullptr || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> deps;
  if (CUresult r = dependencies_of(*graph, dependencies, count, &deps); r != CUDA_SUCCESS) return r;
  GraphNode scratch;  // parameters are checked before the node joins the graph
  if (CUresult r = make(scratch); r != CUDA_SUCCESS) return r;
  GraphNode* node = graph->add(type, deps);
  node->launch = std::move(scratch.launch);
  node->shared_bytes = scratch.shared_bytes;
  node->given_as_kern = scratch.given_as_kern;
  node->context = scratch.context;
  node->mem_ops = std::move(scratch.mem_ops);
  node->mem_op_context = scratch.mem_op_context;
  node->mem_op_flags = scratch.mem_op_flags;
  *out = handle_of(node);
  return CUDA_SUCCESS;
}

CUresult set_mem_op_params(GraphNode& node, const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (params->flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = simcuda::check_mem_ops(params->paramArray, params->count); r != CUDA_SUCCESS) return r;
  // The operations are copied: the caller may free its array once the call returns.
  node.mem_ops.assign(params->paramArray, params->paramArray + params->count);
  node.mem_op_context = params->ctx;
  node.mem_op_flags = params->flags;
  return CUDA_SUCCESS;
}

CUresult instantiate(CUgraphExec* out, CUgraph hGraph, unsigned long long flags, CUstream upload, bool per_thread,
                     CUgraphInstantiateResult* result) {
  if (result != nullptr) *result = CUDA_GRAPH_INSTANTIATE_ERROR;
  if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
  Graph* graph = simcuda::graph_handle(hGraph);
  if (out == nullptr || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr unsigned long long kAccepted = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                           CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                           CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0) {
    simcuda::say_unsupported_once("instantiating a graph for device launch");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if ((flags & ~kAccepted) != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    // Uploading is nothing to the simulated device, but the stream must be one.
    Stream* stream = nullptr;
    if (CUresult r = stream_ready(upload, per_thread, &stream); r != CUDA_SUCCESS) return r;
  }
  std::unique_ptr<GraphExec> exec;
  if (CUresult r = simcuda::instantiate_graph(*graph, &exec); r != CUDA_SUCCESS) return r;
  simcuda::register_exec(exec.get());
  *out = reinterpret_cast<CUgraphExec>(exec.release());
  if (result != nullptr) *result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult instantiate_with_params(CUgraphExec* out, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* params,
                                 bool per_thread) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  params->hErrNode_out = nullptr;
  return instantiate(out, hGraph, params->flags, params->hUploadStream, per_thread, &params->result_out);
}

// A graph's kernels run in the current context: like a kernel launch, into one of its streams only.
CUresult graph_launch(CUgraphExec handle, CUstream hStream, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = current_stream_ready(hStream, per_thread, &stream); r != CUDA_SUCCESS) return r;
  GraphExec* exec = simcuda::exec_handle(handle);
  if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return stream->device->launch_graph(stream, *exec);
}

}  // namespace

extern "C" {

// ---- building graphs ---------------------------------------------------------------------------------------------

CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return TRACED(cuGraphCreate, phGraph, flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    auto* graph = new Graph;
    simcuda::register_graph(graph);
    *phGraph = reinterpret_cast<CUgraph>(graph);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return TRACED(cuGraphAddKernelNode_v2, phGraphNode, hGraph, dependencies, numDependencies, nodeParams) {
    if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_KERNEL,
                    [&](GraphNode& node) { return simcuda::set_kernel_params(node, *nodeParams); });
  });
}

CUresult CUDAAPI cuGraphAddBatchMemOpNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                          size_t numDependencies, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return TRACED(cuGraphAddBatchMemOpNode, phGraphNode, hGraph, dependencies, numDependencies, nodeParams) {
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
                    [&](GraphNode& node) { return set_mem_op_params(node, nodeParams); });
  });
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                     size_t numDependencies) {
  return TRACED(cuGraphAddEmptyNode, phGraphNode, hGraph, dependencies, numDependencies) {
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY,
                    [](GraphNode&) { return CUDA_SUCCESS; });
  });
}

CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                           const CUgraphEdgeData* edgeData, size_t numDependencies) {
  return TRACED(cuGraphAddDependencies_v2, hGraph, from, to, edgeData, numDependencies) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    Graph* graph = simcuda::graph_handle(hGraph);
    if (graph == nullptr || (numDependencies > 0 && (from == nullptr || to == nullptr)))
      return CUDA_ERROR_INVALID_VALUE;
    if (!default_edges(edgeData, numDependencies)) {
      simcuda::say_unsupported_once("graph edges other than default ones (CUgraphEdgeData ports and types)");
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    // All checked before any is added: an existing or repeated edge, or one outside the graph, adds none.
    std::vector<std::pair<GraphNode*, GraphNode*>> edges;
    for (size_t i = 0; i < numDependencies; ++i) {
      GraphNode* a = simcuda::node_handle(from[i]);
      GraphNode* b = simcuda::node_handle(to[i]);
      if (a == nullptr || b == nullptr || a == b || a->graph != graph || b->graph != graph)
        return CUDA_ERROR_INVALID_VALUE;
      bool exists = std::find(b->dependencies.begin(), b->dependencies.end(), a) != b->dependencies.end() ||
                    std::find(edges.begin(), edges.end(), std::make_pair(a, b)) != edges.end();
      if (exists) return CUDA_ERROR_INVALID_VALUE;
      edges.emplace_back(a, b);
    }
    for (auto [a, b] : edges) {
      b->dependencies.push_back(a);
      a->dependents.push_back(b);
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return TRACED(cuGraphKernelNodeSetParams_v2, hNode, nodeParams) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr || nodeParams == nullptr || node->type != CU_GRAPH_NODE_TYPE_KERNEL)
      return CUDA_ERROR_INVALID_VALUE;
    GraphNode scratch;
    if (CUresult r = simcuda::set_kernel_params(scratch, *nodeParams); r != CUDA_SUCCESS) return r;
    node->launch = std::move(scratch.launch);
    node->shared_bytes = scratch.shared_bytes;
    node->given_as_kern = scratch.given_as_kern;
    node->context = scratch.context;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return TRACED(cuGraphClone, phGraphClone, originalGraph) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    Graph* graph = simcuda::graph_handle(originalGraph);
    if (phGraphClone == nullptr || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Graph* clone = simcuda::clone_graph(*graph).release();
    simcuda::register_graph(clone);
    *phGraphClone = reinterpret_cast<CUgraph>(clone);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  return TRACED(cuGraphDestroy, hGraph) {
    Graph* graph = simcuda::graph_handle(hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    simcuda::forget_graph(graph);
    delete graph;
    return CUDA_SUCCESS;
  });
}

// ---- inspecting graphs -------------------------------------------------------------------------------------------

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  return TRACED(cuGraphGetNodes, hGraph, nodes, numNodes) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    Graph* graph = simcuda::graph_handle(hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<GraphNode*> all;
    for (const auto& node : graph->nodes) all.push_back(node.get());
    return list_nodes(all, nodes, nullptr, numNodes);
  });
}

CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes) {
  return TRACED(cuGraphGetRootNodes, hGraph, rootNodes, numRootNodes) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    Graph* graph = simcuda::graph_handle(hGraph);
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<GraphNode*> roots;
    for (const auto& node : graph->nodes) {
      if (node->dependencies.empty()) roots.push_back(node.get());
    }
    return list_nodes(roots, rootNodes, nullptr, numRootNodes);
  });
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return TRACED(cuGraphNodeGetType, hNode, type) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr || type == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *type = node->type;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies, CUgraphEdgeData* edgeData,
                                               size_t* numDependencies) {
  return TRACED(cuGraphNodeGetDependencies_v2, hNode, dependencies, edgeData, numDependencies) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return list_nodes(node->dependencies, dependencies, edgeData, numDependencies);
  });
}

CUresult CUDAAPI cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                                 CUgraphEdgeData* edgeData, size_t* numDependentNodes) {
  return TRACED(cuGraphNodeGetDependentNodes_v2, hNode, dependentNodes, edgeData, numDependentNodes) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return list_nodes(node->dependents, dependentNodes, edgeData, numDependentNodes);
  });
}

CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return TRACED(cuGraphKernelNodeGetParams_v2, hNode, nodeParams) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr || nodeParams == nullptr || node->type != CU_GRAPH_NODE_TYPE_KERNEL)
      return CUDA_ERROR_INVALID_VALUE;
    simcuda::get_kernel_params(*node, nodeParams);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode, CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) {
  return TRACED(cuGraphBatchMemOpNodeGetParams, hNode, nodeParams_out) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    GraphNode* node = simcuda::node_handle(hNode);
    if (node == nullptr || nodeParams_out == nullptr || node->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)
      return CUDA_ERROR_INVALID_VALUE;
    // The array is the node's own, valid until the node is destroyed or its parameters set.
    nodeParams_out->ctx = node->mem_op_context;
    nodeParams_out->count = static_cast<unsigned>(node->mem_ops.size());
    nodeParams_out->paramArray = node->mem_ops.data();
    nodeParams_out->flags = node->mem_op_flags;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph) {
  return TRACED(cuGraphNodeFindInClone, phNode, hOriginalNode, hClonedGraph) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    Graph* clone = simcuda::graph_handle(hClonedGraph);
    if (phNode == nullptr || clone == nullptr || hOriginalNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
    for (const auto& node : clone->nodes) {
      if (node->original == reinterpret_cast<const GraphNode*>(hOriginalNode)) {
        *phNode = handle_of(node.get());
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

// ---- executable graphs -------------------------------------------------------------------------------------------

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags) {
  return TRACED(cuGraphInstantiateWithFlags, phGraphExec, hGraph, flags) {
    // Uploading at instantiation needs a stream: only cuGraphInstantiateWithParams can ask for it.
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) return CUDA_ERROR_INVALID_VALUE;
    return instantiate(phGraphExec, hGraph, flags, nullptr, false, nullptr);
  });
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return TRACED(cuGraphInstantiateWithParams, phGraphExec, hGraph, instantiateParams) {
    return instantiate_with_params(phGraphExec, hGraph, instantiateParams, false);
  });
}

CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return TRACED(cuGraphInstantiateWithParams_ptsz, phGraphExec, hGraph, instantiateParams) {
    return instantiate_with_params(phGraphExec, hGraph, instantiateParams, true);
  });
}

CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo* resultInfo) {
  return TRACED(cuGraphExecUpdate_v2, hGraphExec, hGraph, resultInfo) {
    if (resultInfo != nullptr) *resultInfo = CUgraphExecUpdateResultInfo{CU_GRAPH_EXEC_UPDATE_ERROR, nullptr, nullptr};
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    GraphExec* exec = simcuda::exec_handle(hGraphExec);
    Graph* graph = simcuda::graph_handle(hGraph);
    if (exec == nullptr || graph == nullptr || resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return simcuda::update_exec(*exec, *graph, resultInfo);
  });
}

CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return TRACED(cuGraphExecKernelNodeSetParams_v2, hGraphExec, hNode, nodeParams) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    GraphExec* exec = simcuda::exec_handle(hGraphExec);
    GraphNode* node = simcuda::node_handle(hNode);
    if (exec == nullptr || node == nullptr || nodeParams == nullptr || node->type != CU_GRAPH_NODE_TYPE_KERNEL)
      return CUDA_ERROR_INVALID_VALUE;
    // hNode is the node of the graph the executable graph was instantiated from.
    for (GraphExec::Node& paired : exec->nodes) {
      if (paired.source != node) continue;
      GraphNode scratch;
      if (CUresult r = simcuda::set_kernel_params(scratch, *nodeParams); r != CUDA_SUCCESS) return r;
      scratch.launch.waits.clear();
      paired.work.assign(1, std::move(scratch.launch));
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return TRACED(cuGraphExecDestroy, hGraphExec) {
    GraphExec* exec = simcuda::exec_handle(hGraphExec);
    if (exec == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // Launches already queued hold copies of the work: they still run.
    simcuda::forget_exec(exec);
    delete exec;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return TRACED(cuGraphLaunch, hGraphExec, hStream) { return graph_launch(hGraphExec, hStream, false); });
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return TRACED(cuGraphLaunch_ptsz, hGraphExec, hStream) { return graph_launch(hGraphExec, hStream, true); });
}

}  // extern "C"
