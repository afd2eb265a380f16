// The exported runtime entry points (libcudart.so.13). Like NVIDIA's runtime, each call is traced for CUPTI's
// runtime domain and then made through driver entry points fetched with cuGetProcAddress, so that every runtime
// launch also makes the nested, separately traced driver launch. The runtime keeps the per-thread last error.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_callbacks.h>
#include <cupti_runtime_cbid.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/api_trace.h"
#include "../common/error_table.h"
#include "driver_link.h"
#include "runtime_call.h"

namespace simcuda::runtime {

thread_local cudaError_t last_error = cudaSuccess;

// CUDA 13.0's meta header has no params structs for these calls; the layouts follow their argument lists.
struct cudaDeviceSynchronize_v3020_params {};
struct cudaGetLastError_v3020_params {};
struct cudaPeekAtLastError_v3020_params {};
#if CUDART_VERSION >= 13000
struct __cudaGetKernel_v13000_params {
  cudaKernel_t* kernelPtr;
  const void* entryFuncAddr;
};
struct __cudaLaunchKernel_v13000_params {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};
using __cudaLaunchKernel_ptsz_v13000_params = __cudaLaunchKernel_v13000_params;
#endif

struct CallConfiguration {
  dim3 grid, block;
  size_t shared;
  void* stream;
};
thread_local std::vector<CallConfiguration> call_configurations;  // <<<>>> pushes, the launch stub pops
// Initialization may re-enter itself on the same thread (a tool's InitializeInjection or context-created callback
// calling the runtime): a recursive mutex lets it, where a once-flag would deadlock.
std::recursive_mutex init_mutex;
std::atomic<bool> init_done{false};
std::atomic<CUresult> init_result{CUDA_ERROR_NOT_INITIALIZED};
// Each device's primary context once the runtime retained it (it keeps it for the life of the process).
std::atomic<CUcontext> primaries[kMaxRuntimeDevices] = {};
// The device cudaSetDevice chose for this thread; a thread starts on device 0. A context the thread made current
// through the driver API takes precedence (cudaGetDevice answers its device), as in NVIDIA's runtime.
thread_local int chosen_device = 0;

simcuda::ToolDispatch no_tool() { return nullptr; }

const simcuda::PrivateTable& table() {
  // Without a driver no tool can be attached: trace nothing.
  static const simcuda::PrivateTable none{sizeof(simcuda::PrivateTable), nullptr, no_tool, nullptr, nullptr, nullptr,
                                          nullptr, nullptr, nullptr, nullptr};
  return driver().loaded ? *driver().table : none;
}

cudaError_t to_runtime(CUresult r) { return static_cast<cudaError_t>(r); }

const DriverEntries& entries(bool per_thread) { return per_thread ? driver().per_thread : driver().legacy; }

CUresult primary_context(int device, CUcontext* context) {
  if (device < 0 || device >= kMaxRuntimeDevices) return CUDA_ERROR_INVALID_DEVICE;
  *context = primaries[device].load(std::memory_order_acquire);
  if (*context != nullptr) return CUDA_SUCCESS;
  std::lock_guard lock(init_mutex);
  *context = primaries[device].load();
  if (*context != nullptr) return CUDA_SUCCESS;
  CUresult r = driver().legacy.primary_ctx_retain(context, device);
  if (r == CUDA_SUCCESS) primaries[device].store(*context, std::memory_order_release);
  return r;
}

CUcontext call_context() {
  if (!driver().loaded) return nullptr;
  CUcontext current = driver().table->current_context();
  return current != nullptr ? current : primaries[chosen_device].load(std::memory_order_acquire);
}

// Lazy initialization (cuInit, the first thread's device's primary context), and the thread's device's primary
// context bound whenever the thread has none current (as cudart does after a tool pushed and popped its own).
cudaError_t prepare() {
  if (!driver().loaded) return cudaErrorInsufficientDriver;
  const DriverEntries& d = driver().legacy;
  if (!init_done.load(std::memory_order_acquire)) {
    std::lock_guard lock(init_mutex);
    if (!init_done.load()) {
      CUresult r = d.init(0);
      CUcontext context = nullptr;
      if (r == CUDA_SUCCESS) r = primary_context(chosen_device, &context);
      init_result.store(r);
      init_done.store(true, std::memory_order_release);
    }
  }
  if (CUresult r = init_result.load(); r != CUDA_SUCCESS) return to_runtime(r);
  if (driver().table->current_context() == nullptr) {
    CUcontext context = nullptr;
    if (CUresult r = primary_context(chosen_device, &context); r != CUDA_SUCCESS) return to_runtime(r);
    d.ctx_set_current(context);
  }
  return cudaSuccess;
}

// The device of the thread's current context (prepare() made one current).
int current_device() {
  int device = driver().table->context_device(driver().table->current_context());
  return device >= 0 ? device : chosen_device;
}

bool valid_device(int device) {
  int count = 0;
  return driver().legacy.device_get_count(&count) == CUDA_SUCCESS && device >= 0 && device < count;
}

// prepare(), then the context's sticky error.
cudaError_t ready() {
  if (cudaError_t e = prepare(); e != cudaSuccess) return e;
  return to_runtime(driver().table->context_error());
}

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

// A launch's invalid argument from the driver is the runtime's invalid configuration.
cudaError_t launch_result(CUresult r) {
  return r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidConfiguration : to_runtime(r);
}

CUfunction function_of(const void* stub) { return driver().loaded ? driver().table->function_for_stub(stub) : nullptr; }
const char* name_of(const void* stub) {
  CUfunction f = function_of(stub);
  return f != nullptr ? driver().table->function_name(f) : nullptr;
}



cudaError_t launch(const void* stub, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream,
                   bool per_thread) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  CUfunction f = function_of(stub);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  return launch_result(entries(per_thread).launch_kernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                                         static_cast<unsigned>(shared), stream, args, nullptr));
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* stub, void** args, bool per_thread) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  if (config == nullptr) return cudaErrorInvalidValue;
  CUfunction f = function_of(stub);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  CUlaunchConfig c{};
  c.gridDimX = config->gridDim.x;
  c.gridDimY = config->gridDim.y;
  c.gridDimZ = config->gridDim.z;
  c.blockDimX = config->blockDim.x;
  c.blockDimY = config->blockDim.y;
  c.blockDimZ = config->blockDim.z;
  c.sharedMemBytes = static_cast<unsigned>(config->dynamicSmemBytes);
  c.hStream = config->stream;
  return launch_result(entries(per_thread).launch_kernel_ex(&c, f, args, nullptr));
}

