// The exported driver entry points (libcuda.so.1). Each is traced for CUPTI's driver domain with its genuine
// *_params struct, then handed to the simulated device. Versioned names (_v2, _ptsz, _ptds) are exported exactly as
// NVIDIA's library exports them; cuGetProcAddress (proc_address.cpp) maps the base names onto them.
#include <cuda.h>

#include <algorithm>
#include <cstring>

#include "../common/api_trace.h"
#include "../common/error_table.h"
#include "api_support.h"  // also CUDA's generated_cuda_meta.h, which has no include guard
#include "device.h"
#include "device_properties.h"
#include "driver_state.h"
#include "graph.h"
#include "kernel_registry.h"
#include "module_loader.h"
#include "tool_events.h"

namespace {

using simcuda::Device;
using simcuda::Kernel;
using simcuda::Stream;
using namespace simcuda::driver_api;

// cuCtxSynchronize takes no argument, so CUDA's meta header has no params struct for it.
struct cuCtxSynchronize_params {};

CUresult launch(CUfunction function, dim3 grid, dim3 block, unsigned shared, CUstream handle, bool per_thread,
                void** params, void** extra) {
  Stream* stream = nullptr;
  if (CUresult r = current_stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  simcuda::Work work;
  if (CUresult r = simcuda::make_kernel_work(function, grid, block, params, extra, &work); r != CUDA_SUCCESS) return r;
  return stream->device->launch(stream, std::move(work), shared);
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra, bool per_thread) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, dim3{config->gridDimX, config->gridDimY, config->gridDimZ},
                dim3{config->blockDimX, config->blockDimY, config->blockDimZ}, config->sharedMemBytes,
                config->hStream, per_thread, params, extra);
}

CUresult stream_sync(CUstream handle, bool per_thread) {
  if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  CUresult r = stream->device->synchronize(stream);
  simcuda::emit_synchronize_event(CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED, handle);
  return r;
}

CUresult stream_query(CUstream handle, bool per_thread) {
  if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  return stream->device->query(stream);
}

CUresult stream_wait_event(CUstream handle, CUevent event, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  // cuStreamWaitEvent: "The event hEvent may be from a different context or device than the stream hStream": the
  // wait orders the two devices' work.
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return stream->device->wait_event(stream, reinterpret_cast<simcuda::Event*>(event));
}

CUresult event_record(CUevent event, CUstream handle, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  auto* recorded = reinterpret_cast<simcuda::Event*>(event);
  // cuEventRecord: "hEvent and hStream must be from the same context otherwise CUDA_ERROR_INVALID_HANDLE is
  // returned" (the runtime's cudaEventRecord: "event and stream must be on the same device").
  if (recorded->device != stream->device) return CUDA_ERROR_INVALID_HANDLE;
  return stream->device->record_event(recorded, stream);
}

CUresult is_capturing(CUstream handle, CUstreamCaptureStatus* status, bool per_thread) {
  Stream* stream = nullptr;
  // Allowed on a faulted context? No: like every context call it returns the sticky error.
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *status = stream->device->capture_status(stream);
  return CUDA_SUCCESS;
}

CUresult begin_capture(CUstream handle, CUstreamCaptureMode, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  return stream->device->begin_capture(stream);
}

CUresult end_capture(CUstream handle, CUgraph* graph, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  simcuda::Graph* captured = nullptr;
  CUresult r = stream->device->end_capture(stream, &captured);
  *graph = reinterpret_cast<CUgraph>(captured);
  return r;
}

