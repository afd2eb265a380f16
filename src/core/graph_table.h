// What firstassert knows of the CUDA graphs a program builds: each graph's kernel nodes (kernel, launch
// configuration, and the host stacks where the program captured or added them), which executable graphs were
// instantiated from which graph, and each kernel node's breadcrumb slot: a 32-bit word of host-mapped memory that a
// leaf node after the kernel node sets to 1 when it completed, cleared before every replay. It knows nothing of CUDA:
// handles are numbers, slots are addresses the device layer (device/graph_breadcrumbs) hands it.
//
// Bounded: at most kMaxNodes kernel nodes are kept over all live graphs and executable graphs (beyond, nodes are not
// recorded, and the states of their graph read unknown); a destroyed graph frees its records, an executable graph keeps a
// copy of what it was instantiated from for as long as it lives (PyTorch destroys the graph right after instantiating).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "launch_record.h"

namespace firstassert {

// A kernel node, as the source saw it being made.
struct GraphNodeEvent {
  const char* kernel = nullptr;  // interned
  Dim3 grid, block;
  uint32_t shared_mem = 0;
  const uintptr_t* native_stack = nullptr;  // innermost first
  uint8_t native_depth = 0;
  const PythonFrame* python_stack = nullptr;
  uint8_t python_depth = 0;
  uintptr_t node = 0;  // its CUgraphNode
  // The kernel nodes it depends on: for a captured one, the kernel captured before it in the same capture and stream
  // (chain); for one added node by node, its dependencies (deps).
  uint64_t chain = 0;  // capture id and stream, hashed; 0: not captured
  const uintptr_t* deps = nullptr;
  size_t dep_count = 0;
};

// Where a kernel node's breadcrumb lands: the device writes `device`, the host reads `host`.
struct GraphSlot {
  volatile uint32_t* host = nullptr;
  uint64_t device = 0;
};

// One stream-ordered clear of slots before a replay.
struct SlotReset {
  uint64_t device = 0;
  uint32_t bytes = 0;
};

class GraphTable {
 public:
  static constexpr size_t kMaxNodes = 32768;
  static constexpr size_t kMaxExecs = 4096;
  // A graph's slots come in runs, each cleared by one memset per replay: 512 runs, so as many graphs (with their
  // clones and executable graphs) have breadcrumbs at once; a graph of n kernel nodes costs n/64 clears a replay.
  static constexpr uint32_t kSlotsPerChunk = 64;

  // The slot memory, given once (kMaxNodes words); until then nodes get no slot.
  void set_slot_memory(volatile uint32_t* host, uint64_t device);
  bool has_slot_memory() const { return slot_host_ != nullptr; }

  // A kernel node made in graph; returns its slot (nullopt: none, the node is recorded without one or not at all).
  std::optional<GraphSlot> add_node(uintptr_t graph, const GraphNodeEvent& node);
  // The slots can no longer be trusted (the breadcrumbs were turned off: replays are not cleared): every node's
  // state is unknown from now on.
  void distrust_slots() { slots_trusted_.store(false, std::memory_order_release); }
  // The node of graph given slot will never have it written (no leaf could be added): its state is unknown.
  void slot_unused(uintptr_t graph, const GraphSlot& slot);
  // cudaGraphInstantiate* succeeded: exec runs what graph holds now. kernel_nodes: how many kernel nodes the driver
  // says graph has; when it is not the number recorded, no state of exec's nodes can be trusted.
  void instantiated(uintptr_t exec, uintptr_t graph, std::optional<size_t> kernel_nodes = std::nullopt);
  // cudaGraphExecUpdate succeeded: exec now runs graph's nodes with their parameters (and leaves).
  void updated(uintptr_t exec, uintptr_t graph, std::optional<size_t> kernel_nodes = std::nullopt) {
    instantiated(exec, graph, kernel_nodes);
  }
  // cudaGraphClone: the clone holds the same nodes, leaves included (they write the same slots).
  void cloned(uintptr_t clone, uintptr_t original);
  void graph_destroyed(uintptr_t graph);
  void exec_destroyed(uintptr_t exec);

  // The clears to queue before a launch of exec (empty when it has no slots). Lock-free: on every graph launch.
  // The span is valid until exec is updated or destroyed.
  struct Resets {
    const SlotReset* begin = nullptr;
    const SlotReset* end = nullptr;
  };
  Resets resets_for(uintptr_t exec) const;

  // exec's kernel nodes as launch records (kernel, configuration, stacks, node number and count) with what their
  // slots say now, and whether each can have been the one that failed: not completed while every kernel node it is
  // known to depend on completed (all of them when no slot says anything). Empty when exec is unknown.
  std::vector<LaunchRecord> nodes_of(uintptr_t exec) const;

  // How many kernel nodes are kept, for tests and bounds.
  size_t node_count() const;

 private:
  struct Node {
    const char* kernel = nullptr;
    Dim3 grid, block;
    uint32_t shared_mem = 0;
    int32_t thread = 0;
    int64_t wall_ns = 0;
    std::vector<uintptr_t> native;
    std::vector<PythonFrame> python;
    uintptr_t handle = 0;
    uint64_t chain = 0;
    std::vector<uint32_t> after;  // indices of the kernel nodes it depends on
    uint32_t slot = kNoSlot;
  };
  static constexpr uint32_t kNoSlot = ~uint32_t{0};

  // The slot runs a graph (and every copy of it: clones, executable graphs) uses; returned to the table when the
  // last copy goes, which is always under mutex_ (copies are made and dropped only there).
  struct Chunks {
    GraphTable* table = nullptr;
    std::vector<uint32_t> ids;
    uint32_t used_in_last = kSlotsPerChunk;  // slots taken in ids.back()
    ~Chunks();
  };
  struct Shape {
    std::vector<Node> nodes;  // kernel nodes in the order they were made
    std::shared_ptr<Chunks> chunks;
    std::vector<SlotReset> resets;  // filled when an exec is made of it
    bool incomplete = false;        // kernel nodes were made that are not kept: no state can be trusted
    bool cleared = true;            // an executable graph's: its replays clear the slots (it is in the index)
  };
  struct ExecEntry {
    std::atomic<uintptr_t> exec{0};  // 0: free
    std::atomic<const Shape*> shape{nullptr};
  };

  uint32_t take_slot_locked(Shape& shape);
  std::unique_ptr<Shape> copy_locked(const Shape& shape);  // nullptr when the copy would pass kMaxNodes
  void drop_locked(std::unique_ptr<Shape> shape);
  bool index_exec_locked(uintptr_t exec, const Shape* shape);  // false: the index is full
  void fill_resets(Shape& shape) const;

  mutable std::mutex mutex_;
  // Declared before the maps: the shapes destroyed with the table return their runs here.
  std::deque<uint32_t> free_chunks_;  // oldest freed first
  uint32_t next_chunk_ = 0;
  std::map<uintptr_t, std::unique_ptr<Shape>> graphs_;
  std::map<uintptr_t, std::unique_ptr<Shape>> execs_;  // each its own copy: exec_index_ points into them
  ExecEntry exec_index_[kMaxExecs];
  std::atomic<size_t> exec_used_{0};  // entries below this were ever used (written under mutex_)
  size_t kept_nodes_ = 0;  // over graphs_ and execs_, each copy counted
  volatile uint32_t* slot_host_ = nullptr;
  uint64_t slot_device_ = 0;
  bool said_full_ = false;
  std::atomic<bool> slots_trusted_{true};
};

}  // namespace firstassert
