// CUDA graphs as the program builds them: what a graph call that succeeded (instantiate, update, clone, destroy, a
// kernel node added) changes in the graph records, and the kernel node a launch into a capturing stream makes. None
// of this is on the path of a launch that runs; a graph's launch is (observer.cpp).
#pragma once

#include <cstdint>

#include "core/launch_record.h"
#include "core/tracker.h"
#include "device/graph_breadcrumbs.h"
#include "source/api_table.h"

namespace firstassert::source {

// After a graph call returned success: its graphs, executable graphs and kernel nodes recorded (a kernel node with
// the stacks of the thread adding it), with kernel names interned by the tracker.
void after_graph_call(GraphBreadcrumbs& graphs, const GraphCall& call);

// A launch into a capturing stream (stream_handle: the stream as the driver names it): a kernel node of the graph
// being captured, with the launch's stacks, rather than a launch.
void launch_captured(GraphBreadcrumbs& graphs, Tracker& tracker, const LaunchEvent& launch, uintptr_t stream_handle);

}  // namespace firstassert::source