cudaError_t launch_cooperative(const void* stub, dim3 grid, dim3 block, void** args, size_t shared,
                               cudaStream_t stream, bool per_thread) {
  if (cudaError_t e = ready(); e != cudaSuccess) return e;
  CUfunction f = function_of(stub);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  return launch_result(entries(per_thread).launch_cooperative_kernel(
      f, grid.x, grid.y, grid.z, block.x, block.y, block.z, static_cast<unsigned>(shared), stream, args));
}


// A runtime kernel node's parameters as the driver takes them: the host stub (or cudaKernel_t) as its function.
cudaError_t driver_kernel_params(const cudaKernelNodeParams* in, CUDA_KERNEL_NODE_PARAMS* out) {
  if (in == nullptr) return cudaErrorInvalidValue;
  CUfunction f = function_of(in->func);
  if (f == nullptr) return cudaErrorInvalidDeviceFunction;
  *out = CUDA_KERNEL_NODE_PARAMS{};
  out->func = f;
  out->gridDimX = in->gridDim.x;
  out->gridDimY = in->gridDim.y;
  out->gridDimZ = in->gridDim.z;
  out->blockDimX = in->blockDim.x;
  out->blockDimY = in->blockDim.y;
  out->blockDimZ = in->blockDim.z;
  out->sharedMemBytes = in->sharedMemBytes;
  out->kernelParams = in->kernelParams;
  out->extra = in->extra;
  return cudaSuccess;
}


}  // namespace simcuda::runtime

using namespace simcuda::runtime;

extern "C" {

// ---- device and versions -----------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  return TRACED(cudaDriverGetVersion, v3020, driverVersion) {
    if (driverVersion == nullptr) return cudaErrorInvalidValue;
    if (!driver().loaded) {
      *driverVersion = 0;  // what the real runtime reports when no driver is installed
      return cudaSuccess;
    }
    return to_runtime(driver().legacy.driver_get_version(driverVersion));
  }));
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* runtimeVersion) {
  return TRACED(cudaRuntimeGetVersion, v3020, runtimeVersion) {
    if (runtimeVersion == nullptr) return cudaErrorInvalidValue;
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  return TRACED(cudaGetDeviceCount, v3020, count) {
    if (count == nullptr) return cudaErrorInvalidValue;
    *count = 0;  // what the runtime reports where initialization fails (no device: cudaErrorNoDevice)
    return via_driver([&] { return driver().legacy.device_get_count(count); });
  }));
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  return TRACED(cudaGetDevice, v3020, device) {
    if (device == nullptr) return cudaErrorInvalidValue;
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    *device = current_device();
    return cudaSuccess;
  }));
}

