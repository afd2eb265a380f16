#include "tool_events.h"

#include <atomic>

#include "driver_state.h"
#include "kernel_registry.h"
#include "device.h"

namespace simcuda {
namespace {

std::atomic<ToolDispatch> tool_sink{nullptr};
std::atomic<uint32_t> correlation_ids{0};

void set_tool_dispatch(ToolDispatch dispatch) { tool_sink.store(dispatch, std::memory_order_release); }
ToolDispatch tool_dispatch() { return tool_sink.load(std::memory_order_acquire); }
uint32_t next_correlation_id() { return correlation_ids.fetch_add(1, std::memory_order_relaxed) + 1; }

CUfunction function_for_stub(const void* host_stub) { return reinterpret_cast<CUfunction>(kernel_by_stub(host_stub)); }

const char* function_name(CUfunction function) {
  if (!is_kernel(function)) return nullptr;
  return reinterpret_cast<Kernel*>(function)->name.c_str();
}

CUresult context_error() { return Device::get().observe_error(); }

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

}  // namespace

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
                                  bind_stub,            current_context,   host_stub_of};
  return table;
}

void emit_context_resource_event(CUpti_CallbackIdResource cbid, CUcontext context) {
  emit_resource(cbid, context, nullptr);
}

void emit_stream_resource_event(CUpti_CallbackIdResource cbid, CUstream stream) {
  emit_resource(cbid, current_context(), stream);
}

}  // namespace simcuda
