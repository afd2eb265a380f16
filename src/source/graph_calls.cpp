#include "graph_calls.h"

#include <cuda.h>

#include <optional>

#include "call_guards.h"
#include "core/stream_key.h"
#include "launch_stacks.h"
#include "observer.h"

namespace firstassert::source {
namespace {

// A kernel node being made: what the launch (or the node's parameters) and the stacks say of it.
GraphNodeEvent node_event(Tracker& tracker, const LaunchEvent& launch) {
  GraphNodeEvent node;
  node.kernel = launch.kernel != nullptr ? tracker.intern(launch.kernel) : nullptr;
  node.grid = launch.grid;
  node.block = launch.block;
  node.shared_mem = launch.shared_mem;
  node.native_stack = launch.native_stack;
  node.native_depth = launch.stack_depth;
  node.python_stack = launch.python_stack;
  node.python_depth = launch.python_depth;
  return node;
}

// A plain function, as added_kernel_node takes it: the recording's tracker is set before recording starts.
const char* intern_name(const char* name) { return current_recording().tracker->intern(name); }

}  // namespace

void after_graph_call(GraphBreadcrumbs& graphs, const GraphCall& call) {
  GraphTable& table = graphs.table();
  switch (call.kind) {
    case GraphCallKind::instantiate:
    case GraphCallKind::update: {
      std::optional<size_t> kernels;
      {
        OurCall guard;
        kernels = graphs.kernel_nodes_of(reinterpret_cast<CUgraph>(call.graph));
      }
      table.instantiated(call.exec, call.graph, kernels);
      break;
    }
    case GraphCallKind::clone:
      table.cloned(call.clone, call.graph);
      break;
    case GraphCallKind::destroy_graph:
      table.graph_destroyed(call.graph);
      break;
    case GraphCallKind::destroy_exec:
      table.exec_destroyed(call.exec);
      break;
    case GraphCallKind::add_kernel_node: {
      LaunchEvent at;  // only its stacks: where the program added the node
      LaunchStacks stacks;
      capture_stacks(at, stacks);
      OurCall guard;
      graphs.added_kernel_node(reinterpret_cast<CUgraph>(call.graph), reinterpret_cast<CUgraphNode>(call.node),
                               call.deps, call.dep_count, node_event(*current_recording().tracker, at), intern_name);
      break;
    }
  }
}

void launch_captured(GraphBreadcrumbs& graphs, Tracker& tracker, const LaunchEvent& launch, uintptr_t stream_handle) {
  OurCall guard;
  graphs.captured_launch(reinterpret_cast<CUstream>(stream_handle),
                         stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id(), launch.device),
                         node_event(tracker, launch));
}

}  // namespace firstassert::source