// The thread's device from now on: its primary context is retained (once) and made current, as the runtime
// initializes the device's primary context at cudaSetDevice since CUDA 12.0.
cudaError_t CUDARTAPI cudaSetDevice(int device) {
  return TRACED(cudaSetDevice, v3020, device) {
    if (cudaError_t e = prepare(); e != cudaSuccess) return e;
    cudaError_t current_error = to_runtime(driver().table->context_error());
    if (device == current_device()) {
      chosen_device = device;
      return current_error;
    }
    // Leaving a device whose context was lost is allowed: that is how a multi-GPU program carries on.
    if (!valid_device(device)) return current_error != cudaSuccess ? current_error : cudaErrorInvalidDevice;
    CUcontext context = nullptr;
    if (CUresult r = primary_context(device, &context); r != CUDA_SUCCESS) return to_runtime(r);
    chosen_device = device;
    if (CUresult r = driver().legacy.ctx_set_current(context); r != CUDA_SUCCESS) return to_runtime(r);
    // The new device's own sticky error, if its context was lost.
    return to_runtime(driver().table->context_error());
  }));
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
  return TRACED(cudaDeviceSynchronize, v3020) {
    return sync_via_driver([&] { return driver().legacy.ctx_synchronize(); });
  }));
}

// ---- errors ------------------------------------------------------------------------------------------------------

// Sticky errors cannot be cleared: they are the current context's, read again at each call. Any other error is
// returned once and reset. (A thread that moved to a healthy device no longer sees the lost one's error.)
cudaError_t CUDARTAPI cudaGetLastError(void) {
  cudaError_t sticky = driver().loaded ? to_runtime(driver().table->context_error()) : cudaSuccess;
  cudaError_t result = sticky != cudaSuccess ? sticky : last_error;
  last_error = cudaSuccess;
  cudaGetLastError_v3020_params params{};
  return simcuda::traced_call<cudaError_t>(table(), RUNTIME_SITE(cudaGetLastError, v3020), params, nullptr,
                                           call_context(),
                                           [&] { return result; });
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void) {
  cudaError_t sticky = driver().loaded ? to_runtime(driver().table->context_error()) : cudaSuccess;
  cudaPeekAtLastError_v3020_params params{};
  return simcuda::traced_call<cudaError_t>(table(), RUNTIME_SITE(cudaPeekAtLastError, v3020), params, nullptr,
                                           call_context(), [&] { return sticky != cudaSuccess ? sticky : last_error; });
}

#define SIMCUDA_RUNTIME_NAME_CASE(code, driver_name, runtime_name, text) \
  case code:                                                            \
    return runtime_name;
#define SIMCUDA_RUNTIME_TEXT_CASE(code, driver_name, runtime_name, text) \
  case code:                                                            \
    return text;

const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
  switch (static_cast<int>(error)) {
    SIMCUDA_ERROR_TABLE(SIMCUDA_RUNTIME_NAME_CASE)
    default:
      return "cudaErrorUnknown";
  }
}

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (static_cast<int>(error)) {
    SIMCUDA_ERROR_TABLE(SIMCUDA_RUNTIME_TEXT_CASE)
    default:
      return "unrecognized error code";
  }
}

// ---- kernels and launches ----------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaFuncGetName(const char** name, const void* func) {
  return TRACED(cudaFuncGetName, v12030, name, func) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (name == nullptr) return cudaErrorInvalidValue;
    *name = name_of(func);
    return *name != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction;
  }));
}

cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  return TRACED(cudaGetKernel, v12000, kernelPtr, entryFuncAddr) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (kernelPtr == nullptr) return cudaErrorInvalidValue;
    *kernelPtr = reinterpret_cast<cudaKernel_t>(function_of(entryFuncAddr));
    return *kernelPtr != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction;
  }));
}

#if CUDART_VERSION >= 13000
// What nvcc 13 emits for <<<>>>: the kernel handle once (__cudaGetKernel), then __cudaLaunchKernel per launch. nvcc 12
// calls cudaLaunchKernel instead.
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  return TRACED(__cudaGetKernel, v13000, kernelPtr, entryFuncAddr) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    if (kernelPtr == nullptr) return cudaErrorInvalidValue;
    *kernelPtr = reinterpret_cast<cudaKernel_t>(function_of(entryFuncAddr));
    return *kernelPtr != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction;
  }));
}

cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                         size_t sharedMem, cudaStream_t stream) {
  return TRACED_LAUNCH(__cudaLaunchKernel, v13000, kernel, kernel, gridDim, blockDim, args, sharedMem, stream) {
    return launch(kernel, gridDim, blockDim, args, sharedMem, stream, false);
  }));
}

cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                              size_t sharedMem, cudaStream_t stream) {
  return TRACED_LAUNCH(__cudaLaunchKernel_ptsz, v13000, kernel, kernel, gridDim, blockDim, args, sharedMem, stream) {
    return launch(kernel, gridDim, blockDim, args, sharedMem, stream, true);
  }));
}
#endif

cudaError_t CUDARTAPI cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
                                       cudaStream_t stream) {
  return TRACED_LAUNCH(cudaLaunchKernel, v7000, func, func, gridDim, blockDim, args, sharedMem, stream) {
    return launch(func, gridDim, blockDim, args, sharedMem, stream, false);
  }));
}

cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                            size_t sharedMem, cudaStream_t stream) {
  return TRACED_LAUNCH(cudaLaunchKernel_ptsz, v7000, func, func, gridDim, blockDim, args, sharedMem, stream) {
    return launch(func, gridDim, blockDim, args, sharedMem, stream, true);
  }));
}

cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return TRACED_LAUNCH(cudaLaunchKernelExC, v11060, func, config, func, args) {
    return launch_ex(config, func, args, false);
  }));
}

cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return TRACED_LAUNCH(cudaLaunchKernelExC_ptsz, v11060, func, config, func, args) {
    return launch_ex(config, func, args, true);
  }));
}

cudaError_t CUDARTAPI cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                  size_t sharedMem, cudaStream_t stream) {
  return TRACED_LAUNCH(cudaLaunchCooperativeKernel, v9000, func, func, gridDim, blockDim, args, sharedMem, stream) {
    return launch_cooperative(func, gridDim, blockDim, args, sharedMem, stream, false);
  }));
}

cudaError_t CUDARTAPI cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                       size_t sharedMem, cudaStream_t stream) {
  return TRACED_LAUNCH(cudaLaunchCooperativeKernel_ptsz, v9000, func, func, gridDim, blockDim, args, sharedMem,
                       stream) {
    return launch_cooperative(func, gridDim, blockDim, args, sharedMem, stream, true);
  }));
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return TRACED(cudaLaunchHostFunc, v10000, stream, fn, userData) {
    return via_driver([&] { return driver().legacy.launch_host_func(stream, fn, userData); });
  }));
}

// ---- what nvcc's host code calls: fat binary and kernel registration, <<<>>> configuration ------------------------

// The fat binary's device code cannot run here; kernels get their bodies from simcuda_register_kernel by name.
void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin) {
  static void* handle_storage = nullptr;
  (void)fatCubin;
  return &handle_storage;
}

void CUDARTAPI __cudaRegisterFatBinaryEnd(void**) {}
void CUDARTAPI __cudaUnregisterFatBinary(void**) {}
char CUDARTAPI __cudaInitModule(void**) { return 1; }

void CUDARTAPI __cudaRegisterFunction(void**, const char* hostFun, char* deviceFun, const char* deviceName, int,
                                      uint3*, uint3*, dim3*, dim3*, int*) {
  if (driver().loaded) driver().table->bind_host_stub(hostFun, deviceFun != nullptr ? deviceFun : deviceName);
}

unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream) {
  call_configurations.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream) {
  if (call_configurations.empty()) return cudaErrorInvalidConfiguration;
  CallConfiguration c = call_configurations.back();
  call_configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared;
  *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}

// ---- graphs ------------------------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return TRACED(cudaStreamBeginCapture, v10000, stream, mode) {
    return via_driver([&] {
      return driver().legacy.stream_begin_capture(stream, static_cast<CUstreamCaptureMode>(mode));
    });
  }));
}

cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return TRACED(cudaStreamEndCapture, v10000, stream, pGraph) {
    return via_driver([&] { return driver().legacy.stream_end_capture(stream, pGraph); });
  }));
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus) {
  return TRACED(cudaStreamIsCapturing, v10000, stream, pCaptureStatus) {
    return via_driver([&] {
      return driver().legacy.stream_is_capturing(stream, reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus));
    });
  }));
}

cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return TRACED(cudaGraphInstantiate, v12000, pGraphExec, graph, flags) {
    return via_driver([&] { return driver().legacy.graph_instantiate(pGraphExec, graph, flags); });
  }));
}

cudaError_t CUDARTAPI cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                    unsigned long long flags) {
  return TRACED(cudaGraphInstantiateWithFlags, v11040, pGraphExec, graph, flags) {
    return via_driver([&] { return driver().legacy.graph_instantiate(pGraphExec, graph, flags); });
  }));
}

cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph) {
  return TRACED(cudaGraphDestroy, v10000, graph) {
    return via_driver([&] { return driver().legacy.graph_destroy(graph); });
  }));
}

cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return TRACED(cudaGraphExecDestroy, v10000, graphExec) {
    return via_driver([&] { return driver().legacy.graph_exec_destroy(graphExec); });
  }));
}

cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return TRACED(cudaGraphLaunch, v10000, graphExec, stream) {
    return via_driver([&] { return driver().legacy.graph_launch(graphExec, stream); });
  }));
}

cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return TRACED(cudaGraphLaunch_ptsz, v10000, graphExec, stream) {
    return via_driver([&] { return driver().per_thread.graph_launch(graphExec, stream); });
  }));
}

// The runtime's graph types are the driver's (cudaGraph_t is CUgraph, cudaGraphNode_t is CUgraphNode), and its
// parameter structs lay out as the driver's do, except for kernel nodes, whose function is a host stub.
static_assert(sizeof(cudaGraphInstantiateParams) == sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS) &&
              offsetof(cudaGraphInstantiateParams, result_out) == offsetof(CUDA_GRAPH_INSTANTIATE_PARAMS, result_out));
static_assert(sizeof(cudaGraphExecUpdateResultInfo) == sizeof(CUgraphExecUpdateResultInfo) &&
              offsetof(cudaGraphExecUpdateResultInfo, errorFromNode) ==
                  offsetof(CUgraphExecUpdateResultInfo, errorFromNode));
static_assert(sizeof(cudaGraphEdgeData) == sizeof(CUgraphEdgeData));
static_assert(std::is_same_v<cudaGraphNode_t, CUgraphNode> && std::is_same_v<cudaGraph_t, CUgraph>);

cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  return TRACED(cudaGraphCreate, v10000, pGraph, flags) {
    return via_driver([&] { return driver().legacy.graph_create(pGraph, flags); });
  }));
}

cudaError_t CUDARTAPI cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                             const struct cudaKernelNodeParams* pNodeParams) {
  return TRACED(cudaGraphAddKernelNode, v10000, pGraphNode, graph, pDependencies, numDependencies, pNodeParams) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    CUDA_KERNEL_NODE_PARAMS params;
    if (cudaError_t e = driver_kernel_params(pNodeParams, &params); e != cudaSuccess) return e;
    return to_runtime(
        driver().legacy.graph_add_kernel_node(pGraphNode, graph, pDependencies, numDependencies, &params));
  }));
}

cudaError_t CUDARTAPI cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                   const struct cudaKernelNodeParams* pNodeParams) {
  return TRACED(cudaGraphKernelNodeSetParams, v10000, node, pNodeParams) {
    if (cudaError_t e = ready(); e != cudaSuccess) return e;
    CUDA_KERNEL_NODE_PARAMS params;
    if (cudaError_t e = driver_kernel_params(pNodeParams, &params); e != cudaSuccess) return e;
    return to_runtime(driver().legacy.graph_kernel_node_set_params(node, &params));
  }));
}

cudaError_t CUDARTAPI cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams* pNodeParams) {
  return TRACED(cudaGraphKernelNodeGetParams, v10000, node, pNodeParams) {
    if (pNodeParams == nullptr) return cudaErrorInvalidValue;
    CUDA_KERNEL_NODE_PARAMS params{};
    cudaError_t e = query_via_driver([&] { return driver().legacy.graph_kernel_node_get_params(node, &params); });
    if (e != cudaSuccess) return e;
    CUfunction f = params.func != nullptr ? params.func : reinterpret_cast<CUfunction>(params.kern);
    pNodeParams->func = const_cast<void*>(driver().table->host_stub_of(f));
    pNodeParams->gridDim = dim3{params.gridDimX, params.gridDimY, params.gridDimZ};
    pNodeParams->blockDim = dim3{params.blockDimX, params.blockDimY, params.blockDimZ};
    pNodeParams->sharedMemBytes = params.sharedMemBytes;
    pNodeParams->kernelParams = params.kernelParams;
    pNodeParams->extra = params.extra;
    return cudaSuccess;
  }));
}

cudaError_t CUDARTAPI cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                            const cudaGraphNode_t* pDependencies, size_t numDependencies) {
  return TRACED(cudaGraphAddEmptyNode, v10000, pGraphNode, graph, pDependencies, numDependencies) {
    return via_driver(
        [&] { return driver().legacy.graph_add_empty_node(pGraphNode, graph, pDependencies, numDependencies); });
  }));
}

