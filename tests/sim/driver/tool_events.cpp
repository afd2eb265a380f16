#include "tool_events.h"

#include <cupti_activity.h>

#include <atomic>
#include <optional>

#include "driver_state.h"
#include "kernel_registry.h"
#include "device.h"
#include "device_table.h"

namespace simcuda {
namespace {

std::atomic<ToolDispatch> tool_sink{nullptr};
std::atomic<uint32_t> correlation_ids{0};
std::atomic<const ActivitySink*> activity_sink{nullptr};

void set_tool_dispatch(ToolDispatch dispatch) { tool_sink.store(dispatch, std::memory_order_release); }
void set_activity_sink(const ActivitySink* sink) { activity_sink.store(sink, std::memory_order_release); }

// The default-stream handles name the calling thread's current device's streams.
uint64_t stream_id(CUstream handle, bool per_thread) {
  Device* current = Device::current();
  const Stream* stream = current != nullptr ? current->resolve(handle, per_thread) : Device::find(handle);
  return stream != nullptr ? stream->id : 0;
}
ToolDispatch tool_dispatch() { return tool_sink.load(std::memory_order_acquire); }
uint32_t next_correlation_id() { return correlation_ids.fetch_add(1, std::memory_order_relaxed) + 1; }

CUfunction function_for_stub(const void* host_stub) { return reinterpret_cast<CUfunction>(kernel_by_stub(host_stub)); }

const char* function_name(CUfunction function) {
  if (!is_kernel(function)) return nullptr;
  return reinterpret_cast<Kernel*>(function)->name.c_str();
}

// The current context's; a thread with none current is on device 0, as the runtime puts it there.
CUresult context_error() {
  if (Device* current = Device::current()) return current->observe_error();
  return visible_device_count() > 0 ? Device::of(0).observe_error() : CUDA_SUCCESS;
}

int context_device_of(CUcontext context) { return simcuda::context_device(context); }
uint32_t context_uid_of(CUcontext context) { return simcuda::context_uid(context); }

const void* host_stub_of(CUfunction function) {
  if (!is_kernel(function)) return nullptr;
  const Kernel* kernel = reinterpret_cast<const Kernel*>(function);
  return kernel->host_stub != nullptr ? kernel->host_stub : kernel;
}

void bind_stub(const void* host_stub, const char* name) {
  if (host_stub != nullptr && name != nullptr) bind_host_stub(host_stub, name);
}

void emit_resource(CUpti_CallbackIdResource cbid, CUcontext context, CUstream stream) {
  ToolDispatch dispatch = tool_dispatch();
  if (dispatch == nullptr) return;
  CUpti_ResourceData data{};
  data.context = context;
  data.resourceHandle.stream = stream;
  dispatch(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

// Where CUPTI says a copy's end lies: device memory, page-locked host memory (allocated or registered), or the
// program's own pageable memory.
uint8_t memory_kind_of(const void* pointer) {
  std::optional<AllocationInfo> allocation = allocation_of(pointer);
  if (!allocation) return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  return allocation->kind == Memory::Device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
}

uint8_t copy_kind_of(uint8_t src, uint8_t dst) {
  const bool from_device = src == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  const bool to_device = dst == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if (from_device) return to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  return to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

}  // namespace

bool device_activity_wanted() { return activity_sink.load(std::memory_order_relaxed) != nullptr; }

void tag_device_activity(Work& work, const Stream& stream) {
  const ActivitySink* sink = activity_sink.load(std::memory_order_acquire);
  if (sink == nullptr) return;
  switch (work.kind) {
    case Work::Kind::Kernel:
      break;
    case Work::Kind::Copy:
      work.activity.src_kind = memory_kind_of(work.source);
      work.activity.dst_kind = memory_kind_of(work.address);
      work.activity.copy_kind = copy_kind_of(work.activity.src_kind, work.activity.dst_kind);
      break;
    case Work::Kind::Fill:
      work.activity.dst_kind = memory_kind_of(work.address);
      break;
    default:
      return;  // markers, stream memory operations and host functions have no activity record here
  }
  work.activity.wanted = true;
  work.activity.stream_id = static_cast<uint32_t>(stream.id);
  work.activity.device_id = static_cast<uint32_t>(stream.device->ordinal());
  sink->queued(&work.activity.correlation_id, &work.activity.runtime_correlation_id);
}

void emit_device_activity(const Work& work, int64_t start_ns, int64_t end_ns) {
  const ActivitySink* sink = activity_sink.load(std::memory_order_acquire);
  if (sink == nullptr || !work.activity.wanted) return;  // libcupti stopped recording meanwhile
  DeviceActivity a;
  a.correlation_id = work.activity.correlation_id;
  a.runtime_correlation_id = work.activity.runtime_correlation_id;
  a.device_id = work.activity.device_id;
  a.context_id = work.activity.device_id + 1;  // the device's primary context's id (contextUid in callbacks)
  a.stream_id = work.activity.stream_id;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  switch (work.kind) {
    case Work::Kind::Kernel:
      a.kind = DeviceActivity::Kind::Kernel;
      a.name = work.kernel != nullptr ? work.kernel->name.c_str() : nullptr;
      a.grid[0] = work.grid.x, a.grid[1] = work.grid.y, a.grid[2] = work.grid.z;
      a.block[0] = work.block.x, a.block[1] = work.block.y, a.block[2] = work.block.z;
      break;
    case Work::Kind::Copy:
      a.kind = DeviceActivity::Kind::Memcpy;
      a.bytes = work.bytes;
      a.copy_kind = work.activity.copy_kind;
      a.src_kind = work.activity.src_kind;
      a.dst_kind = work.activity.dst_kind;
      break;
    case Work::Kind::Fill:
      a.kind = DeviceActivity::Kind::Memset;
      a.bytes = work.bytes;
      a.dst_kind = work.activity.dst_kind;
      a.value = static_cast<uint32_t>(work.value);
      break;
    default:
      return;
  }
  sink->ran(a);
}

void emit_synchronize_event(CUpti_CallbackIdSync cbid, CUstream stream) {
  ToolDispatch dispatch = tool_dispatch();
  if (dispatch == nullptr) return;
  CUpti_SynchronizeData data{};
  data.context = current_context();
  data.stream = stream;
  dispatch(CUPTI_CB_DOMAIN_SYNCHRONIZE, cbid, &data);
}

const PrivateTable& private_table() {
  static const PrivateTable table{sizeof(PrivateTable), set_tool_dispatch, tool_dispatch, next_correlation_id,
                                  function_for_stub,    function_name,     context_error,
                                  bind_stub,            current_context,   host_stub_of,
                                  set_activity_sink,    stream_id,         context_device_of,
                                  context_uid_of};
  return table;
}

void emit_context_resource_event(CUpti_CallbackIdResource cbid, CUcontext context) {
  emit_resource(cbid, context, nullptr);
}

void emit_stream_resource_event(CUpti_CallbackIdResource cbid, CUstream stream) {
  emit_resource(cbid, current_context(), stream);
}

}  // namespace simcuda