CUresult capture_info(CUstream handle, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                      const CUgraphNode** dependencies, const CUgraphEdgeData** edges, size_t* count, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t capture_id = 0;
  simcuda::Graph* captured = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t n = 0;
  *status = stream->device->capture_info(stream, &capture_id, &captured, &deps, &n);
  // The optional outputs are written only for an active capture, as on CUDA.
  if (*status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return CUDA_SUCCESS;
  if (id != nullptr) *id = capture_id;
  if (graph != nullptr) *graph = reinterpret_cast<CUgraph>(captured);
  if (dependencies != nullptr) *dependencies = deps;
  if (edges != nullptr) *edges = nullptr;  // every captured edge is a default one: CUDA gives null then
  if (count != nullptr) *count = n;
  return CUDA_SUCCESS;
}

CUresult write_value(CUstream handle, CUdeviceptr address, uint64_t value, unsigned flags, bool wide,
                     bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = wide ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = address;
  if (wide)
    op.writeValue.value64 = value;
  else
    op.writeValue.value = static_cast<cuuint32_t>(value);
  op.writeValue.flags = flags;
  if (CUresult r = simcuda::check_mem_ops(&op, 1); r != CUDA_SUCCESS) return r;
  return stream->device->mem_ops(stream, {op});
}

CUresult batch_mem_op(CUstream handle, unsigned count, const CUstreamBatchMemOpParams* ops, unsigned flags,
                      bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (flags != 0 || count > 256) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = simcuda::check_mem_ops(ops, count); r != CUDA_SUCCESS) return r;
  return stream->device->mem_ops(stream, std::vector<CUstreamBatchMemOpParams>(ops, ops + count));
}

CUresult copy(void* dst, const void* src, size_t bytes, CUstream handle, bool per_thread, bool blocking) {
  if (blocking) {
    if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
  }
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr || src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return stream->device->copy(stream, dst, src, bytes, blocking);
}

CUresult fill(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream handle, bool per_thread, bool blocking) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (!simcuda::device_accessible(reinterpret_cast<void*>(dst), bytes)) return CUDA_ERROR_INVALID_VALUE;
  return stream->device->fill(stream, reinterpret_cast<void*>(dst), value, bytes, blocking);
}

CUresult host_func(CUstream handle, CUhostFn fn, void* user_data, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return stream->device->host_func(stream, fn, user_data);
}

CUresult stream_get_id(CUstream handle, unsigned long long* id, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *id = stream->id;
  return CUDA_SUCCESS;
}

CUresult stream_get_ctx(CUstream handle, CUcontext* context, bool per_thread) {
  Stream* stream = nullptr;
  if (CUresult r = stream_ready(handle, per_thread, &stream); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = simcuda::primary_context(stream->device->ordinal());
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

// ---- initialization, devices, contexts -------------------------------------------------------------------------

CUresult CUDAAPI cuInit(unsigned int Flags) {
  return TRACED(cuInit, Flags) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return simcuda::initialize_driver();
  });
}

CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  return TRACED(cuDriverGetVersion, driverVersion) {
    if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  return TRACED(cuDeviceGetCount, count) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = simcuda::visible_device_count();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device_out, int ordinal) {
  return TRACED(cuDeviceGet, device_out, ordinal) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (device_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= simcuda::visible_device_count()) return CUDA_ERROR_INVALID_DEVICE;
    *device_out = ordinal;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  return TRACED(cuDeviceGetName, name, len, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::strncpy(name, simcuda::kDeviceName, static_cast<size_t>(len) - 1);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  return TRACED(cuDeviceGetAttribute, pi, attrib, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::optional<int> value = simcuda::device_attribute(attrib, simcuda::physical_device(dev));
    if (!value) {
      simcuda::say_unsupported_once("this cuDeviceGetAttribute attribute");
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    *pi = *value;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return TRACED(cuDevicePrimaryCtxRetain, pctx, dev) {
    if (CUresult r = device_ready(dev); r != CUDA_SUCCESS) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = simcuda::retain_primary_context(dev);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return TRACED(cuDevicePrimaryCtxRelease_v2, dev) {
    return device_ready(dev);
  });
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  return TRACED(cuCtxGetCurrent, pctx) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = simcuda::current_context();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  return TRACED(cuCtxSetCurrent, ctx) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (ctx != nullptr && !simcuda::is_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    simcuda::set_current_context(ctx);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  return TRACED(cuCtxPushCurrent_v2, ctx) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (!simcuda::is_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    simcuda::push_context(ctx);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext* pctx) {
  return TRACED(cuCtxPopCurrent_v2, pctx) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    CUcontext popped = simcuda::pop_context();
    if (popped == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx != nullptr) *pctx = popped;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device_out) {
  return TRACED(cuCtxGetDevice, device_out) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (device_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device_out = device().ordinal();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  return TRACED(cuCtxSynchronize) {
    if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
    CUresult r = device().synchronize_device();
    simcuda::emit_synchronize_event(CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, nullptr);
    return r;
  });
}

// ---- modules and functions ---------------------------------------------------------------------------------------

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  return TRACED(cuModuleLoadData, module, image) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *module = reinterpret_cast<CUmodule>(simcuda::load_module(image, {}));
    return CUDA_SUCCESS;
  });
}

// The JIT options only steer compiling PTX, which the simulator does not do.
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** optionValues) {
  return TRACED(cuModuleLoadDataEx, module, image, numOptions, options, optionValues) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *module = reinterpret_cast<CUmodule>(simcuda::load_module(image, {}));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  return TRACED(cuModuleLoad, module, fname) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (module == nullptr || fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
    simcuda::Module* loaded = nullptr;
    if (CUresult r = simcuda::load_module_file(fname, &loaded); r != CUDA_SUCCESS) return r;
    *module = reinterpret_cast<CUmodule>(loaded);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  return TRACED(cuModuleUnload, hmod) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (hmod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    delete reinterpret_cast<simcuda::Module*>(hmod);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return TRACED(cuModuleGetFunction, hfunc, hmod, name) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (hmod == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    Kernel* kernel = simcuda::module_function(*reinterpret_cast<simcuda::Module*>(hmod), name);
    if (kernel == nullptr) return CUDA_ERROR_NOT_FOUND;
    *hfunc = reinterpret_cast<CUfunction>(kernel);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) {
  return TRACED(cuFuncGetName, name, hfunc) {
    if (CUresult r = initialized(); r != CUDA_SUCCESS) return r;
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!simcuda::is_kernel(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    *name = reinterpret_cast<Kernel*>(hfunc)->name.c_str();
    return CUDA_SUCCESS;
  });
}

// ---- launches ----------------------------------------------------------------------------------------------------

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return TRACED_LAUNCH(cuLaunchKernel, f, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                       sharedMemBytes, hStream, kernelParams, extra) {
    return launch(f, dim3{gridDimX, gridDimY, gridDimZ}, dim3{blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                  hStream, false,
                  kernelParams, extra);
  });
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                     void** kernelParams, void** extra) {
  return TRACED_LAUNCH(cuLaunchKernel_ptsz, f, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                       sharedMemBytes, hStream, kernelParams, extra) {
    return launch(f, dim3{gridDimX, gridDimY, gridDimZ}, dim3{blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                  hStream, true,
                  kernelParams, extra);
  });
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return TRACED_LAUNCH(cuLaunchKernelEx, f, config, f, kernelParams, extra) {
    return launch_ex(config, f, kernelParams, extra, false);
  });
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                       void** extra) {
  return TRACED_LAUNCH(cuLaunchKernelEx_ptsz, f, config, f, kernelParams, extra) {
    return launch_ex(config, f, kernelParams, extra, true);
  });
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams) {
  return TRACED_LAUNCH(cuLaunchCooperativeKernel, f, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                       blockDimZ, sharedMemBytes, hStream, kernelParams) {
    return launch(f, dim3{gridDimX, gridDimY, gridDimZ}, dim3{blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                  hStream, false,
                  kernelParams, nullptr);
  });
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                void** kernelParams) {
  return TRACED_LAUNCH(cuLaunchCooperativeKernel_ptsz, f, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                       blockDimZ, sharedMemBytes, hStream, kernelParams) {
    return launch(f, dim3{gridDimX, gridDimY, gridDimZ}, dim3{blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                  hStream, true,
                  kernelParams, nullptr);
  });
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return TRACED(cuLaunchHostFunc, hStream, fn, userData) { return host_func(hStream, fn, userData, false); });
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData) {
  return TRACED(cuLaunchHostFunc_ptsz, hStream, fn, userData) { return host_func(hStream, fn, userData, true); });
}

