// What firstassert keeps about one kernel launch: small fixed fields captured on the launch path, resolved
// (demangled, symbolized) only when a report is written.
#pragma once

#include <cstdint>

namespace firstassert {

// The entry point a launch came through; graph launches are launches of a whole graph, not of one kernel.
enum class LaunchApi : uint8_t {
  cudaLaunchKernel,
  cudaLaunchKernelExC,
  cudaLaunchCooperativeKernel,
  cudaLaunchKernelNvcc,  // __cudaLaunchKernel, what nvcc 13 emits for <<<>>>
  cudaGraphLaunch,
  cuLaunchKernel,
  cuLaunchKernelEx,
  cuLaunchCooperativeKernel,
  cuGraphLaunch,
};

const char* launch_api_name(LaunchApi api);

// What a kernel node's breadcrumb said of it in the replay that failed.
enum class GraphNodeState : uint8_t { unknown, completed, not_completed };

struct Dim3 {
  uint32_t x = 0, y = 0, z = 0;
};

inline constexpr unsigned kMaxStackFrames = 64;
inline constexpr unsigned kMaxPythonFrames = 32;

// A Python frame: file and function interned (they outlive the interpreter's objects), the line at the call.
// Trivial on purpose: the launch path fills arrays of frames up to their depth and never zeroes the rest
// (PythonFrame{} is all zero).
struct PythonFrame {
  const char* file;
  const char* function;
  int32_t line;
};

// A launch's record without its frames: what the launch path fills once, in place (the event source describes the
// launch into it, the tracker adds the sequence number, time, thread and interned name) and the ring stores word by
// word, so that nothing is copied from one struct into another on the way.
struct LaunchFields {
  uint64_t seq = 0;     // 0-based, in launch order across the process
  int64_t mono_ns = 0;  // CLOCK_MONOTONIC
  int32_t thread = 0;   // kernel thread id
  int32_t device = -1;
  uintptr_t context = 0;
  uintptr_t stream = 0;
  // Interned copy of the mangled name (NameTable); nullptr for graphs. In a LaunchEvent, the name as the API gave it
  // until Tracker::record_launch interns it.
  const char* kernel = nullptr;
  Dim3 grid, block;
  uint32_t shared_mem = 0;
  uint32_t correlation_id = 0;
  int32_t returned = 0;  // the launch call's own error: a sticky one when it ran to the fault before returning
  LaunchApi api = LaunchApi::cudaLaunchKernel;
  bool graph = false;
  bool per_thread_default_stream = false;  // a _ptsz entry point: stream 0 means the thread's own stream
  uint8_t python_depth = 0;
  uint8_t stack_depth = 0;
  uintptr_t graph_exec = 0;  // a graph launch (or one of its kernel nodes): the executable graph
  // The order of launch calls across threads (Tracker::queue_mark): a launch U with 0 < U.queue_mark <=
  // X.marks_at_entry had queued its kernel and its breadcrumb before X's call began, so on one stream U's breadcrumb
  // is ahead of X. queue_mark: this call's place among the launch calls that held back what is queued after them
  // (1-based; 0: it holds back nothing: no breadcrumb followed it, or none could be queued while the context was
  // still healthy; Breadcrumbs::after_launch). marks_at_entry: how many had when this call began (0: not known).
  uint64_t queue_mark = 0;
  uint64_t marks_at_entry = 0;
  // The Python frames when they are kept for good (python_stack_pool.h): the ring holds this pointer instead of a
  // copy, and reading the record copies them into LaunchRecord::python.
  const PythonFrame* python_lasting = nullptr;
};

// Handed to the tracker by an event source, which fills it in place; the stacks' pointers are valid only during the
// call, and record_launch completes the fields (seq, time, thread, interned kernel).
struct LaunchEvent : LaunchFields {
  const uintptr_t* native_stack = nullptr;    // return addresses, innermost first (the program's frames only)
  const PythonFrame* python_stack = nullptr;  // innermost first
};

// A launch as reports read it: the fields the ring keeps, the wall time (the launch path keeps only the monotonic
// one: Tracker::with_wall_time works it out) and, for one of a graph's kernel nodes as a replay ran it (made from the
// graph records with the graph launch's seq, stream and api, the node's kernel, configuration and the stacks where
// it was captured), its number among the graph's kernel nodes (1-based; 0: not a node), their count, what its
// breadcrumb said, and whether it can have been the one that failed.
struct LaunchRecord : LaunchFields {
  int64_t wall_ns = 0;  // CLOCK_REALTIME
  uint32_t graph_node = 0;
  uint32_t graph_nodes = 0;
  GraphNodeState graph_state = GraphNodeState::unknown;
  bool graph_open = false;
  PythonFrame python[kMaxPythonFrames];  // innermost first; frames past python_depth are unspecified
  uintptr_t stack[kMaxStackFrames];      // raw native stack (return addresses); past stack_depth unspecified

  LaunchRecord() : python{}, stack{} {}  // all zero, so a record made anywhere but the launch path prints cleanly
  explicit LaunchRecord(const LaunchFields& fields) : LaunchFields(fields), python{}, stack{} {}
};

// The same launch, or the same kernel node of the same replay (a replay's nodes share their graph launch's seq).
inline bool same_launch(const LaunchRecord& a, const LaunchRecord& b) {
  return a.seq == b.seq && a.graph_node == b.graph_node;
}

}  // namespace firstassert
