// The few driver entry points firstassert itself calls (to synchronize a stream, write a breadcrumb, learn a
// context's device), taken from the libcuda.so.1 the process already loaded, through cuGetProcAddress so that the
// versioned entry point (cuStreamWriteValue64 -> _v2) is the one the driver means today. Never loads the driver.
#pragma once

#include <cuda.h>

namespace firstassert {

struct DriverCalls {
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*stream_write_value64)(CUstream, CUdeviceptr, cuuint64_t, unsigned int) = nullptr;
  CUresult (*mem_host_alloc)(void**, size_t, unsigned int) = nullptr;
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr*, void*, unsigned int) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  // Which GPU a device is (source/context_devices): asked once per context.
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*device_get_pci_bus_id)(char*, int, CUdevice) = nullptr;
  // CUDA graphs: their kernel nodes and breadcrumbs (device/graph_breadcrumbs).
  CUresult (*stream_get_capture_info)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                                      const CUgraphEdgeData**, size_t*) = nullptr;
  CUresult (*graph_add_batch_mem_op_node)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                          const CUDA_BATCH_MEM_OP_NODE_PARAMS*) = nullptr;
  CUresult (*graph_kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*graph_get_nodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;
  CUresult (*kernel_get_name)(const char**, CUkernel) = nullptr;
};

// The entry points found (each may be null); nullptr while the driver is not loaded yet.
const DriverCalls* driver_calls();

// Pinned host memory the device writes and the host reads after a fault (cuMemHostAlloc, device-mapped and
// portable, and its device address). The caller checks that calls has both entry points.
CUresult map_host_memory(const DriverCalls& calls, size_t bytes, void** host, CUdeviceptr* device);

}  // namespace firstassert
