#include "graph_breadcrumbs.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/cuda_errors.h"
#include "core/log.h"
#include "driver_calls.h"

namespace firstassert {

void GraphBreadcrumbs::disable(const char* why) {
  table_.distrust_slots();
  if (leaves_.exchange(false)) say("CUDA graph breadcrumbs are off: %s", why);
}

void GraphBreadcrumbs::refused(const char* what, CUresult r) {
  // After any sticky error the context is lost: nothing more is asked of it, and the slots keep what the failed
  // replay wrote.
  if (is_sticky_error(r)) return;
  char why[160];
  std::snprintf(why, sizeof why, "%s failed (%d)", what, static_cast<int>(r));
  disable(why);
}

void GraphBreadcrumbs::prepare() {
  if (!leaves() || prepared_.load(std::memory_order_acquire)) return;
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr) return;
  if (prepared_.exchange(true)) return;
  if (calls->mem_host_alloc == nullptr || calls->mem_host_get_device_pointer == nullptr ||
      calls->stream_get_capture_info == nullptr || calls->graph_add_batch_mem_op_node == nullptr ||
      calls->memset_d8_async == nullptr) {
    disable("the driver lacks cuMemHostAlloc, cuStreamGetCaptureInfo, cuGraphAddBatchMemOpNode or cuMemsetD8Async");
    return;
  }
  void* host = nullptr;
  CUdeviceptr device = 0;
  // kMaxNodes slots, then the discard word.
  CUresult r = map_host_memory(*calls, (GraphTable::kMaxNodes + 1) * sizeof(uint32_t), &host, &device);
  if (r != CUDA_SUCCESS) {
    refused("allocating host-mapped memory for them (cuMemHostAlloc/cuMemHostGetDevicePointer)", r);
    return;
  }
  // Zeroed before the device can write it (pinned memory comes as it was left); every replay clears its own.
  auto* slots = static_cast<volatile uint32_t*>(host);
  for (size_t i = 0; i <= GraphTable::kMaxNodes; ++i) slots[i] = 0;
  discard_ = {slots + GraphTable::kMaxNodes, device + GraphTable::kMaxNodes * sizeof(uint32_t)};
  table_.set_slot_memory(slots, device);
}

bool GraphBreadcrumbs::add_leaf(CUgraph graph, CUgraphNode node, const GraphSlot& slot) {
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = slot.device;
  op.writeValue.value = 1;
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  const DriverCalls* calls = driver_calls();
  // The context the operation runs in: the calling thread's, the one the kernel node was made in.
  if (calls->ctx_get_current != nullptr) calls->ctx_get_current(&params.ctx);
  params.count = 1;
  params.paramArray = &op;
  CUgraphNode leaf = nullptr;
  CUresult r = calls->graph_add_batch_mem_op_node(&leaf, graph, &node, 1, &params);
  if (r == CUDA_SUCCESS) return true;
  refused("cuGraphAddBatchMemOpNode", r);
  return false;
}

void GraphBreadcrumbs::captured_launch(CUstream stream, uint64_t stream_key, GraphNodeEvent node) {
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->stream_get_capture_info == nullptr) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;  // asked for: without it, dependencies with edge data are a lossy query
  size_t count = 0;
  if (calls->stream_get_capture_info(stream, &status, &id, &graph, &deps, &edges, &count) != CUDA_SUCCESS ||
      status != CU_STREAM_CAPTURE_STATUS_ACTIVE || graph == nullptr)
    return;
  // Just after the launch, the stream's one dependency is the kernel node it made.
  node.node = count == 1 ? reinterpret_cast<uintptr_t>(deps[0]) : 0;
  node.chain = (id * 0x9e3779b97f4a7c15ull) ^ stream_key;
  if (node.chain == 0) node.chain = 1;
  if (count == 1) follow(graph, deps[0], node);
}

void GraphBreadcrumbs::follow(CUgraph graph, CUgraphNode kernel_node, const GraphNodeEvent& node) {
  auto g = reinterpret_cast<uintptr_t>(graph);
  std::optional<GraphSlot> slot = table_.add_node(g, node);
  if (!leaves() || discard_.host == nullptr) {
    if (slot) table_.slot_unused(g, *slot);
    return;
  }
  // Every kernel node gets its leaf while breadcrumbs are on, one without a slot too (it writes the discard word):
  // two captures of the same work keep the same topology, so cudaGraphExecUpdate between them still succeeds.
  if (!add_leaf(graph, kernel_node, slot ? *slot : discard_) && slot) table_.slot_unused(g, *slot);
}

void GraphBreadcrumbs::added_kernel_node(CUgraph graph, CUgraphNode handle, const CUgraphNode* deps,
                                         size_t dep_count, GraphNodeEvent node, const char* (*intern)(const char*)) {
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->graph_kernel_node_get_params == nullptr || handle == nullptr) return;
  CUDA_KERNEL_NODE_PARAMS params{};
  if (calls->graph_kernel_node_get_params(handle, &params) != CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (params.func != nullptr && calls->func_get_name != nullptr) {
    if (calls->func_get_name(&name, params.func) != CUDA_SUCCESS) name = nullptr;
  } else if (params.kern != nullptr && calls->kernel_get_name != nullptr) {
    if (calls->kernel_get_name(&name, params.kern) != CUDA_SUCCESS) name = nullptr;
  }
  node.kernel = name != nullptr ? intern(name) : nullptr;
  node.grid = {params.gridDimX, params.gridDimY, params.gridDimZ};
  node.block = {params.blockDimX, params.blockDimY, params.blockDimZ};
  node.shared_mem = params.sharedMemBytes;
  node.node = reinterpret_cast<uintptr_t>(handle);
  node.deps = reinterpret_cast<const uintptr_t*>(deps);
  node.dep_count = deps != nullptr ? dep_count : 0;
  follow(graph, handle, node);
}

std::optional<size_t> GraphBreadcrumbs::kernel_nodes_of(CUgraph graph) const {
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->graph_get_nodes == nullptr || calls->graph_node_get_type == nullptr) return std::nullopt;
  size_t count = 0;
  if (calls->graph_get_nodes(graph, nullptr, &count) != CUDA_SUCCESS) return std::nullopt;
  std::vector<CUgraphNode> nodes(count);
  if (count > 0 && calls->graph_get_nodes(graph, nodes.data(), &count) != CUDA_SUCCESS) return std::nullopt;
  size_t kernels = 0;
  for (size_t i = 0; i < count && i < nodes.size(); ++i) {
    CUgraphNodeType type;
    if (calls->graph_node_get_type(nodes[i], &type) != CUDA_SUCCESS) return std::nullopt;
    if (type == CU_GRAPH_NODE_TYPE_GRAPH || type == CU_GRAPH_NODE_TYPE_CONDITIONAL) return SIZE_MAX;
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) ++kernels;
  }
  return kernels;
}

void GraphBreadcrumbs::before_graph_launch(uintptr_t exec, CUstream stream) {
  if (!leaves()) return;
  GraphTable::Resets resets = table_.resets_for(exec);
  if (resets.begin == resets.end) return;
  const DriverCalls* calls = driver_calls();
  for (const SlotReset* r = resets.begin; r != resets.end; ++r) {
    CUresult result = calls->memset_d8_async(r->device, 0, r->bytes, stream);
    if (result != CUDA_SUCCESS) {
      refused("cuMemsetD8Async, clearing them before a replay,", result);
      return;
    }
  }
}

}  // namespace firstassert
