// The CUDA calls firstassert gives a meaning to, one table per domain: the launches (with how to read their
// *_params struct), and the stream calls: those that prove earlier work complete when they succeed, those that
// destroy a stream, and those that start and end a stream capture (launches into a capturing stream are graph nodes, not launches). Every other call
// is only checked for an error at EXIT. Callback ids and params structs are CUPTI's own (cupti.h, generated_*_meta.h).
#pragma once

#include <cupti.h>

#include <cstdint>

#include "core/launch_record.h"
#include "core/tracker.h"

namespace firstassert::source {

// __cudaLaunchKernel (what nvcc 13 emits for <<<>>>) has no params struct in CUDA 13.0's meta header; its
// functionParams follow its argument list, declared in crt/device_functions.h.
struct NvccLaunchParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

// Calls whose parameters do not matter here.
struct NoParams {};

// X(callback id suffix, params type, LaunchApi, per-thread default stream, field reader)
#define FIRSTASSERT_RUNTIME_LAUNCHES(X)                                                                       \
  X(cudaLaunchKernel_v7000, cudaLaunchKernel_v7000_params, cudaLaunchKernel, false, read_dim3_launch)         \
  X(cudaLaunchKernel_ptsz_v7000, cudaLaunchKernel_ptsz_v7000_params, cudaLaunchKernel, true, read_dim3_launch) \
  X(cudaLaunchKernelExC_v11060, cudaLaunchKernelExC_v11060_params, cudaLaunchKernelExC, false,               \
    read_runtime_config_launch)                                                                               \
  X(cudaLaunchKernelExC_ptsz_v11060, cudaLaunchKernelExC_ptsz_v11060_params, cudaLaunchKernelExC, true,      \
    read_runtime_config_launch)                                                                               \
  X(cudaLaunchCooperativeKernel_v9000, cudaLaunchCooperativeKernel_v9000_params, cudaLaunchCooperativeKernel, \
    false, read_dim3_launch)                                                                                  \
  X(cudaLaunchCooperativeKernel_ptsz_v9000, cudaLaunchCooperativeKernel_ptsz_v9000_params,                   \
    cudaLaunchCooperativeKernel, true, read_dim3_launch)                                                      \
  X(__cudaLaunchKernel_v13000, NvccLaunchParams, cudaLaunchKernelNvcc, false, read_dim3_launch)               \
  X(__cudaLaunchKernel_ptsz_v13000, NvccLaunchParams, cudaLaunchKernelNvcc, true, read_dim3_launch)           \
  X(cudaGraphLaunch_v10000, cudaGraphLaunch_v10000_params, cudaGraphLaunch, false, read_graph_launch)         \
  X(cudaGraphLaunch_ptsz_v10000, cudaGraphLaunch_ptsz_v10000_params, cudaGraphLaunch, true, read_graph_launch)

#define FIRSTASSERT_DRIVER_LAUNCHES(X)                                                                        \
  X(cuLaunchKernel, cuLaunchKernel_params, cuLaunchKernel, false, read_xyz_launch)                            \
  X(cuLaunchKernel_ptsz, cuLaunchKernel_ptsz_params, cuLaunchKernel, true, read_xyz_launch)                   \
  X(cuLaunchKernelEx, cuLaunchKernelEx_params, cuLaunchKernelEx, false, read_driver_config_launch)            \
  X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx_ptsz_params, cuLaunchKernelEx, true, read_driver_config_launch)   \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_params, cuLaunchCooperativeKernel, false,            \
    read_xyz_launch)                                                                                          \
  X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel_ptsz_params, cuLaunchCooperativeKernel, true,   \
    read_xyz_launch)                                                                                          \
  X(cuGraphLaunch, cuGraphLaunch_params, cuGraphLaunch, false, read_graph_launch)                             \
  X(cuGraphLaunch_ptsz, cuGraphLaunch_ptsz_params, cuGraphLaunch, true, read_graph_launch)

