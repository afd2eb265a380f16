// How the simulated runtime reaches the driver, as NVIDIA's does: dlopen("libcuda.so.1"), then every entry point
// through cuGetProcAddress (twice: the legacy-stream and the per-thread-default-stream variants), plus the private
// export table. Nothing here is linked at build time.
#pragma once

#include <cuda.h>

#include "../common/private_table.h"

namespace simcuda::runtime {

// X(member, base name, a symbol whose type the entry point has)
#define SIMCUDA_RUNTIME_DRIVER_ENTRIES(X)                                     \
  X(init, "cuInit", cuInit)                                                  \
  X(driver_get_version, "cuDriverGetVersion", cuDriverGetVersion)            \
  X(device_get_count, "cuDeviceGetCount", cuDeviceGetCount)                  \
  X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain) \
  X(ctx_get_current, "cuCtxGetCurrent", cuCtxGetCurrent)                     \
  X(ctx_set_current, "cuCtxSetCurrent", cuCtxSetCurrent)                     \
  X(ctx_synchronize, "cuCtxSynchronize", cuCtxSynchronize)                   \
  X(launch_kernel, "cuLaunchKernel", cuLaunchKernel)                         \
  X(launch_kernel_ex, "cuLaunchKernelEx", cuLaunchKernelEx)                  \
  X(launch_cooperative_kernel, "cuLaunchCooperativeKernel", cuLaunchCooperativeKernel) \
  X(launch_host_func, "cuLaunchHostFunc", cuLaunchHostFunc)                  \
  X(graph_launch, "cuGraphLaunch", cuGraphLaunch)                            \
  X(graph_instantiate, "cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags) \
  X(graph_instantiate_with_params, "cuGraphInstantiateWithParams", cuGraphInstantiateWithParams) \
  X(graph_destroy, "cuGraphDestroy", cuGraphDestroy)                         \
  X(graph_exec_destroy, "cuGraphExecDestroy", cuGraphExecDestroy)            \
  X(graph_exec_update, "cuGraphExecUpdate", cuGraphExecUpdate_v2)            \
  X(graph_create, "cuGraphCreate", cuGraphCreate)                            \
  X(graph_clone, "cuGraphClone", cuGraphClone)                               \
  X(graph_add_kernel_node, "cuGraphAddKernelNode", cuGraphAddKernelNode_v2)  \
  X(graph_add_empty_node, "cuGraphAddEmptyNode", cuGraphAddEmptyNode)        \
  X(graph_add_dependencies, "cuGraphAddDependencies", cuGraphAddDependencies_v2) \
  X(graph_kernel_node_get_params, "cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams_v2) \
  X(graph_kernel_node_set_params, "cuGraphKernelNodeSetParams", cuGraphKernelNodeSetParams_v2) \
  X(graph_get_nodes, "cuGraphGetNodes", cuGraphGetNodes)                     \
  X(graph_get_root_nodes, "cuGraphGetRootNodes", cuGraphGetRootNodes)        \
  X(graph_node_get_type, "cuGraphNodeGetType", cuGraphNodeGetType)           \
  X(graph_node_get_dependencies, "cuGraphNodeGetDependencies", cuGraphNodeGetDependencies_v2) \
  X(stream_begin_capture, "cuStreamBeginCapture", cuStreamBeginCapture_v2)   \
  X(stream_end_capture, "cuStreamEndCapture", cuStreamEndCapture)            \
  X(stream_is_capturing, "cuStreamIsCapturing", cuStreamIsCapturing)         \
  X(stream_create, "cuStreamCreate", cuStreamCreate)                         \
  X(stream_destroy, "cuStreamDestroy", cuStreamDestroy_v2)                   \
  X(stream_synchronize, "cuStreamSynchronize", cuStreamSynchronize)          \
  X(stream_query, "cuStreamQuery", cuStreamQuery)                            \
  X(stream_wait_event, "cuStreamWaitEvent", cuStreamWaitEvent)               \
  X(stream_get_id, "cuStreamGetId", cuStreamGetId)                           \
  X(event_create, "cuEventCreate", cuEventCreate)                            \
  X(event_record, "cuEventRecord", cuEventRecord)                            \
  X(event_query, "cuEventQuery", cuEventQuery)                               \
  X(event_synchronize, "cuEventSynchronize", cuEventSynchronize)             \
  X(event_elapsed_time, "cuEventElapsedTime", cuEventElapsedTime_v2)         \
  X(event_destroy, "cuEventDestroy", cuEventDestroy_v2)                      \
  X(mem_alloc, "cuMemAlloc", cuMemAlloc_v2)                                  \
  X(mem_free, "cuMemFree", cuMemFree_v2)                                     \
  X(mem_host_alloc, "cuMemHostAlloc", cuMemHostAlloc)                        \
  X(mem_free_host, "cuMemFreeHost", cuMemFreeHost)                           \
  X(mem_host_get_device_pointer, "cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2) \
  X(memcpy, "cuMemcpy", cuMemcpy)                                            \
  X(memcpy_async, "cuMemcpyAsync", cuMemcpyAsync)                            \
  X(memset_d8, "cuMemsetD8", cuMemsetD8_v2)                                  \
  X(memset_d8_async, "cuMemsetD8Async", cuMemsetD8Async)                     \
  X(device_get_attribute, "cuDeviceGetAttribute", cuDeviceGetAttribute)   \
  X(device_get_name, "cuDeviceGetName", cuDeviceGetName)                    \
  X(device_total_mem, "cuDeviceTotalMem", cuDeviceTotalMem_v2)              \
  X(device_get_pci_bus_id, "cuDeviceGetPCIBusId", cuDeviceGetPCIBusId)      \
  X(device_get_uuid, "cuDeviceGetUuid", cuDeviceGetUuid_v2)                 \
  X(device_can_access_peer, "cuDeviceCanAccessPeer", cuDeviceCanAccessPeer) \
  X(ctx_enable_peer_access, "cuCtxEnablePeerAccess", cuCtxEnablePeerAccess) \
  X(ctx_disable_peer_access, "cuCtxDisablePeerAccess", cuCtxDisablePeerAccess) \
  X(mem_get_info, "cuMemGetInfo", cuMemGetInfo_v2)                          \
  X(ctx_set_limit, "cuCtxSetLimit", cuCtxSetLimit)                           \
  X(ctx_get_limit, "cuCtxGetLimit", cuCtxGetLimit)                           \
  X(pointer_get_attribute, "cuPointerGetAttribute", cuPointerGetAttribute)  \
  X(mem_host_register, "cuMemHostRegister", cuMemHostRegister_v2)           \
  X(mem_host_unregister, "cuMemHostUnregister", cuMemHostUnregister)        \
  X(mem_alloc_async, "cuMemAllocAsync", cuMemAllocAsync)                    \
  X(mem_free_async, "cuMemFreeAsync", cuMemFreeAsync)                       \
  X(memcpy_2d_async, "cuMemcpy2DAsync", cuMemcpy2DAsync_v2)                 \
  X(stream_create_with_priority, "cuStreamCreateWithPriority", cuStreamCreateWithPriority) \
  X(stream_get_priority, "cuStreamGetPriority", cuStreamGetPriority)        \
  X(stream_get_capture_info, "cuStreamGetCaptureInfo", cuStreamGetCaptureInfo_v3) \
  X(ctx_get_stream_priority_range, "cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange) \
  X(func_get_attribute, "cuFuncGetAttribute", cuFuncGetAttribute)           \
  X(func_set_attribute, "cuFuncSetAttribute", cuFuncSetAttribute)           \
  X(occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", \
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)                   \
  X(get_export_table, "cuGetExportTable", cuGetExportTable)

struct DriverEntries {
#define SIMCUDA_DECLARE_ENTRY(member, name, symbol) decltype(&::symbol) member = nullptr;
  SIMCUDA_RUNTIME_DRIVER_ENTRIES(SIMCUDA_DECLARE_ENTRY)
#undef SIMCUDA_DECLARE_ENTRY
};

struct DriverLink {
  bool loaded = false;
  DriverEntries legacy;      // stream 0 is the legacy default stream
  DriverEntries per_thread;  // stream 0 is the calling thread's default stream (the _ptsz/_ptds API)
  const PrivateTable* table = nullptr;
  CUresult (*get_proc_address)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*) = nullptr;
};

// Loads the driver on first use; loaded is false (and every call fails) when libcuda.so.1 is missing.
const DriverLink& driver();

}  // namespace simcuda::runtime