// The edge-data signatures are CUDA 13's plain names (CUDA 12.3+ named them cudaGraphAddDependencies_v2 and
// cudaGraphNodeGetDependencies_v2; PyTorch's CUDA 12 builds import neither, so the CUDA 12 runtime here has neither).
#if CUDART_VERSION >= 13000
cudaError_t CUDARTAPI cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                               const cudaGraphNode_t* to, const cudaGraphEdgeData* edgeData,
                                               size_t numDependencies) {
  return TRACED(cudaGraphAddDependencies, v12030, graph, from, to, edgeData, numDependencies) {
    return via_driver([&] {
      return driver().legacy.graph_add_dependencies(graph, from, to, reinterpret_cast<const CUgraphEdgeData*>(edgeData),
                                                    numDependencies);
    });
  }));
}
#endif

cudaError_t CUDARTAPI cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  return TRACED(cudaGraphGetNodes, v10000, graph, nodes, numNodes) {
    return query_via_driver([&] { return driver().legacy.graph_get_nodes(graph, nodes, numNodes); });
  }));
}

cudaError_t CUDARTAPI cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* pRootNodes, size_t* pNumRootNodes) {
  return TRACED(cudaGraphGetRootNodes, v10000, graph, pRootNodes, pNumRootNodes) {
    return query_via_driver([&] { return driver().legacy.graph_get_root_nodes(graph, pRootNodes, pNumRootNodes); });
  }));
}

cudaError_t CUDARTAPI cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType* pType) {
  return TRACED(cudaGraphNodeGetType, v10000, node, pType) {
    if (pType == nullptr) return cudaErrorInvalidValue;
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    cudaError_t e = query_via_driver([&] { return driver().legacy.graph_node_get_type(node, &type); });
    // The same values (a batch memory-operation node, which the runtime has no name for, is 12 as in the driver).
    if (e == cudaSuccess) *pType = static_cast<cudaGraphNodeType>(type);
    return e;
  }));
}

#if CUDART_VERSION >= 13000
cudaError_t CUDARTAPI cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* pDependencies,
                                                   cudaGraphEdgeData* edgeData, size_t* pNumDependencies) {
  return TRACED(cudaGraphNodeGetDependencies, v12030, node, pDependencies, edgeData, pNumDependencies) {
    return query_via_driver([&] {
      return driver().legacy.graph_node_get_dependencies(node, pDependencies,
                                                         reinterpret_cast<CUgraphEdgeData*>(edgeData),
                                                         pNumDependencies);
    });
  }));
}
#endif

cudaError_t CUDARTAPI cudaGraphClone(cudaGraph_t* pGraphClone, cudaGraph_t originalGraph) {
  return TRACED(cudaGraphClone, v10000, pGraphClone, originalGraph) {
    return via_driver([&] { return driver().legacy.graph_clone(pGraphClone, originalGraph); });
  }));
}

cudaError_t CUDARTAPI cudaGraphInstantiateWithParams(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                     cudaGraphInstantiateParams* instantiateParams) {
  return TRACED(cudaGraphInstantiateWithParams, v12000, pGraphExec, graph, instantiateParams) {
    return via_driver([&] {
      return driver().legacy.graph_instantiate_with_params(
          pGraphExec, graph, reinterpret_cast<CUDA_GRAPH_INSTANTIATE_PARAMS*>(instantiateParams));
    });
  }));
}

cudaError_t CUDARTAPI cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                          cudaGraphInstantiateParams* instantiateParams) {
  return TRACED(cudaGraphInstantiateWithParams_ptsz, v12000, pGraphExec, graph, instantiateParams) {
    return via_driver([&] {
      return driver().per_thread.graph_instantiate_with_params(
          pGraphExec, graph, reinterpret_cast<CUDA_GRAPH_INSTANTIATE_PARAMS*>(instantiateParams));
    });
  }));
}

cudaError_t CUDARTAPI cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                          cudaGraphExecUpdateResultInfo* resultInfo) {
  return TRACED(cudaGraphExecUpdate, v10020, hGraphExec, hGraph, resultInfo) {
    return via_driver([&] {
      return driver().legacy.graph_exec_update(hGraphExec, hGraph,
                                               reinterpret_cast<CUgraphExecUpdateResultInfo*>(resultInfo));
    });
  }));
}

