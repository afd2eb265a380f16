// CUDA graphs as CUDA 13 documents them, as far as the simulator models them: a graph is a DAG of nodes (kernel,
// batch memory-operation and empty nodes) with dependencies in the order their edges were added; an executable
// graph is a copy of one, with a topological order in which a launch queues its nodes on the launching stream.
// A CUgraph is a Graph*, a CUgraphNode a GraphNode*, a CUgraphExec a GraphExec*; handles are checked against those
// given out, so a stale or foreign one is an error rather than a crash.
#pragma once

#include <cuda.h>

#include <memory>
#include <vector>

#include "device.h"

namespace simcuda {

struct Graph;

struct GraphNode {
  Graph* graph = nullptr;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  std::vector<GraphNode*> dependencies;  // in the order the edges were added
  std::vector<GraphNode*> dependents;
  const GraphNode* original = nullptr;  // the node this one is a clone of (cuGraphNodeFindInClone)

  // Kernel nodes: the launch, its arguments copied when the node was made or its parameters set.
  Work launch;
  unsigned shared_bytes = 0;
  bool given_as_kern = false;  // CUDA_KERNEL_NODE_PARAMS::kern named the kernel, not ::func
  CUcontext context = nullptr;
  std::vector<void*> argument_pointers;  // the kernelParams GetParams hands out: into launch.arg_bytes

  // Batch memory-operation nodes: the operations, copied (a captured stream write is one of them).
  std::vector<CUstreamBatchMemOpParams> mem_ops;
  CUcontext mem_op_context = nullptr;
  unsigned mem_op_flags = 0;
};

struct Graph {
  std::vector<std::unique_ptr<GraphNode>> nodes;  // in creation order
  bool invalidated = false;  // during a capture: work the simulator cannot capture was issued

  Graph();
  ~Graph();  // its nodes' handles die with it
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A new node depending on dependencies (of this graph, checked by the caller).
  GraphNode* add(CUgraphNodeType type, const std::vector<GraphNode*>& dependencies);
};

struct GraphExec {
  struct Node {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    std::vector<size_t> dependencies;  // indices into nodes, in edge order
    const GraphNode* source = nullptr;  // the node of the graph it was instantiated from
    std::vector<Work> work;             // what the node queues when it runs
  };
  std::vector<Node> nodes;   // in the graph's creation order: how cuGraphExecUpdate pairs nodes
  std::vector<size_t> order;  // the replay order
};

// Handles: the object when h names a live one of that kind, else nullptr.
Graph* graph_handle(CUgraph h);
GraphNode* node_handle(CUgraphNode h);
GraphExec* exec_handle(CUgraphExec h);
void register_exec(GraphExec* exec);
void register_graph(Graph* graph);
void forget_exec(GraphExec* exec);
void forget_graph(Graph* graph);  // the caller deletes it (its nodes' handles die with it)

// A kernel node's parameters: set (checked, arguments copied) and read back.
CUresult set_kernel_params(GraphNode& node, const CUDA_KERNEL_NODE_PARAMS& params);
void get_kernel_params(GraphNode& node, CUDA_KERNEL_NODE_PARAMS* params);

// The batch memory operations the simulator models: 32- and 64-bit write values to device-accessible memory, and
// memory barriers (nothing to do: the simulated device's memory operations are ordered). Waits and remote-write
// flushes are not supported (said once).
CUresult check_mem_ops(const CUstreamBatchMemOpParams* ops, size_t count);
std::vector<Work> mem_op_work(const std::vector<CUstreamBatchMemOpParams>& ops);

// A deep copy: new nodes, same order, same edges, each remembering its original.
std::unique_ptr<Graph> clone_graph(const Graph& graph);

// An executable copy. Replay order: a topological order in which, of the nodes whose dependencies have all run,
// memory operations and empty nodes run first (they take no time: on a GPU they complete while a kernel ready at
// the same moment runs), then the kernel created first. CUDA_ERROR_INVALID_VALUE for a graph with a cycle.
CUresult instantiate_graph(const Graph& graph, std::unique_ptr<GraphExec>* exec);

// cuGraphExecUpdate: nodes paired in creation order; a different node count or dependencies (in edge order) is
// CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, a different type CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, a
// batch node with another operation count CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED; otherwise every kernel
// and memory-operation node takes its new parameters. Nothing changes unless all of it can.
CUresult update_exec(GraphExec& exec, const Graph& graph, CUgraphExecUpdateResultInfo* info);

}  // namespace simcuda
