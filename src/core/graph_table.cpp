#include "graph_table.h"

#include <algorithm>

#include "clock.h"
#include "log.h"

namespace firstassert {

GraphTable::Chunks::~Chunks() {
  // Under table->mutex_ (see Chunks): the runs are free again for the next graph.
  table->free_chunks_.insert(table->free_chunks_.end(), ids.begin(), ids.end());
}

void GraphTable::set_slot_memory(volatile uint32_t* host, uint64_t device) {
  std::lock_guard lock(mutex_);
  if (slot_host_ != nullptr) return;
  slot_host_ = host;
  slot_device_ = device;
}

uint32_t GraphTable::take_slot_locked(Shape& shape) {
  if (slot_host_ == nullptr) return kNoSlot;
  if (!shape.chunks) shape.chunks = std::make_shared<Chunks>(Chunks{this, {}, kSlotsPerChunk});
  Chunks& chunks = *shape.chunks;
  if (chunks.used_in_last == kSlotsPerChunk) {
    // A destroyed executable graph's replay may still be running (CUDA frees it when the replay completes) and
    // write its slots: never-used runs first, then the longest freed.
    uint32_t id;
    if (next_chunk_ < kMaxNodes / kSlotsPerChunk) {
      id = next_chunk_++;
    } else if (!free_chunks_.empty()) {
      id = free_chunks_.front();
      free_chunks_.pop_front();
    } else {
      return kNoSlot;
    }
    chunks.ids.push_back(id);
    chunks.used_in_last = 0;
  }
  // Not written here: the device may write it (see above), and every replay clears it first.
  return chunks.ids.back() * kSlotsPerChunk + chunks.used_in_last++;
}

std::optional<GraphSlot> GraphTable::add_node(uintptr_t graph, const GraphNodeEvent& event) {
  if (graph == 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  std::unique_ptr<Shape>& shape = graphs_[graph];
  if (!shape) shape = std::make_unique<Shape>();
  if (kept_nodes_ >= kMaxNodes) {
    shape->incomplete = true;
    if (!said_full_) {
      said_full_ = true;
      say("CUDA graphs: more than %zu kernel nodes are alive; the nodes of graphs made from now on are not named",
          kMaxNodes);
    }
    return std::nullopt;
  }
  Node node;
  node.kernel = event.kernel;
  node.grid = event.grid;
  node.block = event.block;
  node.shared_mem = event.shared_mem;
  node.thread = current_thread_id();
  node.wall_ns = wall_ns();
  node.native.assign(event.native_stack, event.native_stack + event.native_depth);
  node.python.assign(event.python_stack, event.python_stack + event.python_depth);
  node.handle = event.node;
  node.chain = event.chain;
  auto index_of = [&](uintptr_t handle) -> std::optional<uint32_t> {
    for (size_t i = shape->nodes.size(); i-- > 0;) {
      if (handle != 0 && shape->nodes[i].handle == handle) return static_cast<uint32_t>(i);
    }
    return std::nullopt;
  };
  if (event.chain != 0) {
    // The kernel captured before it in the same capture and stream: the newest of that chain.
    for (size_t i = shape->nodes.size(); i-- > 0;) {
      if (shape->nodes[i].chain == event.chain) {
        node.after.push_back(static_cast<uint32_t>(i));
        break;
      }
    }
  }
  for (size_t i = 0; i < event.dep_count; ++i) {
    if (std::optional<uint32_t> dep = index_of(event.deps[i])) node.after.push_back(*dep);
  }
  node.slot = take_slot_locked(*shape);
  shape->nodes.push_back(std::move(node));
  ++kept_nodes_;
  uint32_t slot = shape->nodes.back().slot;
  if (slot == kNoSlot) return std::nullopt;
  return GraphSlot{slot_host_ + slot, slot_device_ + uint64_t{slot} * sizeof(uint32_t)};
}

void GraphTable::slot_unused(uintptr_t graph, const GraphSlot& slot) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end() || slot_host_ == nullptr) return;
  auto index = static_cast<uint32_t>(slot.host - slot_host_);
  for (Node& n : it->second->nodes) {
    if (n.slot == index) n.slot = kNoSlot;
  }
}

std::unique_ptr<GraphTable::Shape> GraphTable::copy_locked(const Shape& shape) {
  if (kept_nodes_ + shape.nodes.size() > kMaxNodes) return nullptr;
  auto copy = std::make_unique<Shape>(shape);
  kept_nodes_ += copy->nodes.size();
  return copy;
}

void GraphTable::drop_locked(std::unique_ptr<Shape> shape) {
  if (shape) kept_nodes_ -= shape->nodes.size();
}

void GraphTable::fill_resets(Shape& shape) const {
  shape.resets.clear();
  if (!shape.chunks) return;
  const Chunks& chunks = *shape.chunks;
  for (size_t i = 0; i < chunks.ids.size(); ++i) {
    uint32_t used = i + 1 == chunks.ids.size() ? chunks.used_in_last : kSlotsPerChunk;
    if (used == 0) continue;
    uint64_t first = uint64_t{chunks.ids[i]} * kSlotsPerChunk;
    SlotReset run{slot_device_ + first * sizeof(uint32_t), used * static_cast<uint32_t>(sizeof(uint32_t))};
    // Runs that follow each other in memory are cleared by one memset.
    if (!shape.resets.empty() && shape.resets.back().device + shape.resets.back().bytes == run.device) {
      shape.resets.back().bytes += run.bytes;
    } else {
      shape.resets.push_back(run);
    }
  }
}