// ---- streams -----------------------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* pStream) {
  return TRACED(cudaStreamCreate, v3020, pStream) {
    if (pStream == nullptr) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.stream_create(pStream, CU_STREAM_DEFAULT); });
  }));
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return TRACED(cudaStreamCreateWithFlags, v5000, pStream, flags) {
    if (pStream == nullptr) return cudaErrorInvalidValue;
    return via_driver([&] { return driver().legacy.stream_create(pStream, flags); });
  }));
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  return TRACED(cudaStreamDestroy, v5050, stream) {
    return via_driver([&] { return driver().legacy.stream_destroy(stream); });
  }));
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  return TRACED(cudaStreamSynchronize, v3020, stream) {
    return sync_via_driver([&] { return driver().legacy.stream_synchronize(stream); });
  }));
}

cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return TRACED(cudaStreamSynchronize_ptsz, v7000, stream) {
    return sync_via_driver([&] { return driver().per_thread.stream_synchronize(stream); });
  }));
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) {
  return TRACED(cudaStreamQuery, v3020, stream) {
    return sync_via_driver([&] { return driver().legacy.stream_query(stream); });
  }));
}

cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream) {
  return TRACED(cudaStreamQuery_ptsz, v7000, stream) {
    return sync_via_driver([&] { return driver().per_thread.stream_query(stream); });
  }));
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return TRACED(cudaStreamWaitEvent, v3020, stream, event, flags) {
    return via_driver([&] { return driver().legacy.stream_wait_event(stream, event, flags); });
  }));
}

cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return TRACED(cudaStreamWaitEvent_ptsz, v7000, stream, event, flags) {
    return via_driver([&] { return driver().per_thread.stream_wait_event(stream, event, flags); });
  }));
}

cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  return TRACED(cudaStreamGetId, v12000, hStream, streamId) {
    return via_driver([&] { return driver().legacy.stream_get_id(hStream, streamId); });
  }));
}

// ---- events ------------------------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  return TRACED(cudaEventCreate, v3020, event) {
    return via_driver([&] { return driver().legacy.event_create(event, CU_EVENT_DEFAULT); });
  }));
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return TRACED(cudaEventCreateWithFlags, v3020, event, flags) {
    return via_driver([&] { return driver().legacy.event_create(event, flags); });
  }));
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return TRACED(cudaEventRecord, v3020, event, stream) {
    return via_driver([&] { return driver().legacy.event_record(event, stream); });
  }));
}

cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return TRACED(cudaEventRecord_ptsz, v7000, event, stream) {
    return via_driver([&] { return driver().per_thread.event_record(event, stream); });
  }));
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
  return TRACED(cudaEventQuery, v3020, event) {
    return sync_via_driver([&] { return driver().legacy.event_query(event); });
  }));
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  return TRACED(cudaEventSynchronize, v3020, event) {
    return sync_via_driver([&] { return driver().legacy.event_synchronize(event); });
  }));
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  return TRACED(cudaEventDestroy, v3020, event) {
    return via_driver([&] { return driver().legacy.event_destroy(event); });
  }));
}

// ---- memory ------------------------------------------------------------------------------------------------------

cudaError_t CUDARTAPI cudaMalloc(void** devPtr, size_t size) {
  return TRACED(cudaMalloc, v3020, devPtr, size) {
    if (devPtr == nullptr) return cudaErrorInvalidValue;
    if (size == 0) {
      *devPtr = nullptr;  // the runtime's answer to an empty allocation, where the driver refuses size 0
      return ready();
    }
    return via_driver([&] { return driver().legacy.mem_alloc(reinterpret_cast<CUdeviceptr*>(devPtr), size); });
  }));
}

cudaError_t CUDARTAPI cudaFree(void* devPtr) {
  return TRACED(cudaFree, v3020, devPtr) {
    return via_driver([&] { return driver().legacy.mem_free(reinterpret_cast<CUdeviceptr>(devPtr)); });
  }));
}

cudaError_t CUDARTAPI cudaMallocHost(void** ptr, size_t size) {
  return TRACED(cudaMallocHost, v3020, ptr, size) {
    return via_driver([&] { return driver().legacy.mem_host_alloc(ptr, size, 0); });
  }));
}

cudaError_t CUDARTAPI cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return TRACED(cudaHostAlloc, v3020, pHost, size, flags) {
    return via_driver([&] { return driver().legacy.mem_host_alloc(pHost, size, flags); });
  }));
}

cudaError_t CUDARTAPI cudaFreeHost(void* ptr) {
  return TRACED(cudaFreeHost, v3020, ptr) {
    return via_driver([&] { return driver().legacy.mem_free_host(ptr); });
  }));
}