// ---- stream capture (graphs themselves: graph_api.cpp) -----------------------------------------------------

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return TRACED(cuStreamBeginCapture_v2, hStream, mode) { return begin_capture(hStream, mode, false); });
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return TRACED(cuStreamBeginCapture_v2_ptsz, hStream, mode) { return begin_capture(hStream, mode, true); });
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return TRACED(cuStreamEndCapture, hStream, phGraph) { return end_capture(hStream, phGraph, false); });
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return TRACED(cuStreamEndCapture_ptsz, hStream, phGraph) { return end_capture(hStream, phGraph, true); });
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return TRACED(cuStreamIsCapturing, hStream, captureStatus) { return is_capturing(hStream, captureStatus, false); });
}

CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return TRACED(cuStreamIsCapturing_ptsz, hStream, captureStatus) {
    return is_capturing(hStream, captureStatus, true);
  });
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                          CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                          const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return TRACED(cuStreamGetCaptureInfo_v3, hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                edgeData_out, numDependencies_out) {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, false);
  });
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                               cuuint64_t* id_out, CUgraph* graph_out,
                                               const CUgraphNode** dependencies_out,
                                               const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return TRACED(cuStreamGetCaptureInfo_v3_ptsz, hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                edgeData_out, numDependencies_out) {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, true);
  });
}

// ---- streams -----------------------------------------------------------------------------------------------------

CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return TRACED(cuStreamCreate, phStream, Flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (phStream == nullptr || (Flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
    *phStream = device().create_stream(Flags);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return TRACED(cuStreamCreateWithPriority, phStream, flags, priority) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (phStream == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
    *phStream = device().create_stream(flags);
    // Out-of-range priorities are clamped, as CUDA documents; the simulated device records, not schedules, them.
    reinterpret_cast<Stream*>(*phStream)->priority =
        std::clamp(priority, simcuda::kGreatestStreamPriority, simcuda::kLeastStreamPriority);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  return TRACED(cuStreamDestroy_v2, hStream) {
    Stream* stream = nullptr;
    if (CUresult r = stream_ready(hStream, false, &stream); r != CUDA_SUCCESS) return r;
    if (hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD)
      return CUDA_ERROR_INVALID_HANDLE;
    return stream->device->destroy_stream(stream);
  });
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  return TRACED(cuStreamSynchronize, hStream) { return stream_sync(hStream, false); });
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) {
  return TRACED(cuStreamSynchronize_ptsz, hStream) { return stream_sync(hStream, true); });
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  return TRACED(cuStreamQuery, hStream) { return stream_query(hStream, false); });
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) {
  return TRACED(cuStreamQuery_ptsz, hStream) { return stream_query(hStream, true); });
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return TRACED(cuStreamWaitEvent, hStream, hEvent, Flags) { return stream_wait_event(hStream, hEvent, false); });
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return TRACED(cuStreamWaitEvent_ptsz, hStream, hEvent, Flags) { return stream_wait_event(hStream, hEvent, true); });
}

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  return TRACED(cuStreamGetId, hStream, streamId) { return stream_get_id(hStream, streamId, false); });
}

CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long* streamId) {
  return TRACED(cuStreamGetId_ptsz, hStream, streamId) { return stream_get_id(hStream, streamId, true); });
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  return TRACED(cuStreamGetCtx, hStream, pctx) { return stream_get_ctx(hStream, pctx, false); });
}

CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext* pctx) {
  return TRACED(cuStreamGetCtx_ptsz, hStream, pctx) { return stream_get_ctx(hStream, pctx, true); });
}

// Stream memory operations: ordered after all prior work on the stream; never executed once the device faulted;
// into a capturing stream, a batch memory-operation node (graph.h).
CUresult CUDAAPI cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  return TRACED(cuStreamWriteValue32_v2, stream, addr, value, flags) {
    return write_value(stream, addr, value, flags, false, false);
  });
}

CUresult CUDAAPI cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                              unsigned int flags) {
  return TRACED(cuStreamWriteValue32_v2_ptsz, stream, addr, value, flags) {
    return write_value(stream, addr, value, flags, false, true);
  });
}

CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags) {
  return TRACED(cuStreamWriteValue64_v2, stream, addr, value, flags) {
    return write_value(stream, addr, value, flags, true, false);
  });
}

CUresult CUDAAPI cuStreamWriteValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                              unsigned int flags) {
  return TRACED(cuStreamWriteValue64_v2_ptsz, stream, addr, value, flags) {
    return write_value(stream, addr, value, flags, true, true);
  });
}

