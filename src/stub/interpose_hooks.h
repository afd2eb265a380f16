// The table the interposition hooks are generated from (interpose.cpp): every CUDA entry point the fallback wraps,
// with the CUPTI callback id and *_params struct that describe it to the shared observer (src/source), the base
// name cuGetProcAddress is asked for, and whether it is the per-thread-default-stream variant.
//
// X(domain, cbid suffix, params type, return type, name, "base name", per thread, (parameters), (arguments))
#pragma once

#define FIRSTASSERT_INTERPOSED_RUNTIME(X)                                                                            \
  X(RUNTIME, cudaLaunchKernel_v7000, cudaLaunchKernel_v7000_params, cudaError_t, cudaLaunchKernel,                  \
    "cudaLaunchKernel", false,                                                                                      \
    (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),           \
    (func, gridDim, blockDim, args, sharedMem, stream))                                                             \
  X(RUNTIME, cudaLaunchKernel_ptsz_v7000, cudaLaunchKernel_ptsz_v7000_params, cudaError_t, cudaLaunchKernel_ptsz,   \
    "cudaLaunchKernel", true,                                                                                       \
    (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),           \
    (func, gridDim, blockDim, args, sharedMem, stream))                                                             \
  X(RUNTIME, __cudaLaunchKernel_v13000, firstassert::source::NvccLaunchParams, cudaError_t, __cudaLaunchKernel,     \
    "__cudaLaunchKernel", false,                                                                                    \
    (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),        \
    (kernel, gridDim, blockDim, args, sharedMem, stream))                                                           \
  X(RUNTIME, __cudaLaunchKernel_ptsz_v13000, firstassert::source::NvccLaunchParams, cudaError_t,                     \
    __cudaLaunchKernel_ptsz, "__cudaLaunchKernel", true,                                                            \
    (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),        \
    (kernel, gridDim, blockDim, args, sharedMem, stream))                                                           \
  X(RUNTIME, cudaLaunchKernelExC_v11060, cudaLaunchKernelExC_v11060_params, cudaError_t, cudaLaunchKernelExC,       \
    "cudaLaunchKernelExC", false, (const cudaLaunchConfig_t* config, const void* func, void** args),                \
    (config, func, args))                                                                                           \
  X(RUNTIME, cudaLaunchKernelExC_ptsz_v11060, cudaLaunchKernelExC_ptsz_v11060_params, cudaError_t,                  \
    cudaLaunchKernelExC_ptsz, "cudaLaunchKernelExC", true,                                                          \
    (const cudaLaunchConfig_t* config, const void* func, void** args), (config, func, args))                         \
  X(RUNTIME, cudaLaunchCooperativeKernel_v9000, cudaLaunchCooperativeKernel_v9000_params, cudaError_t,              \
    cudaLaunchCooperativeKernel, "cudaLaunchCooperativeKernel", false,                                              \
    (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),           \
    (func, gridDim, blockDim, args, sharedMem, stream))                                                             \
  X(RUNTIME, cudaLaunchCooperativeKernel_ptsz_v9000, cudaLaunchCooperativeKernel_ptsz_v9000_params, cudaError_t,    \
    cudaLaunchCooperativeKernel_ptsz, "cudaLaunchCooperativeKernel", true,                                          \
    (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),           \
    (func, gridDim, blockDim, args, sharedMem, stream))                                                             \
  X(RUNTIME, cudaGraphLaunch_v10000, cudaGraphLaunch_v10000_params, cudaError_t, cudaGraphLaunch, "cudaGraphLaunch", \
    false, (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream))                                    \
  X(RUNTIME, cudaGraphLaunch_ptsz_v10000, cudaGraphLaunch_ptsz_v10000_params, cudaError_t, cudaGraphLaunch_ptsz,    \
    "cudaGraphLaunch", true, (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream))                  \
  X(RUNTIME, cudaDeviceSynchronize_v3020, firstassert::source::NoParams, cudaError_t, cudaDeviceSynchronize,        \
    "cudaDeviceSynchronize", false, (void), ())                                                                     \
  X(RUNTIME, cudaStreamSynchronize_v3020, cudaStreamSynchronize_v3020_params, cudaError_t, cudaStreamSynchronize,   \
    "cudaStreamSynchronize", false, (cudaStream_t stream), (stream))                                                \
  X(RUNTIME, cudaStreamSynchronize_ptsz_v7000, cudaStreamSynchronize_ptsz_v7000_params, cudaError_t,                \
    cudaStreamSynchronize_ptsz, "cudaStreamSynchronize", true, (cudaStream_t stream), (stream))                      \
  X(RUNTIME, cudaStreamQuery_v3020, cudaStreamQuery_v3020_params, cudaError_t, cudaStreamQuery, "cudaStreamQuery",  \
    false, (cudaStream_t stream), (stream))                                                                          \
  X(RUNTIME, cudaStreamQuery_ptsz_v7000, cudaStreamQuery_ptsz_v7000_params, cudaError_t, cudaStreamQuery_ptsz,      \
    "cudaStreamQuery", true, (cudaStream_t stream), (stream))                                                        \
  X(RUNTIME, cudaStreamDestroy_v5050, cudaStreamDestroy_v5050_params, cudaError_t, cudaStreamDestroy,               \
    "cudaStreamDestroy", false, (cudaStream_t stream), (stream))                                                     \
  X(RUNTIME, cudaEventDestroy_v3020, cudaEventDestroy_v3020_params, cudaError_t, cudaEventDestroy,                  \
    "cudaEventDestroy", false, (cudaEvent_t event), (event))                                                         \
  X(RUNTIME, cudaEventRecord_v3020, cudaEventRecord_v3020_params, cudaError_t, cudaEventRecord, "cudaEventRecord",  \
    false, (cudaEvent_t event, cudaStream_t stream), (event, stream))                                                \
  X(RUNTIME, cudaStreamWaitEvent_v3020, cudaStreamWaitEvent_v3020_params, cudaError_t, cudaStreamWaitEvent,         \
    "cudaStreamWaitEvent", false, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),                      \
    (stream, event, flags))                                                                                          \
  X(RUNTIME, cudaEventSynchronize_v3020, cudaEventSynchronize_v3020_params, cudaError_t, cudaEventSynchronize,      \
    "cudaEventSynchronize", false, (cudaEvent_t event), (event))                                                     \
  X(RUNTIME, cudaEventQuery_v3020, cudaEventQuery_v3020_params, cudaError_t, cudaEventQuery, "cudaEventQuery",      \
    false, (cudaEvent_t event), (event))                                                                             \
  X(RUNTIME, cudaMemcpy_v3020, cudaMemcpy_v3020_params, cudaError_t, cudaMemcpy, "cudaMemcpy", false,               \
    (void* dst, const void* src, size_t count, enum cudaMemcpyKind kind), (dst, src, count, kind))                   \
  X(RUNTIME, cudaMemcpy_ptds_v7000, cudaMemcpy_ptds_v7000_params, cudaError_t, cudaMemcpy_ptds, "cudaMemcpy", true, \
    (void* dst, const void* src, size_t count, enum cudaMemcpyKind kind), (dst, src, count, kind))                   \
  X(RUNTIME, cudaMemcpyAsync_v3020, cudaMemcpyAsync_v3020_params, cudaError_t, cudaMemcpyAsync, "cudaMemcpyAsync",  \
    false, (void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream),                \
    (dst, src, count, kind, stream))                                                                                 \
  X(RUNTIME, cudaMalloc_v3020, cudaMalloc_v3020_params, cudaError_t, cudaMalloc, "cudaMalloc", false,               \
    (void** devPtr, size_t size), (devPtr, size))                                                                    \
  X(RUNTIME, cudaFree_v3020, cudaFree_v3020_params, cudaError_t, cudaFree, "cudaFree", false, (void* devPtr),       \
    (devPtr))                                                                                                        \
  X(RUNTIME, cudaGetLastError_v3020, firstassert::source::NoParams, cudaError_t, cudaGetLastError,                  \
    "cudaGetLastError", false, (void), ())                                                                          \
  X(RUNTIME, cudaPeekAtLastError_v3020, firstassert::source::NoParams, cudaError_t, cudaPeekAtLastError,            \
    "cudaPeekAtLastError", false, (void), ())                                                                       \
  X(RUNTIME, cudaStreamBeginCapture_v10000, cudaStreamBeginCapture_v10000_params, cudaError_t,                      \
    cudaStreamBeginCapture, "cudaStreamBeginCapture", false, (cudaStream_t stream, enum cudaStreamCaptureMode mode), \
    (stream, mode))                                                                                                  \
  X(RUNTIME, cudaStreamEndCapture_v10000, cudaStreamEndCapture_v10000_params, cudaError_t, cudaStreamEndCapture,    \
    "cudaStreamEndCapture", false, (cudaStream_t stream, cudaGraph_t* pGraph), (stream, pGraph))                   \
  X(RUNTIME, cudaGraphInstantiate_v12000, cudaGraphInstantiate_v12000_params, cudaError_t, cudaGraphInstantiate,    \
    "cudaGraphInstantiate", false, (cudaGraphExec_t * pGraphExec, cudaGraph_t graph, unsigned long long flags),     \
    (pGraphExec, graph, flags))                                                                                      \
  X(RUNTIME, cudaGraphInstantiateWithFlags_v11040, cudaGraphInstantiateWithFlags_v11040_params, cudaError_t,        \
    cudaGraphInstantiateWithFlags, "cudaGraphInstantiateWithFlags", false,                                          \
    (cudaGraphExec_t * pGraphExec, cudaGraph_t graph, unsigned long long flags), (pGraphExec, graph, flags))         \
  X(RUNTIME, cudaGraphInstantiateWithParams_v12000, cudaGraphInstantiateWithParams_v12000_params, cudaError_t,      \
    cudaGraphInstantiateWithParams, "cudaGraphInstantiateWithParams", false,                                        \
    (cudaGraphExec_t * pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams * instantiateParams),              \
    (pGraphExec, graph, instantiateParams))                                                                          \
  X(RUNTIME, cudaGraphExecUpdate_v10020, cudaGraphExecUpdate_v10020_params, cudaError_t, cudaGraphExecUpdate,       \
    "cudaGraphExecUpdate", false,                                                                                    \
    (cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphExecUpdateResultInfo * resultInfo),                    \
    (hGraphExec, hGraph, resultInfo))                                                                                \
  X(RUNTIME, cudaGraphClone_v10000, cudaGraphClone_v10000_params, cudaError_t, cudaGraphClone, "cudaGraphClone",    \
    false, (cudaGraph_t * pGraphClone, cudaGraph_t originalGraph), (pGraphClone, originalGraph))                     \
  X(RUNTIME, cudaGraphDestroy_v10000, cudaGraphDestroy_v10000_params, cudaError_t, cudaGraphDestroy,                \
    "cudaGraphDestroy", false, (cudaGraph_t graph), (graph))                                                         \
  X(RUNTIME, cudaGraphExecDestroy_v10000, cudaGraphExecDestroy_v10000_params, cudaError_t, cudaGraphExecDestroy,    \
    "cudaGraphExecDestroy", false, (cudaGraphExec_t graphExec), (graphExec))                                         \
  X(RUNTIME, cudaGraphAddKernelNode_v10000, cudaGraphAddKernelNode_v10000_params, cudaError_t,                      \
    cudaGraphAddKernelNode, "cudaGraphAddKernelNode", false,                                                        \
    (cudaGraphNode_t * pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, \
     const struct cudaKernelNodeParams* pNodeParams),                                                                \
    (pGraphNode, graph, pDependencies, numDependencies, pNodeParams))

