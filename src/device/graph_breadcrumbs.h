// Graph breadcrumbs: what firstassert adds to the CUDA graphs a program builds so that a replay says how far it got.
// After each kernel node is made (captured from a stream, or added node by node), a batch memory-operation node is
// added as a leaf depending on it alone, writing 1 into the node's slot of host-mapped memory; the stream's capture
// dependencies and the program's own nodes' dependencies are left as they were. Before each launch of an executable
// graph its slots are cleared on the launching stream (cuMemsetD8Async), so after a fault the slots read 1 exactly
// for the kernel nodes that completed in the replay that failed. The records themselves are core/graph_table's.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "core/graph_table.h"

namespace firstassert {

class GraphBreadcrumbs {
 public:
  // leaves: whether to add leaf nodes and clear slots at all (FIRSTASSERT_BREADCRUMBS); the nodes are recorded
  // either way, for their names.
  GraphBreadcrumbs(GraphTable& table, bool leaves) : table_(table), leaves_(leaves) {}

  // Before a capture begins, or a graph is built node by node: the slot memory exists. Pinned memory cannot be
  // allocated while a stream is being captured in the global mode, which PyTorch uses.
  void prepare();
  // A kernel launch into stream while it is being captured succeeded: node's kernel, configuration and stacks.
  void captured_launch(CUstream stream, uint64_t stream_key, GraphNodeEvent node);
  // cuGraphAddKernelNode (or the runtime's) made node in graph: its kernel and configuration are read back from it.
  // kernel_name: how to name a kernel of CUfunction / CUkernel handle; node carries the stacks.
  void added_kernel_node(CUgraph graph, CUgraphNode handle, const CUgraphNode* deps, size_t dep_count,
                         GraphNodeEvent node, const char* (*intern)(const char*));
  // The kernel nodes graph holds, as the driver lists them (SIZE_MAX when it holds child graphs or conditional
  // nodes, whose kernels firstassert does not see); nullopt when it cannot be asked. Compared with the nodes
  // recorded, at instantiation: a kernel firstassert never saw (captured from a stream that joined the capture
  // through an event, or added by cudaGraphAddNode) may be the one that fails.
  std::optional<size_t> kernel_nodes_of(CUgraph graph) const;
  // Before exec is launched on stream: its slots are cleared in the stream's order.
  void before_graph_launch(uintptr_t exec, CUstream stream);

  GraphTable& table() { return table_; }
  bool leaves() const { return leaves_.load(std::memory_order_relaxed); }
  void disable(const char* why);
  // A driver call of ours (what) returned r: unless the context is lost, graph breadcrumbs go off with one line.
  void refused(const char* what, CUresult r);

 private:
  // The leaf after node (of graph) writing 1 to slot; false when the driver refused it.
  bool add_leaf(CUgraph graph, CUgraphNode node, const GraphSlot& slot);
  // Records a kernel node of graph and adds its leaf.
  void follow(CUgraph graph, CUgraphNode kernel_node, const GraphNodeEvent& node);

  GraphTable& table_;
  std::atomic<bool> leaves_;
  std::atomic<bool> prepared_{false};
  GraphSlot discard_;  // the word the leaves of nodes without a slot write (set by prepare)
};

}  // namespace firstassert
