// The simulator's private contract between its three libraries. The real libcudart and libcupti reach driver
// internals through cuGetExportTable with private UUIDs; the simulator does the same with one table of its own,
// so that no simulator-only symbol is exported for the code under test to find.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>

namespace simcuda {

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
};

// {53494d43-5544-4150-5249-564154453031}: "SIMCUDAPRIVATE01".
inline constexpr CUuuid kPrivateTableId = {{'S', 'I', 'M', 'C', 'U', 'D', 'A', 'P', 'R', 'I', 'V', 'A', 'T', 'E',
                                            '0', '1'}};

}  // namespace simcuda