#define FIRSTASSERT_INTERPOSED_DRIVER(X)                                                                             \
  X(DRIVER, cuLaunchKernel, cuLaunchKernel_params, CUresult, cuLaunchKernel, "cuLaunchKernel", false,               \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,     \
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,                 \
     void** kernelParams, void** extra),                                                                             \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra)) \
  X(DRIVER, cuLaunchKernel_ptsz, cuLaunchKernel_ptsz_params, CUresult, cuLaunchKernel_ptsz, "cuLaunchKernel", true, \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,     \
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,                 \
     void** kernelParams, void** extra),                                                                             \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra)) \
  X(DRIVER, cuLaunchKernelEx, cuLaunchKernelEx_params, CUresult, cuLaunchKernelEx, "cuLaunchKernelEx", false,       \
    (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra), (config, f, kernelParams, extra)) \
  X(DRIVER, cuLaunchKernelEx_ptsz, cuLaunchKernelEx_ptsz_params, CUresult, cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", \
    true, (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra),                           \
    (config, f, kernelParams, extra))                                                                                \
  X(DRIVER, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_params, CUresult, cuLaunchCooperativeKernel,       \
    "cuLaunchCooperativeKernel", false,                                                                              \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,     \
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,                 \
     void** kernelParams),                                                                                           \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams))       \
  X(DRIVER, cuGraphLaunch, cuGraphLaunch_params, CUresult, cuGraphLaunch, "cuGraphLaunch", false,                   \
    (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))                                               \
  X(DRIVER, cuCtxSynchronize, firstassert::source::NoParams, CUresult, cuCtxSynchronize, "cuCtxSynchronize", false, \
    (void), ())                                                                                                     \
  X(DRIVER, cuStreamSynchronize, cuStreamSynchronize_params, CUresult, cuStreamSynchronize, "cuStreamSynchronize",  \
    false, (CUstream hStream), (hStream))                                                                            \
  X(DRIVER, cuStreamQuery, cuStreamQuery_params, CUresult, cuStreamQuery, "cuStreamQuery", false, (CUstream hStream), \
    (hStream))                                                                                                       \
  X(DRIVER, cuStreamDestroy_v2, cuStreamDestroy_v2_params, CUresult, cuStreamDestroy_v2, "cuStreamDestroy", false,  \
    (CUstream hStream), (hStream))                                                                                   \
  X(DRIVER, cuEventDestroy_v2, cuEventDestroy_v2_params, CUresult, cuEventDestroy_v2, "cuEventDestroy", false,      \
    (CUevent hEvent), (hEvent))                                                                                      \
  X(DRIVER, cuEventRecord, cuEventRecord_params, CUresult, cuEventRecord, "cuEventRecord", false,                  \
    (CUevent hEvent, CUstream hStream), (hEvent, hStream))                                                           \
  X(DRIVER, cuStreamWaitEvent, cuStreamWaitEvent_params, CUresult, cuStreamWaitEvent, "cuStreamWaitEvent", false,   \
    (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags))                                \
  X(DRIVER, cuEventSynchronize, cuEventSynchronize_params, CUresult, cuEventSynchronize, "cuEventSynchronize", false, \
    (CUevent hEvent), (hEvent))                                                                                      \
  X(DRIVER, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_params, CUresult, cuMemcpyHtoD_v2, "cuMemcpyHtoD", false,              \
    (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount), (dstDevice, srcHost, ByteCount))                  \
  X(DRIVER, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_params, CUresult, cuMemcpyDtoH_v2, "cuMemcpyDtoH", false,              \
    (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount), (dstHost, srcDevice, ByteCount))                  \
  X(DRIVER, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_params, CUresult, cuStreamBeginCapture_v2,             \
    "cuStreamBeginCapture", false, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))                    \
  X(DRIVER, cuStreamEndCapture, cuStreamEndCapture_params, CUresult, cuStreamEndCapture, "cuStreamEndCapture", false, \
    (CUstream hStream, CUgraph * phGraph), (hStream, phGraph))                                                       \
  X(DRIVER, cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags_params, CUresult, cuGraphInstantiateWithFlags, \
    "cuGraphInstantiateWithFlags", false, (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags),    \
    (phGraphExec, hGraph, flags))                                                                                    \
  X(DRIVER, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_params, CUresult,                            \
    cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams", false,                                            \
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS * instantiateParams),                 \
    (phGraphExec, hGraph, instantiateParams))                                                                        \
  X(DRIVER, cuGraphExecUpdate_v2, cuGraphExecUpdate_v2_params, CUresult, cuGraphExecUpdate_v2, "cuGraphExecUpdate", \
    false, (CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo * resultInfo),                       \
    (hGraphExec, hGraph, resultInfo))                                                                                \
  X(DRIVER, cuGraphClone, cuGraphClone_params, CUresult, cuGraphClone, "cuGraphClone", false,                       \
    (CUgraph * phGraphClone, CUgraph originalGraph), (phGraphClone, originalGraph))                                  \
  X(DRIVER, cuGraphDestroy, cuGraphDestroy_params, CUresult, cuGraphDestroy, "cuGraphDestroy", false,               \
    (CUgraph hGraph), (hGraph))                                                                                      \
  X(DRIVER, cuGraphExecDestroy, cuGraphExecDestroy_params, CUresult, cuGraphExecDestroy, "cuGraphExecDestroy",      \
    false, (CUgraphExec hGraphExec), (hGraphExec))                                                                   \
  X(DRIVER, cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2_params, CUresult, cuGraphAddKernelNode_v2,             \
    "cuGraphAddKernelNode", false,                                                                                   \
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies, size_t numDependencies,            \
     const CUDA_KERNEL_NODE_PARAMS* nodeParams),                                                                     \
    (phGraphNode, hGraph, dependencies, numDependencies, nodeParams))