// X(callback id suffix, params type, CallKind, per-thread default stream, stream reader)
#define FIRSTASSERT_RUNTIME_STREAM_CALLS(X)                                                                    \
  X(cudaDeviceSynchronize_v3020, NoParams, sync_device, false, no_stream)                                         \
  X(cudaStreamSynchronize_v3020, cudaStreamSynchronize_v3020_params, sync_stream, false, read_handles)   \
  X(cudaStreamSynchronize_ptsz_v7000, cudaStreamSynchronize_ptsz_v7000_params, sync_stream, true,            \
    read_handles)                                                                                        \
  X(cudaStreamQuery_v3020, cudaStreamQuery_v3020_params, query_stream, false, read_handles)             \
  X(cudaStreamQuery_ptsz_v7000, cudaStreamQuery_ptsz_v7000_params, query_stream, true, read_handles)    \
  X(cudaEventSynchronize_v3020, NoParams, sync_event, false, no_stream)                                           \
  X(cudaMemcpy_v3020, cudaMemcpy_v3020_params, blocking_copy, false, read_copy_kind)                          \
  X(cudaMemcpy_ptds_v7000, cudaMemcpy_ptds_v7000_params, blocking_copy, true, read_copy_kind)                 \
  X(cudaStreamBeginCapture_v10000, cudaStreamBeginCapture_v10000_params, begin_capture, false, read_handles) \
  X(cudaStreamBeginCapture_ptsz_v10000, cudaStreamBeginCapture_ptsz_v10000_params, begin_capture, true,        \
    read_handles)                                                                                        \
  X(cudaStreamBeginCaptureToGraph_v12030, cudaStreamBeginCaptureToGraph_v12030_params, begin_capture, false,  \
    read_handles)                                                                                        \
  X(cudaStreamBeginCaptureToGraph_ptsz_v12030, cudaStreamBeginCaptureToGraph_ptsz_v12030_params, begin_capture, \
    true, read_handles)                                                                                  \
  X(cudaStreamEndCapture_v10000, cudaStreamEndCapture_v10000_params, end_capture, false, read_handles)    \
  X(cudaStreamEndCapture_ptsz_v10000, cudaStreamEndCapture_ptsz_v10000_params, end_capture, true,              \
    read_handles)                                                                                        \
  X(cudaStreamDestroy_v5050, cudaStreamDestroy_v5050_params, destroy_stream, false, read_handles)        \
  X(cudaEventRecord_v3020, cudaEventRecord_v3020_params, record_event, false, read_handles)              \
  X(cudaEventRecord_ptsz_v7000, cudaEventRecord_ptsz_v7000_params, record_event, true, read_handles)     \
  X(cudaEventRecordWithFlags_v11010, cudaEventRecordWithFlags_v11010_params, record_event, false,            \
    read_handles)                                                                                        \
  X(cudaEventRecordWithFlags_ptsz_v11010, cudaEventRecordWithFlags_ptsz_v11010_params, record_event, true,   \
    read_handles)                                                                                        \
  X(cudaStreamWaitEvent_v3020, cudaStreamWaitEvent_v3020_params, wait_event, false, read_handles)        \
  X(cudaStreamWaitEvent_ptsz_v7000, cudaStreamWaitEvent_ptsz_v7000_params, wait_event, true, read_handles) \
  X(cudaEventDestroy_v3020, cudaEventDestroy_v3020_params, destroy_event, false, read_handles)             \
  X(cudaDeviceReset_v3020, NoParams, reset_context, false, no_stream)

