// cuGetProcAddress: how cudart (>= 11.3) and other clients obtain every driver entry point. Base names map to the
// versioned symbol this driver implements; CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM selects the _ptsz/_ptds
// variant where one exists.
#include <cuda.h>

#include <cstring>
#include <string>

#include "driver_state.h"

namespace {

struct Entry {
  const char* name;
  void* legacy;
  void* per_thread;  // nullptr: same as legacy
  // The CUDA version from which the base name means the ABI implemented here; for an older one the driver gives an
  // older ABI (another signature) that the simulator does not implement. 0: every version.
  int since = 0;
};

#define ENTRY(name, symbol) {name, reinterpret_cast<void*>(&symbol), nullptr}
#define ENTRY_PT(name, symbol, pt_symbol) \
  {name, reinterpret_cast<void*>(&symbol), reinterpret_cast<void*>(&pt_symbol)}
#define ENTRY_SINCE(name, symbol, version) {name, reinterpret_cast<void*>(&symbol), nullptr, version}

extern "C" CUresult CUDAAPI cuGetProcAddress_v2(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

const Entry kEntries[] = {
    ENTRY("cuInit", cuInit),
    ENTRY("cuDriverGetVersion", cuDriverGetVersion),
    ENTRY("cuDeviceGet", cuDeviceGet),
    ENTRY("cuDeviceGetCount", cuDeviceGetCount),
    ENTRY("cuDeviceGetName", cuDeviceGetName),
    ENTRY("cuDeviceGetAttribute", cuDeviceGetAttribute),
    ENTRY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
    ENTRY("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2),
    ENTRY("cuCtxGetCurrent", cuCtxGetCurrent),
    ENTRY("cuCtxSetCurrent", cuCtxSetCurrent),
    ENTRY("cuCtxPushCurrent", cuCtxPushCurrent_v2),
    ENTRY("cuCtxPopCurrent", cuCtxPopCurrent_v2),
    ENTRY("cuCtxGetDevice", cuCtxGetDevice),
    ENTRY("cuCtxSetLimit", cuCtxSetLimit),
    ENTRY("cuCtxGetLimit", cuCtxGetLimit),
    ENTRY("cuCtxSynchronize", cuCtxSynchronize),
    ENTRY("cuModuleLoadData", cuModuleLoadData),
    ENTRY("cuModuleUnload", cuModuleUnload),
    ENTRY("cuModuleGetFunction", cuModuleGetFunction),
    ENTRY("cuFuncGetName", cuFuncGetName),
    ENTRY_PT("cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz),
    ENTRY_PT("cuLaunchKernelEx", cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    ENTRY_PT("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
    ENTRY_PT("cuLaunchHostFunc", cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
    ENTRY_PT("cuStreamBeginCapture", cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz),
    ENTRY_PT("cuStreamEndCapture", cuStreamEndCapture, cuStreamEndCapture_ptsz),
    ENTRY_PT("cuStreamIsCapturing", cuStreamIsCapturing, cuStreamIsCapturing_ptsz),
    {"cuStreamGetCaptureInfo", reinterpret_cast<void*>(&cuStreamGetCaptureInfo_v3),
     reinterpret_cast<void*>(&cuStreamGetCaptureInfo_v3_ptsz), 12030},
    ENTRY("cuGraphCreate", cuGraphCreate),
    ENTRY_SINCE("cuGraphAddKernelNode", cuGraphAddKernelNode_v2, 12000),
    ENTRY("cuGraphAddBatchMemOpNode", cuGraphAddBatchMemOpNode),
    ENTRY("cuGraphAddEmptyNode", cuGraphAddEmptyNode),
    ENTRY_SINCE("cuGraphAddDependencies", cuGraphAddDependencies_v2, 12030),
    ENTRY_SINCE("cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams_v2, 12000),
    ENTRY_SINCE("cuGraphKernelNodeSetParams", cuGraphKernelNodeSetParams_v2, 12000),
    ENTRY("cuGraphBatchMemOpNodeGetParams", cuGraphBatchMemOpNodeGetParams),
    ENTRY("cuGraphGetNodes", cuGraphGetNodes),
    ENTRY("cuGraphGetRootNodes", cuGraphGetRootNodes),
    ENTRY("cuGraphNodeGetType", cuGraphNodeGetType),
    ENTRY_SINCE("cuGraphNodeGetDependencies", cuGraphNodeGetDependencies_v2, 12030),
    ENTRY_SINCE("cuGraphNodeGetDependentNodes", cuGraphNodeGetDependentNodes_v2, 12030),
    ENTRY("cuGraphClone", cuGraphClone),
    ENTRY("cuGraphNodeFindInClone", cuGraphNodeFindInClone),
    ENTRY("cuGraphInstantiate", cuGraphInstantiateWithFlags),
    ENTRY("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags),
    ENTRY_PT("cuGraphInstantiateWithParams", cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz),
    ENTRY_SINCE("cuGraphExecUpdate", cuGraphExecUpdate_v2, 12000),
    ENTRY_SINCE("cuGraphExecKernelNodeSetParams", cuGraphExecKernelNodeSetParams_v2, 12000),
    ENTRY("cuGraphDestroy", cuGraphDestroy),
    ENTRY("cuGraphExecDestroy", cuGraphExecDestroy),
    ENTRY_PT("cuGraphLaunch", cuGraphLaunch, cuGraphLaunch_ptsz),
    ENTRY("cuStreamCreate", cuStreamCreate),
    ENTRY_PT("cuStreamGetPriority", cuStreamGetPriority, cuStreamGetPriority_ptsz),
    ENTRY("cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange),
    ENTRY_SINCE("cuDeviceTotalMem", cuDeviceTotalMem_v2, 3020),
    ENTRY_SINCE("cuMemGetInfo", cuMemGetInfo_v2, 3020),
    ENTRY("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId),
    // The two differ only for MIG instances (not modelled): every version gets the _v2 behaviour.
    ENTRY("cuDeviceGetUuid", cuDeviceGetUuid_v2),
    ENTRY("cuDeviceCanAccessPeer", cuDeviceCanAccessPeer),
    ENTRY("cuCtxEnablePeerAccess", cuCtxEnablePeerAccess),
    ENTRY("cuCtxDisablePeerAccess", cuCtxDisablePeerAccess),
    ENTRY_PT("cuMemcpyPeer", cuMemcpyPeer, cuMemcpyPeer_ptds),
    ENTRY_PT("cuMemcpyPeerAsync", cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz),
    ENTRY("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState),
    ENTRY("cuPointerGetAttribute", cuPointerGetAttribute),
    ENTRY_SINCE("cuMemHostRegister", cuMemHostRegister_v2, 6050),
    ENTRY("cuMemHostUnregister", cuMemHostUnregister),
    ENTRY_PT("cuMemAllocAsync", cuMemAllocAsync, cuMemAllocAsync_ptsz),
    ENTRY_PT("cuMemFreeAsync", cuMemFreeAsync, cuMemFreeAsync_ptsz),
    ENTRY_PT("cuMemcpy2DAsync", cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz),
    ENTRY("cuFuncGetAttribute", cuFuncGetAttribute),
    ENTRY("cuFuncSetAttribute", cuFuncSetAttribute),
    ENTRY("cuFuncSetCacheConfig", cuFuncSetCacheConfig),
    ENTRY("cuOccupancyMaxActiveBlocksPerMultiprocessor", cuOccupancyMaxActiveBlocksPerMultiprocessor),
    ENTRY("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
          cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    ENTRY("cuModuleLoad", cuModuleLoad),
    ENTRY("cuModuleLoadDataEx", cuModuleLoadDataEx),
    ENTRY_SINCE("cuLibraryLoadData", cuLibraryLoadData, 12000),
    ENTRY_SINCE("cuLibraryLoadFromFile", cuLibraryLoadFromFile, 12000),
    ENTRY_SINCE("cuLibraryUnload", cuLibraryUnload, 12000),
    ENTRY_SINCE("cuLibraryGetKernel", cuLibraryGetKernel, 12000),
    ENTRY_SINCE("cuLibraryGetKernelCount", cuLibraryGetKernelCount, 12040),
    ENTRY_SINCE("cuLibraryEnumerateKernels", cuLibraryEnumerateKernels, 12040),
    ENTRY_SINCE("cuLibraryGetModule", cuLibraryGetModule, 12000),
    ENTRY_SINCE("cuKernelGetFunction", cuKernelGetFunction, 12000),
    ENTRY_SINCE("cuLinkCreate", cuLinkCreate_v2, 6050),
    ENTRY_SINCE("cuLinkAddData", cuLinkAddData_v2, 6050),
    ENTRY("cuLinkComplete", cuLinkComplete),
    ENTRY("cuTensorMapEncodeTiled", cuTensorMapEncodeTiled),
    ENTRY_SINCE("cuMemGetAddressRange", cuMemGetAddressRange_v2, 3020),
    ENTRY_PT("cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz),
    ENTRY("cuMemAddressReserve", cuMemAddressReserve),
    ENTRY("cuMemAddressFree", cuMemAddressFree),
    ENTRY("cuMemCreate", cuMemCreate),
    ENTRY("cuMemRelease", cuMemRelease),
    ENTRY("cuMemMap", cuMemMap),
    ENTRY("cuMemUnmap", cuMemUnmap),
    ENTRY("cuMemSetAccess", cuMemSetAccess),
    ENTRY("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity),
    ENTRY("cuMemExportToShareableHandle", cuMemExportToShareableHandle),
    ENTRY("cuMemImportFromShareableHandle", cuMemImportFromShareableHandle),
    ENTRY("cuMemRetainAllocationHandle", cuMemRetainAllocationHandle),
    ENTRY("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle),
    ENTRY("cuStreamCreateWithPriority", cuStreamCreateWithPriority),
    ENTRY("cuStreamDestroy", cuStreamDestroy_v2),
    ENTRY_PT("cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize_ptsz),
    ENTRY_PT("cuStreamQuery", cuStreamQuery, cuStreamQuery_ptsz),
    ENTRY_PT("cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    ENTRY_PT("cuStreamGetId", cuStreamGetId, cuStreamGetId_ptsz),
    ENTRY_PT("cuStreamGetCtx", cuStreamGetCtx, cuStreamGetCtx_ptsz),
    ENTRY_PT("cuStreamWriteValue32", cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz),
    ENTRY_PT("cuStreamWriteValue64", cuStreamWriteValue64_v2, cuStreamWriteValue64_v2_ptsz),
    ENTRY_PT("cuStreamBatchMemOp", cuStreamBatchMemOp_v2, cuStreamBatchMemOp_v2_ptsz),
    ENTRY("cuEventCreate", cuEventCreate),
    ENTRY_PT("cuEventRecord", cuEventRecord, cuEventRecord_ptsz),
    ENTRY("cuEventQuery", cuEventQuery),
    ENTRY("cuEventSynchronize", cuEventSynchronize),
    ENTRY("cuEventElapsedTime", cuEventElapsedTime_v2),
    ENTRY("cuEventDestroy", cuEventDestroy_v2),
    ENTRY("cuMemAlloc", cuMemAlloc_v2),
    ENTRY("cuMemFree", cuMemFree_v2),
    ENTRY("cuMemHostAlloc", cuMemHostAlloc),
    ENTRY("cuMemFreeHost", cuMemFreeHost),
    ENTRY("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2),
    ENTRY_PT("cuMemcpyHtoD", cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    ENTRY_PT("cuMemcpyDtoH", cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    ENTRY_PT("cuMemcpyDtoD", cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    ENTRY_PT("cuMemcpy", cuMemcpy, cuMemcpy_ptds),
    ENTRY_PT("cuMemcpyAsync", cuMemcpyAsync, cuMemcpyAsync_ptsz),
    ENTRY_PT("cuMemsetD8", cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    ENTRY_PT("cuMemsetD8Async", cuMemsetD8Async, cuMemsetD8Async_ptsz),
    ENTRY("cuGetErrorName", cuGetErrorName),
    ENTRY("cuGetErrorString", cuGetErrorString),
    ENTRY("cuGetExportTable", cuGetExportTable),
    ENTRY("cuGetProcAddress", cuGetProcAddress_v2),
};

}  // namespace

extern "C" {

CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult* symbolStatus) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  // One version of each entry point is implemented; where the base name meant another signature before, a request
  // for that older version is refused rather than given the newer ABI.
  for (const Entry& entry : kEntries) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    if (cudaVersion < entry.since) {
      simcuda::say_unsupported_once(
          (std::string("cuGetProcAddress of ") + entry.name + " for a CUDA version older than " +
           std::to_string(entry.since) + " (an older signature)")
              .c_str());
      if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_ERROR_NOT_FOUND;
    }
    bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *pfn = per_thread && entry.per_thread != nullptr ? entry.per_thread : entry.legacy;
    if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (symbolStatus != nullptr) *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

// The pre-12.0 signature, still exported by NVIDIA's driver under the base name.
CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

}  // extern "C"