bool GraphTable::index_exec_locked(uintptr_t exec, const Shape* shape) {
  ExecEntry* free_entry = nullptr;
  for (ExecEntry& e : exec_index_) {
    uintptr_t seen = e.exec.load(std::memory_order_relaxed);
    if (seen == exec) {
      e.shape.store(shape, std::memory_order_release);
      if (shape == nullptr) e.exec.store(0, std::memory_order_release);
      return true;
    }
    if (seen == 0 && free_entry == nullptr) free_entry = &e;
  }
  if (shape == nullptr) return true;
  if (free_entry == nullptr) return false;  // full: its replays are not cleared, so its nodes read unknown
  free_entry->shape.store(shape, std::memory_order_release);
  free_entry->exec.store(exec, std::memory_order_release);
  auto used = static_cast<size_t>(free_entry - exec_index_) + 1;
  if (used > exec_used_.load(std::memory_order_relaxed)) exec_used_.store(used, std::memory_order_release);
  return true;
}

void GraphTable::instantiated(uintptr_t exec, uintptr_t graph, std::optional<size_t> kernel_nodes) {
  if (exec == 0) return;
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  std::unique_ptr<Shape> copy = it != graphs_.end() ? copy_locked(*it->second) : nullptr;
  if (copy) {
    fill_resets(*copy);
    if (kernel_nodes && *kernel_nodes != copy->nodes.size()) copy->incomplete = true;
  }
  // The old shape stays readable until the index no longer names it.
  bool indexed = index_exec_locked(exec, copy.get());
  if (copy) copy->cleared = indexed;
  auto old = execs_.find(exec);
  if (old != execs_.end()) {
    drop_locked(std::move(old->second));
    execs_.erase(old);
  }
  if (copy) execs_.emplace(exec, std::move(copy));
}

void GraphTable::cloned(uintptr_t clone, uintptr_t original) {
  if (clone == 0) return;
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(original);
  if (it == graphs_.end()) return;
  std::unique_ptr<Shape> copy = copy_locked(*it->second);
  if (!copy) return;
  auto old = graphs_.find(clone);
  if (old != graphs_.end()) {
    drop_locked(std::move(old->second));
    graphs_.erase(old);
  }
  graphs_.emplace(clone, std::move(copy));
}

void GraphTable::graph_destroyed(uintptr_t graph) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;
  drop_locked(std::move(it->second));
  graphs_.erase(it);
}

void GraphTable::exec_destroyed(uintptr_t exec) {
  std::lock_guard lock(mutex_);
  index_exec_locked(exec, nullptr);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  drop_locked(std::move(it->second));
  execs_.erase(it);
}

GraphTable::Resets GraphTable::resets_for(uintptr_t exec) const {
  if (exec == 0) return {};
  // Only as far as entries were ever used: a launch of a graph without recorded nodes scans no further.
  size_t used = exec_used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; ++i) {
    const ExecEntry& e = exec_index_[i];
    uintptr_t seen = e.exec.load(std::memory_order_acquire);
    if (seen != exec) continue;
    const Shape* shape = e.shape.load(std::memory_order_acquire);
    if (shape == nullptr || shape->resets.empty()) return {};
    return {shape->resets.data(), shape->resets.data() + shape->resets.size()};
  }
  return {};
}

std::vector<LaunchRecord> GraphTable::nodes_of(uintptr_t exec) const {
  std::vector<LaunchRecord> out;
  std::lock_guard lock(mutex_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return out;
  const Shape& shape = *it->second;
  std::vector<GraphNodeState> states;
  // Slots say something only of replays that cleared them first, of a graph whose every kernel node is kept.
  bool trusted = slots_trusted_.load(std::memory_order_acquire) && shape.cleared && !shape.incomplete;
  for (const Node& n : shape.nodes) {
    GraphNodeState s = GraphNodeState::unknown;
    if (trusted && n.slot != kNoSlot) s = slot_host_[n.slot] == 1 ? GraphNodeState::completed : GraphNodeState::not_completed;
    states.push_back(s);
  }
  for (size_t i = 0; i < shape.nodes.size(); ++i) {
    const Node& n = shape.nodes[i];
    LaunchRecord r;
    r.kernel = n.kernel;
    r.grid = n.grid;
    r.block = n.block;
    r.shared_mem = n.shared_mem;
    r.thread = n.thread;
    r.wall_ns = n.wall_ns;
    r.stack_depth = static_cast<uint8_t>(std::min<size_t>(n.native.size(), kMaxStackFrames));
    std::copy_n(n.native.begin(), r.stack_depth, r.stack);
    r.python_depth = static_cast<uint8_t>(std::min<size_t>(n.python.size(), kMaxPythonFrames));
    std::copy_n(n.python.begin(), r.python_depth, r.python);
    r.graph = true;
    r.graph_exec = exec;
    r.graph_node = static_cast<uint32_t>(i + 1);
    r.graph_nodes = static_cast<uint32_t>(shape.nodes.size());
    r.graph_state = states[i];
    // It can have failed unless it completed, or a kernel node it waits for did not.
    r.graph_open = states[i] != GraphNodeState::completed &&
                   std::none_of(n.after.begin(), n.after.end(),
                                [&](uint32_t dep) { return states[dep] == GraphNodeState::not_completed; });
    out.push_back(r);
  }
  return out;
}

size_t GraphTable::node_count() const {
  std::lock_guard lock(mutex_);
  return kept_nodes_;
}

}  // namespace firstassert