#define FIRSTASSERT_DRIVER_STREAM_CALLS(X)                                                                     \
  X(cuCtxSynchronize, NoParams, sync_device, false, no_stream)                                                    \
  X(cuStreamSynchronize, cuStreamSynchronize_params, sync_stream, false, read_handles)                  \
  X(cuStreamSynchronize_ptsz, cuStreamSynchronize_ptsz_params, sync_stream, true, read_handles)         \
  X(cuStreamQuery, cuStreamQuery_params, query_stream, false, read_handles)                             \
  X(cuStreamQuery_ptsz, cuStreamQuery_ptsz_params, query_stream, true, read_handles)                    \
  X(cuEventSynchronize, NoParams, sync_event, false, no_stream)                                                   \
  X(cuMemcpyHtoD_v2, NoParams, blocking_copy, false, no_stream)                                                   \
  X(cuMemcpyDtoH_v2, NoParams, blocking_copy, false, no_stream)                                                   \
  X(cuMemcpyHtoD_v2_ptds, NoParams, blocking_copy, true, no_stream)                                               \
  X(cuMemcpyDtoH_v2_ptds, NoParams, blocking_copy, true, no_stream)                                               \
  X(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_params, begin_capture, false, read_handles)        \
  X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2_ptsz_params, begin_capture, true, read_handles) \
  X(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph_params, begin_capture, false, read_handles) \
  X(cuStreamBeginCaptureToGraph_ptsz, cuStreamBeginCaptureToGraph_ptsz_params, begin_capture, true,           \
    read_handles)                                                                                       \
  X(cuStreamEndCapture, cuStreamEndCapture_params, end_capture, false, read_handles)                    \
  X(cuStreamEndCapture_ptsz, cuStreamEndCapture_ptsz_params, end_capture, true, read_handles)          \
  X(cuStreamDestroy_v2, cuStreamDestroy_v2_params, destroy_stream, false, read_handles)                 \
  X(cuEventRecord, cuEventRecord_params, record_event, false, read_handles)                             \
  X(cuEventRecord_ptsz, cuEventRecord_ptsz_params, record_event, true, read_handles)                    \
  X(cuEventRecordWithFlags, cuEventRecordWithFlags_params, record_event, false, read_handles)           \
  X(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags_ptsz_params, record_event, true, read_handles)  \
  X(cuStreamWaitEvent, cuStreamWaitEvent_params, wait_event, false, read_handles)                       \
  X(cuStreamWaitEvent_ptsz, cuStreamWaitEvent_ptsz_params, wait_event, true, read_handles)             \
  X(cuEventDestroy_v2, cuEventDestroy_v2_params, destroy_event, false, read_handles)                      \
  X(cuCtxDestroy_v2, NoParams, reset_context, false, no_stream)                                                \
  X(cuDevicePrimaryCtxReset_v2, NoParams, reset_context, false, no_stream)

// What a CUDA graph call that succeeded means for the graph records (core/graph_table).
enum class GraphCallKind : uint8_t { instantiate, update, clone, destroy_graph, destroy_exec, add_kernel_node };

// A graph call's handles, read from its params at EXIT (the out-parameters are filled then).
struct GraphCall {
  GraphCallKind kind = GraphCallKind::instantiate;
  uintptr_t exec = 0;
  uintptr_t graph = 0;     // the graph instantiated, updated from, cloned, destroyed or added to
  uintptr_t clone = 0;
  uintptr_t node = 0;      // the kernel node added
  const CUgraphNode* deps = nullptr;
  size_t dep_count = 0;
};

// X(callback id suffix, params type, GraphCallKind): every field is read by name (read_graph_call).
#define FIRSTASSERT_RUNTIME_GRAPH_CALLS(X)                                                     \
  X(cudaGraphInstantiate_v12000, cudaGraphInstantiate_v12000_params, instantiate)              \
  X(cudaGraphInstantiateWithFlags_v11040, cudaGraphInstantiateWithFlags_v11040_params, instantiate) \
  X(cudaGraphInstantiateWithParams_v12000, cudaGraphInstantiateWithParams_v12000_params, instantiate) \
  X(cudaGraphInstantiateWithParams_ptsz_v12000, cudaGraphInstantiateWithParams_ptsz_v12000_params, instantiate) \
  X(cudaGraphExecUpdate_v10020, cudaGraphExecUpdate_v10020_params, update)                     \
  X(cudaGraphClone_v10000, cudaGraphClone_v10000_params, clone)                                \
  X(cudaGraphDestroy_v10000, cudaGraphDestroy_v10000_params, destroy_graph)                    \
  X(cudaGraphExecDestroy_v10000, cudaGraphExecDestroy_v10000_params, destroy_exec)             \
  X(cudaGraphAddKernelNode_v10000, cudaGraphAddKernelNode_v10000_params, add_kernel_node)

