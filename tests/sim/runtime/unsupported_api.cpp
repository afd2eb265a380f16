// Runtime entry points PyTorch's libraries import and the simulator does not model. Each answers
// cudaErrorNotSupported and says so once on stderr: inter-process memory and events (one process owns the simulated
// device), memory pools (the device reports CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0), CUDA libraries loaded
// at run time (no JIT: kernels are the registered ones), and graph features beyond kernel, empty and memory-operation
// nodes.
#include "runtime_call.h"

extern "C" {

SIMCUDA_RUNTIME_UNSUPPORTED(cudaIpcGetMemHandle, (cudaIpcMemHandle_t*, void*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaIpcOpenMemHandle, (void**, cudaIpcMemHandle_t, unsigned int))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaIpcCloseMemHandle, (void*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaIpcGetEventHandle, (cudaIpcEventHandle_t*, cudaEvent_t))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaIpcOpenEventHandle, (cudaEvent_t*, cudaIpcEventHandle_t))

SIMCUDA_RUNTIME_UNSUPPORTED(cudaDeviceGetDefaultMemPool, (cudaMemPool_t*, int))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaMemPoolGetAttribute, (cudaMemPool_t, enum cudaMemPoolAttr, void*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaMemPoolSetAttribute, (cudaMemPool_t, enum cudaMemPoolAttr, void*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaMemPoolSetAccess, (cudaMemPool_t, const struct cudaMemAccessDesc*, size_t))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaMemPoolTrimTo, (cudaMemPool_t, size_t))

SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryLoadData, (cudaLibrary_t*, const void*, enum cudaJitOption*, void**,
                                                  unsigned int, enum cudaLibraryOption*, void**, unsigned int))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryLoadFromFile, (cudaLibrary_t*, const char*, enum cudaJitOption*, void**,
                                                      unsigned int, enum cudaLibraryOption*, void**, unsigned int))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryUnload, (cudaLibrary_t))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryGetKernel, (cudaKernel_t*, cudaLibrary_t, const char*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryGetKernelCount, (unsigned int*, cudaLibrary_t))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryGetGlobal, (void**, size_t*, cudaLibrary_t, const char*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryGetManaged, (void**, size_t*, cudaLibrary_t, const char*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaLibraryGetUnifiedFunction, (void**, cudaLibrary_t, const char*))

SIMCUDA_RUNTIME_UNSUPPORTED(cudaGraphDebugDotPrint, (cudaGraph_t, const char*, unsigned int))

// CUDA 13's signatures (with edge data); CUDA 12 gave these names to the calls without it.
#if CUDART_VERSION >= 13000
SIMCUDA_RUNTIME_UNSUPPORTED(cudaGraphAddNode, (cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                               const cudaGraphEdgeData*, size_t, struct cudaGraphNodeParams*))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaGraphConditionalHandleCreate, (cudaGraphConditionalHandle*, cudaGraph_t,
                                                               unsigned int, unsigned int))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaStreamBeginCaptureToGraph, (cudaStream_t, cudaGraph_t, const cudaGraphNode_t*,
                                                            const cudaGraphEdgeData*, size_t,
                                                            enum cudaStreamCaptureMode))
SIMCUDA_RUNTIME_UNSUPPORTED(cudaStreamUpdateCaptureDependencies, (cudaStream_t, cudaGraphNode_t*,
                                                                  const cudaGraphEdgeData*, size_t, unsigned int))
#endif

}  // extern "C"