CUresult CUDAAPI cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                                      unsigned int flags) {
  return TRACED(cuStreamBatchMemOp_v2, stream, count, paramArray, flags) {
    return batch_mem_op(stream, count, paramArray, flags, false);
  });
}

CUresult CUDAAPI cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                           CUstreamBatchMemOpParams* paramArray, unsigned int flags) {
  return TRACED(cuStreamBatchMemOp_v2_ptsz, stream, count, paramArray, flags) {
    return batch_mem_op(stream, count, paramArray, flags, true);
  });
}

// ---- events ------------------------------------------------------------------------------------------------------

CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return TRACED(cuEventCreate, phEvent, Flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* event = new simcuda::Event;
    event->device = &device();
    event->flags = Flags;
    *phEvent = reinterpret_cast<CUevent>(event);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  return TRACED(cuEventRecord, hEvent, hStream) { return event_record(hEvent, hStream, false); });
}

CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return TRACED(cuEventRecord_ptsz, hEvent, hStream) { return event_record(hEvent, hStream, true); });
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  return TRACED(cuEventQuery, hEvent) {
    if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
    if (hEvent == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    // Programming Guide, "Stream and Event Behavior": cudaEventQuery and cudaEventSynchronize "will succeed even if
    // the input event is associated to a device that is different from the current device".
    auto* event = reinterpret_cast<simcuda::Event*>(hEvent);
    return event->device->query_event(event);
  });
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  return TRACED(cuEventSynchronize, hEvent) {
    if (CUresult r = sync_ready(); r != CUDA_SUCCESS) return r;
    if (hEvent == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    auto* event = reinterpret_cast<simcuda::Event*>(hEvent);
    return event->device->synchronize_event(event);
  });
}

CUresult CUDAAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return TRACED(cuEventElapsedTime_v2, pMilliseconds, hStart, hEnd) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pMilliseconds == nullptr || hStart == nullptr || hEnd == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    auto* start = reinterpret_cast<simcuda::Event*>(hStart);
    auto* end = reinterpret_cast<simcuda::Event*>(hEnd);
    if (!start->completed_at_ns || !end->completed_at_ns) return CUDA_ERROR_INVALID_HANDLE;
    // Programming Guide, "Stream and Event Behavior": "cudaEventElapsedTime() will fail if the two input events are
    // associated to different devices."
    if (start->device != end->device) return CUDA_ERROR_INVALID_HANDLE;
    int64_t t0 = start->completed_at_ns->load(), t1 = end->completed_at_ns->load();
    if (t0 == 0 || t1 == 0) return CUDA_ERROR_NOT_READY;
    *pMilliseconds = static_cast<float>(t1 - t0) / 1e6f;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  return TRACED(cuEventDestroy_v2, hEvent) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (hEvent == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    delete reinterpret_cast<simcuda::Event*>(hEvent);
    return CUDA_SUCCESS;
  });
}

// ---- memory ------------------------------------------------------------------------------------------------------

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return TRACED(cuMemAlloc_v2, dptr, bytesize) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    void* p = simcuda::allocate(bytesize, simcuda::Memory::Device, device().ordinal());
    if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = reinterpret_cast<CUdeviceptr>(p);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  return TRACED(cuMemFree_v2, dptr) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (dptr == 0) return CUDA_SUCCESS;
    // Freeing device memory waits for the device, as the real driver does.
    if (CUresult r = device().synchronize_device(); r != CUDA_SUCCESS) return r;
    return simcuda::release(reinterpret_cast<void*>(dptr), simcuda::Memory::Device) ? CUDA_SUCCESS
                                                                                     : CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return TRACED(cuMemHostAlloc, pp, bytesize, Flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pp == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pp = simcuda::allocate(bytesize, simcuda::Memory::Host, device().ordinal());
    return *pp != nullptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  });
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
  return TRACED(cuMemFreeHost, p) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    return simcuda::release(p, simcuda::Memory::Host) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return TRACED(cuMemHostGetDevicePointer_v2, pdptr, p, Flags) {
    if (CUresult r = context_ready(); r != CUDA_SUCCESS) return r;
    if (pdptr == nullptr || Flags != 0 || !simcuda::is_host_allocation(p)) return CUDA_ERROR_INVALID_VALUE;
    *pdptr = reinterpret_cast<CUdeviceptr>(p);  // unified addressing: the device sees the host address
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return TRACED(cuMemcpyHtoD_v2, dstDevice, srcHost, ByteCount) {
    return copy(reinterpret_cast<void*>(dstDevice), srcHost, ByteCount, nullptr, false, true);
  });
}

CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return TRACED(cuMemcpyHtoD_v2_ptds, dstDevice, srcHost, ByteCount) {
    return copy(reinterpret_cast<void*>(dstDevice), srcHost, ByteCount, nullptr, true, true);
  });
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return TRACED(cuMemcpyDtoH_v2, dstHost, srcDevice, ByteCount) {
    return copy(dstHost, reinterpret_cast<const void*>(srcDevice), ByteCount, nullptr, false, true);
  });
}

CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return TRACED(cuMemcpyDtoH_v2_ptds, dstHost, srcDevice, ByteCount) {
    return copy(dstHost, reinterpret_cast<const void*>(srcDevice), ByteCount, nullptr, true, true);
  });
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return TRACED(cuMemcpyDtoD_v2, dstDevice, srcDevice, ByteCount) {
    return copy(reinterpret_cast<void*>(dstDevice), reinterpret_cast<const void*>(srcDevice), ByteCount, nullptr,
                false, false);
  });
}

CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return TRACED(cuMemcpyDtoD_v2_ptds, dstDevice, srcDevice, ByteCount) {
    return copy(reinterpret_cast<void*>(dstDevice), reinterpret_cast<const void*>(srcDevice), ByteCount, nullptr,
                true, false);
  });
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return TRACED(cuMemcpy, dst, src, ByteCount) {
    return copy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount, nullptr, false, true);
  });
}

CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return TRACED(cuMemcpy_ptds, dst, src, ByteCount) {
    return copy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount, nullptr, true, true);
  });
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return TRACED(cuMemcpyAsync, dst, src, ByteCount, hStream) {
    return copy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount, hStream, false, false);
  });
}

CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return TRACED(cuMemcpyAsync_ptsz, dst, src, ByteCount, hStream) {
    return copy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount, hStream, true, false);
  });
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return TRACED(cuMemsetD8_v2, dstDevice, uc, N) { return fill(dstDevice, uc, N, nullptr, false, true); });
}

CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return TRACED(cuMemsetD8_v2_ptds, dstDevice, uc, N) { return fill(dstDevice, uc, N, nullptr, true, true); });
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return TRACED(cuMemsetD8Async, dstDevice, uc, N, hStream) { return fill(dstDevice, uc, N, hStream, false, false); });
}

CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return TRACED(cuMemsetD8Async_ptsz, dstDevice, uc, N, hStream) {
    return fill(dstDevice, uc, N, hStream, true, false);
  });
}

// ---- errors ------------------------------------------------------------------------------------------------------

#define SIMCUDA_DRIVER_NAME_CASE(code, driver_name, runtime_name, text) \
  case code:                                                           \
    if (*driver_name != '\0') *pStr = driver_name;                      \
    break;
#define SIMCUDA_DRIVER_TEXT_CASE(code, driver_name, runtime_name, text) \
  case code:                                                           \
    if (*driver_name != '\0') *pStr = text;                             \
    break;

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = nullptr;
  switch (static_cast<int>(error)) { SIMCUDA_ERROR_TABLE(SIMCUDA_DRIVER_NAME_CASE) default: break; }
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = nullptr;
  switch (static_cast<int>(error)) { SIMCUDA_ERROR_TABLE(SIMCUDA_DRIVER_TEXT_CASE) default: break; }
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  if (ppExportTable == nullptr || pExportTableId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (std::memcmp(pExportTableId, &simcuda::kPrivateTableId, sizeof(CUuuid)) != 0) return CUDA_ERROR_INVALID_VALUE;
  *ppExportTable = &simcuda::private_table();
  return CUDA_SUCCESS;
}

}  // extern "C"