#define FIRSTASSERT_DRIVER_GRAPH_CALLS(X)                                                      \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags_params, instantiate)              \
  X(cuGraphInstantiate_v2, cuGraphInstantiate_v2_params, instantiate)                          \
  X(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_params, instantiate)            \
  X(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams_ptsz_params, instantiate)  \
  X(cuGraphExecUpdate_v2, cuGraphExecUpdate_v2_params, update)                                 \
  X(cuGraphClone, cuGraphClone_params, clone)                                                  \
  X(cuGraphDestroy, cuGraphDestroy_params, destroy_graph)                                      \
  X(cuGraphExecDestroy, cuGraphExecDestroy_params, destroy_exec)                               \
  X(cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2_params, add_kernel_node)

// Runtime calls whose result is not a cudaError_t (a string, a struct): functionReturnValue is not an error code.
#define FIRSTASSERT_RUNTIME_NON_ERROR_RESULTS(X) \
  X(cudaGetErrorString_v3020)                    \
  X(cudaGetErrorName_v6050)                      \
  X(cudaCreateChannelDesc_v3020)

// False for the calls above; every other runtime and driver call returns an error code.
bool returns_error_code(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// The launches above numbered within their domain (1-based, in table order; 0: not a launch), looked up by callback
// id in one load: every callback asks.
namespace detail {
#define FIRSTASSERT_RUNTIME_LAUNCH_NUMBER(suffix, ...) runtime_##suffix,
#define FIRSTASSERT_DRIVER_LAUNCH_NUMBER(suffix, ...) driver_##suffix,
enum RuntimeLaunch : uint8_t { not_a_runtime_launch, FIRSTASSERT_RUNTIME_LAUNCHES(FIRSTASSERT_RUNTIME_LAUNCH_NUMBER) };
enum DriverLaunch : uint8_t { not_a_driver_launch, FIRSTASSERT_DRIVER_LAUNCHES(FIRSTASSERT_DRIVER_LAUNCH_NUMBER) };
#undef FIRSTASSERT_RUNTIME_LAUNCH_NUMBER
#undef FIRSTASSERT_DRIVER_LAUNCH_NUMBER
inline constexpr uint8_t kGraphLaunchBit = 0x80;  // set beside the number of a graph (not a kernel) launch
struct LaunchNumbers {
  uint8_t runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
  uint8_t driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
};
extern const LaunchNumbers launch_numbers;
// The number with kGraphLaunchBit; 0 for any other call, of these two domains or not.
inline uint8_t launch_entry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? launch_numbers.runtime[cbid] : 0;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? launch_numbers.driver[cbid] : 0;
  return 0;
}
}  // namespace detail

// Whether cbid is one of the launches above; of a kernel (not a graph) for is_kernel_launch.
inline bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) { return detail::launch_entry(domain, cbid) != 0; }
inline bool is_kernel_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  uint8_t entry = detail::launch_entry(domain, cbid);
  return entry != 0 && (entry & detail::kGraphLaunchBit) == 0;
}

// What a call means to the recorder, by callback id, in one load: every callback asks first, so that the calls it only
// checks for an error (most of them: cudaGetDevice, cudaGetLastError, ...) cost a load and a compare when they succeed.
enum CallMeaning : uint8_t {
  kErrorOnly = 0,      // only an error it returns matters
  kSyncOnly = 1,       // a stream call whose success only proves work complete (sync_device ... blocking_copy)
  kMeaningful = 2,     // a launch, a graph call, or a stream call with other effects (capture, destroy, events)
  kNoErrorCode = 3,    // its result is not an error code (FIRSTASSERT_RUNTIME_NON_ERROR_RESULTS)
};
namespace detail {
struct CallMeanings {
  uint8_t runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
  uint8_t driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
};
extern const CallMeanings call_meanings;
}  // namespace detail
inline CallMeaning call_meaning(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? static_cast<CallMeaning>(detail::call_meanings.runtime[cbid])
                                                : kErrorOnly;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? static_cast<CallMeaning>(detail::call_meanings.driver[cbid])
                                               : kErrorOnly;
  return kErrorOnly;
}

// describe_launch, which reads a launch's params: source/launch_reader.h.
// Fills call.kind, stream and stream flag when cbid is one of the stream calls; leaves call untouched otherwise.
bool describe_stream_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, ApiCall& call);
// Fills call when cbid is one of the graph calls; params may be null (kind only), else read after the call returned.
bool describe_graph_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, GraphCall& call);

}  // namespace firstassert::source