cudaError_t CUDARTAPI cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return TRACED(cudaHostGetDevicePointer, v3020, pDevice, pHost, flags) {
    return via_driver([&] {
      return driver().legacy.mem_host_get_device_pointer(reinterpret_cast<CUdeviceptr*>(pDevice), pHost, flags);
    });
  }));
}

// Copies go through cuMemcpy: with unified addressing the direction is implied by the pointers.
cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return TRACED(cudaMemcpy, v3020, dst, src, count, kind) {
    return sync_via_driver([&] {
      return driver().legacy.memcpy(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), count);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return TRACED(cudaMemcpy_ptds, v7000, dst, src, count, kind) {
    return sync_via_driver([&] {
      return driver().per_thread.memcpy(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                                        count);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream) {
  return TRACED(cudaMemcpyAsync, v3020, dst, src, count, kind, stream) {
    return via_driver([&] {
      return driver().legacy.memcpy_async(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                                          count, stream);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                           cudaStream_t stream) {
  return TRACED(cudaMemcpyAsync_ptsz, v7000, dst, src, count, kind, stream) {
    return via_driver([&] {
      return driver().per_thread.memcpy_async(reinterpret_cast<CUdeviceptr>(dst),
                                              reinterpret_cast<CUdeviceptr>(src), count, stream);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemset(void* devPtr, int value, size_t count) {
  return TRACED(cudaMemset, v3020, devPtr, value, count) {
    return via_driver([&] {
      return driver().legacy.memset_d8(reinterpret_cast<CUdeviceptr>(devPtr), static_cast<unsigned char>(value),
                                       count);
    });
  }));
}

// ---- more of the runtime a framework calls ------------------------------------------------------------------------

// CUDA 13's cudaEventElapsedTime is 12.8's cudaEventElapsedTime_v2 (callback id v12080); CUDA 12's plain name keeps
// its callback id of 3.2.
cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
#if CUDART_VERSION >= 13000
  return TRACED(cudaEventElapsedTime, v12080, ms, start, end) {
#else
  return TRACED(cudaEventElapsedTime, v3020, ms, start, end) {
#endif
    return via_driver([&] { return driver().legacy.event_elapsed_time(ms, start, end); });
  }));
}

cudaError_t CUDARTAPI cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return TRACED(cudaMemset_ptds, v7000, devPtr, value, count) {
    return via_driver([&] {
      return driver().per_thread.memset_d8(reinterpret_cast<CUdeviceptr>(devPtr), static_cast<unsigned char>(value),
                                           count);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return TRACED(cudaMemsetAsync, v3020, devPtr, value, count, stream) {
    return via_driver([&] {
      return driver().legacy.memset_d8_async(reinterpret_cast<CUdeviceptr>(devPtr),
                                             static_cast<unsigned char>(value), count, stream);
    });
  }));
}

cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return TRACED(cudaMemsetAsync_ptsz, v7000, devPtr, value, count, stream) {
    return via_driver([&] {
      return driver().per_thread.memset_d8_async(reinterpret_cast<CUdeviceptr>(devPtr),
                                                 static_cast<unsigned char>(value), count, stream);
    });
  }));
}

cudaError_t CUDARTAPI cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return TRACED(cudaStreamBeginCapture_ptsz, v10000, stream, mode) {
    return via_driver([&] {
      return driver().per_thread.stream_begin_capture(stream, static_cast<CUstreamCaptureMode>(mode));
    });
  }));
}

cudaError_t CUDARTAPI cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  return TRACED(cudaStreamEndCapture_ptsz, v10000, stream, pGraph) {
    return via_driver([&] { return driver().per_thread.stream_end_capture(stream, pGraph); });
  }));
}

cudaError_t CUDARTAPI cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus) {
  return TRACED(cudaStreamIsCapturing_ptsz, v10000, stream, pCaptureStatus) {
    return via_driver([&] {
      return driver().per_thread.stream_is_capturing(stream,
                                                     reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus));
    });
  }));
}

cudaError_t CUDARTAPI cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long* streamId) {
  return TRACED(cudaStreamGetId_ptsz, v12000, hStream, streamId) {
    return via_driver([&] { return driver().per_thread.stream_get_id(hStream, streamId); });
  }));
}

cudaError_t CUDARTAPI cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return TRACED(cudaLaunchHostFunc_ptsz, v10000, stream, fn, userData) {
    return via_driver([&] { return driver().per_thread.launch_host_func(stream, fn, userData); });
  }));
}

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
  return TRACED(cudaDeviceGetAttribute, v5000, value, attr, device) {
    return via_driver([&] {
      return driver().legacy.device_get_attribute(value, static_cast<CUdevice_attribute>(attr), device);
    });
  }));
}

}  // extern "C"
