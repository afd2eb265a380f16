// The simulator's private contract between its three libraries. The real libcudart and libcupti reach driver
// internals through cuGetExportTable with private UUIDs; the simulator does the same with one table of its own,
// so that no simulator-only symbol is exported for the code under test to find.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>

#include <cstdint>

namespace simcuda {

// Device work that ran, as CUPTI's activity records (kernel, memcpy, memset) describe it: told by the driver to
// libcupti once the work has run, on the stream's worker thread. Timestamps are the driver's own clock (steady, ns);
// libcupti brings them onto its timestamp source, as CUPTI converts GPU timestamps.
struct DeviceActivity {
  enum class Kind : uint8_t { Kernel, Memcpy, Memset };
  Kind kind = Kind::Kernel;
  uint32_t correlation_id = 0;          // of the outermost traced API call that queued the work (0: none)
  uint32_t runtime_correlation_id = 0;  // the same when that call was a runtime one, else 0
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;               // cuStreamGetId's id of the stream
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Kernel
  const char* name = nullptr;           // mangled; lives as long as the process
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  // Memcpy and memset
  uint64_t bytes = 0;
  uint8_t copy_kind = 0;                // CUpti_ActivityMemcpyKind
  uint8_t src_kind = 0;                 // CUpti_ActivityMemoryKind
  uint8_t dst_kind = 0;                 // CUpti_ActivityMemoryKind; for a memset, the memory set
  uint32_t value = 0;                   // memset
};

// libcupti's side of device activity, installed while it records any (set_activity_sink).
struct ActivitySink {
  // On the thread queuing device work: the correlation ids the work will carry (DeviceActivity's).
  void (*queued)(uint32_t* correlation_id, uint32_t* runtime_correlation_id);
  // On the stream's worker thread, after the work ran. Must not call back into the driver.
  void (*ran)(const DeviceActivity& activity);
};

// A tool's callback sink, installed by libcupti. The driver and the runtime hand it every API ENTER/EXIT and
// resource event; libcupti decides what the subscriber asked for.
using ToolDispatch = void (*)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

struct PrivateTable {
  size_t size;
  // libcupti: attach or detach the tool sink (nullptr detaches).
  void (*set_tool_dispatch)(ToolDispatch dispatch);
  // libcudart and libcuda: the sink now installed, or nullptr when no tool listens.
  ToolDispatch (*tool_dispatch)();
  // One correlation id per traced API call, shared by both API domains as real CUPTI does.
  uint32_t (*next_correlation_id)();
  // libcudart: host stub (or cudaKernel_t) to driver function, and a function's mangled name, without tracing.
  CUfunction (*function_for_stub)(const void* host_stub);
  const char* (*function_name)(CUfunction function);
  // libcudart: the runtime's sticky-error check reads the driver's context state, untraced.
  CUresult (*context_error)();
  // libcudart: __cudaRegisterFunction binds an nvcc host stub to the kernel of that mangled name (whose body a
  // test registers with simcuda_register_kernel, before or after).
  void (*bind_host_stub)(const void* host_stub, const char* mangled_name);
  // libcudart: the calling thread's current context, untraced (the runtime binds the primary one when none is).
  CUcontext (*current_context)();
  // libcudart: what a runtime graph query gives back for a kernel node's function: its host stub, or the function
  // itself (a cudaKernel_t the runtime also accepts) when it has none.
  const void* (*host_stub_of)(CUfunction function);
  // libcupti: attach or detach (nullptr) the sink of device activity. Last, with a default, so that tables written
  // before it existed (the runtime's driverless one) still compile and leave it null.
  void (*set_activity_sink)(const ActivitySink* sink) = nullptr;
  // libcupti: a stream handle's id (cuStreamGetId's), untraced; per_thread as for the _ptsz entry points. 0 for a
  // handle that names no live stream.
  uint64_t (*stream_id)(CUstream stream, bool per_thread) = nullptr;
  // libcupti and libcudart: the device ordinal of a context (-1: not a context), and its id as CUPTI gives it
  // (contextUid, cuptiGetContextId; 0: not a context). Untraced.
  int (*context_device)(CUcontext context) = nullptr;
  uint32_t (*context_uid)(CUcontext context) = nullptr;
};

// {53494d43-5544-4150-5249-564154453031}: "SIMCUDAPRIVATE01".
inline constexpr CUuuid kPrivateTableId = {{'S', 'I', 'M', 'C', 'U', 'D', 'A', 'P', 'R', 'I', 'V', 'A', 'T', 'E',
                                            '0', '1'}};

}  // namespace simcuda
