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

// Handed to the tracker by an event source; pointers are valid only during the call.
struct LaunchEvent {
  LaunchApi api = LaunchApi::cudaLaunchKernel;
  bool per_thread_default_stream = false;  // a _ptsz entry point: stream 0 means the thread's own stream
  bool graph = false;
  uintptr_t graph_exec = 0;      // graph launches: the executable graph
  const char* kernel = nullptr;  // mangled name; nullptr for graph launches
  Dim3 grid, block;
  uint32_t shared_mem = 0;
  uintptr_t stream = 0;
  uintptr_t context = 0;
  int32_t device = -1;
  uint32_t correlation_id = 0;
  int32_t returned = 0;  // the launch call's own error: a sticky one when it ran to the fault before returning
  const uintptr_t* native_stack = nullptr;  // return addresses, innermost first (the program's frames only)
  uint8_t native_depth = 0;
  const PythonFrame* python_stack = nullptr;  // innermost first
  uint8_t python_depth = 0;
  bool python_lasting = false;  // python_stack is kept for good (python_stack_pool.h): a record may point to it
};

struct LaunchRecord {
  uint64_t seq = 0;        // 0-based, in launch order across the process
  int64_t mono_ns = 0;     // CLOCK_MONOTONIC
  int64_t wall_ns = 0;     // CLOCK_REALTIME
  int32_t thread = 0;      // kernel thread id
  int32_t device = -1;
  uintptr_t context = 0;
  uintptr_t stream = 0;
  const char* kernel = nullptr;  // interned copy of the mangled name (NameTable); nullptr for graphs
  Dim3 grid, block;
  uint32_t shared_mem = 0;
  uint32_t correlation_id = 0;
  int32_t returned = 0;  // as LaunchEvent::returned
  LaunchApi api = LaunchApi::cudaLaunchKernel;
  bool graph = false;
  bool per_thread_default_stream = false;
  // A graph launch: its executable graph. One of the graph's kernel nodes, as a replay ran it (the graph launch's
  // seq, stream and api; the node's kernel, configuration and the stacks where it was captured): its number among
  // the graph's kernel nodes (1-based; 0: not a node), their count, what its breadcrumb said, and whether it can
  // have been the one that failed.
  uintptr_t graph_exec = 0;
  uint32_t graph_node = 0;
  uint32_t graph_nodes = 0;
  GraphNodeState graph_state = GraphNodeState::unknown;
  bool graph_open = false;
  uint8_t python_depth = 0;
  uint8_t stack_depth = 0;
  // Where the launch path left the Python frames when they are kept for good (LaunchEvent::python_lasting): the ring
  // holds this pointer instead of a copy, and reading the record copies them into python.
  const PythonFrame* python_lasting = nullptr;
  PythonFrame python[kMaxPythonFrames];  // innermost first; frames past python_depth are unspecified
  uintptr_t stack[kMaxStackFrames];      // raw native stack (return addresses); past stack_depth unspecified

  LaunchRecord() : python{}, stack{} {}  // all zero, so a record made anywhere but the launch path prints cleanly
  // The launch path's: the frames' 1.3 KB are written only as deep as they are used.
  struct FramesUnset {};
  explicit LaunchRecord(FramesUnset) {}
};

}  // namespace firstassert
