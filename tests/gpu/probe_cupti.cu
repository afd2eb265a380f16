// gpu-check probes 1 and 2, on the real driver and without the shim: this program subscribes to CUPTI itself.
//   probe1  Does a runtime launch fire driver-API callbacks nested inside its runtime callback? The shim counts each
//           launch once on that assumption (docs/architecture.md, Callbacks). Printed with it: the functionName
//           strings CUPTI gives, and whether __cudaLaunchKernel's functionParams (nvcc 13's <<<>>>; no params struct
//           in CUDA 13.0's meta header) follow its argument list, as src/source/api_table.h reads them.
//   probe2  Do CUDA calls made inside a callback (the ones the shim makes there: cuCtxGetCurrent,
//           cuStreamWriteValue64, cuStreamSynchronize, and a runtime call) fire callbacks again?
//
// usage: probe_cupti LIBCUPTI
// Prints "probe1: ..." and "probe2: ..." lines. Exit status 0 when it probed, 2 when CUPTI or the driver's entry
// points could not be used (one line says why), 5 when there is no usable device.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include "probe_support.h"

namespace {

// Function pointer types from the real declarations; nothing of CUPTI or the driver is linked.
using SubscribeFn = decltype(&cuptiSubscribe);
using EnableDomainFn = decltype(&cuptiEnableDomain);
using ResultStringFn = decltype(&cuptiGetResultString);
using CtxGetCurrentFn = CUresult (*)(CUcontext*);
using StreamSynchronizeFn = CUresult (*)(CUstream);
using StreamWriteValue64Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void**, void**);

struct Driver {
  CtxGetCurrentFn ctx_get_current = nullptr;
  StreamSynchronizeFn stream_synchronize = nullptr;
  StreamWriteValue64Fn stream_write_value64 = nullptr;
  LaunchKernelFn launch_kernel = nullptr;
} driver;

// __cudaLaunchKernel's argument list (crt/device_functions.h), which is how src/source/api_table.h reads its params.
struct NvccLaunchParams {
  const void* kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

struct LaunchSeen {
  std::string api;       // what the program called
  bool runtime = false;  // the callback's domain
  std::string function_name;
  CUpti_CallbackId cbid = 0;
  std::vector<std::string> nested;  // driver callbacks (ENTER) between the runtime ENTER and EXIT
};

// Everything runs on the main thread: the callbacks come on the calling thread.
struct State {
  const char* current_api = "";  // the launch the program is making
  bool in_runtime_launch = false;
  LaunchSeen launch;
  std::vector<LaunchSeen> launches;
  std::string nvcc_params;               // what __cudaLaunchKernel's params held, read as NvccLaunchParams
  bool reenter_at_runtime_exit = false;  // make the probe2 calls from the next runtime launch's EXIT
  bool reenter_at_driver_exit = false;   // ... from the next direct driver launch's EXIT
  const char* probing = nullptr;         // the call being made from inside a callback
  std::vector<std::string> reentered;    // callbacks that arrived while probing
  std::vector<std::string> probe2;       // one line per call made inside a callback
  bool any_reentry = false;
  CUdeviceptr slot = 0;  // host-mapped memory for cuStreamWriteValue64
  cudaStream_t stream = nullptr;
} state;

bool is_runtime_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
#if CUDART_VERSION >= 13000
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
#endif
      return true;
    default:
      return false;
  }
}

bool is_driver_launch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
}

std::string describe(CUpti_CallbackDomain domain, const CUpti_CallbackData* data) {
  return std::string(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime " : "driver ") +
         (data->functionName != nullptr ? data->functionName : "?") +
         (data->callbackSite == CUPTI_API_ENTER ? " ENTER" : " EXIT");
}

void read_nvcc_params(const CUpti_CallbackData* data) {
#if CUDART_VERSION >= 13000
  const auto* p = static_cast<const NvccLaunchParams*>(data->functionParams);
  char text[256];
  std::snprintf(text, sizeof text, "grid (%u,%u,%u) block (%u,%u,%u) shared %zu stream %s", p->gridDim.x, p->gridDim.y,
                p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z, p->sharedMem,
                p->stream == state.stream ? "= the launch's" : "differs from the launch's");
  state.nvcc_params = text;
#else
  (void)data;
#endif
}

// The calls the shim makes from inside its callbacks, made here from inside one, each noting what it re-fired.
void call_inside(const char* where) {
  struct Call {
    const char* name;
    int (*make)();
  };
  static const Call calls[] = {
      {"cuCtxGetCurrent",
       [] {
         CUcontext c = nullptr;
         return static_cast<int>(driver.ctx_get_current(&c));
       }},
      {"cuStreamWriteValue64",
       [] {
         return static_cast<int>(
             driver.stream_write_value64(reinterpret_cast<CUstream>(state.stream), state.slot, 42, 0));
       }},
      {"cuStreamSynchronize",
       [] { return static_cast<int>(driver.stream_synchronize(reinterpret_cast<CUstream>(state.stream))); }},
      {"cudaStreamQuery", [] { return static_cast<int>(cudaStreamQuery(state.stream)); }},
  };
  for (const Call& call : calls) {
    state.reentered.clear();
    state.probing = call.name;
    int result = call.make();
    state.probing = nullptr;
    std::string fired;
    for (const std::string& r : state.reentered) fired += (fired.empty() ? "" : ", ") + r;
    state.any_reentry = state.any_reentry || !state.reentered.empty();
    state.probe2.push_back(std::string("inside the EXIT callback of ") + where + ": " + call.name + " returned " +
                           std::to_string(result) + " and fired " + std::to_string(state.reentered.size()) +
                           " callbacks" + (fired.empty() ? "" : " (" + fired + ")"));
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* raw) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(raw);
  if (state.probing != nullptr) {
    state.reentered.push_back(describe(domain, data));
    return;
  }
  bool enter = data->callbackSite == CUPTI_API_ENTER;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && is_runtime_launch(cbid)) {
    if (enter) {
      state.in_runtime_launch = true;
      state.launch =
          LaunchSeen{state.current_api, true, data->functionName != nullptr ? data->functionName : "?", cbid, {}};
#if CUDART_VERSION >= 13000
      if (cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) read_nvcc_params(data);
#endif
      return;
    }
    state.in_runtime_launch = false;
    state.launches.push_back(state.launch);
    if (state.reenter_at_runtime_exit) {
      state.reenter_at_runtime_exit = false;
      call_inside(data->functionName != nullptr ? data->functionName : "a runtime launch");
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (state.in_runtime_launch) {
      if (enter) state.launch.nested.push_back(data->functionName != nullptr ? data->functionName : "?");
      return;
    }
    if (is_driver_launch(cbid) && !enter) {
      state.launches.push_back(
          LaunchSeen{state.current_api, false, data->functionName != nullptr ? data->functionName : "?", cbid, {}});
      if (state.reenter_at_driver_exit) {
        state.reenter_at_driver_exit = false;
        call_inside(data->functionName != nullptr ? data->functionName : "a driver launch");
      }
    }
  }
}

__global__ void probe_kernel(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

template <typename Fn>
bool find(void* library, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
  return out != nullptr;
}

bool launch_runtime(int* out, const char* api) {
  state.current_api = api;
  void* args[] = {&out};
  bool ok = cudaLaunchKernel(reinterpret_cast<const void*>(probe_kernel), dim3(3), dim3(64), args, 0, state.stream) ==
                cudaSuccess &&
            cudaStreamSynchronize(state.stream) == cudaSuccess;
  state.current_api = "";
  return ok;
}

bool launch_driver(CUfunction function, int* out, const char* api) {
  state.current_api = api;
  void* args[] = {&out};
  bool ok = driver.launch_kernel(function, 2, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(state.stream), args,
                                 nullptr) == CUDA_SUCCESS &&
            cudaStreamSynchronize(state.stream) == cudaSuccess;
  state.current_api = "";
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: probe_cupti LIBCUPTI\n");
    return 2;
  }
  if (!have_device()) return kNoDevice;
  cudaFree(nullptr);  // the runtime and its context are up: libcuda.so.1 is loaded
  void* cupti = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  SubscribeFn subscribe = nullptr;
  EnableDomainFn enable_domain = nullptr;
  ResultStringFn result_string = nullptr;
  if (cupti == nullptr || !find(cupti, "cuptiSubscribe", subscribe) ||
      !find(cupti, "cuptiEnableDomain", enable_domain)) {
    std::printf("probe: CUPTI at %s cannot be used: %s\n", argv[1], cupti == nullptr ? dlerror() : "missing symbols");
    return 2;
  }
  find(cupti, "cuptiGetResultString", result_string);
  if (libcuda == nullptr || !find(libcuda, "cuCtxGetCurrent", driver.ctx_get_current) ||
      !find(libcuda, "cuStreamSynchronize", driver.stream_synchronize) ||
      !find(libcuda, "cuLaunchKernel", driver.launch_kernel) ||
      !(find(libcuda, "cuStreamWriteValue64_v2", driver.stream_write_value64) ||
        find(libcuda, "cuStreamWriteValue64", driver.stream_write_value64))) {
    std::printf("probe: the driver's entry points are not all in libcuda.so.1\n");
    return 2;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r = subscribe(&subscriber, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    const char* why = "?";
    if (result_string != nullptr) result_string(r, &why);
    std::printf("probe: cuptiSubscribe failed with %s (%d)\n", why, static_cast<int>(r));
    return 2;
  }
  enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);

  int* out = nullptr;
  void* slot_host = nullptr;
  void* slot_device = nullptr;
  CUfunction function = nullptr;
  if (cudaStreamCreateWithFlags(&state.stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&out, 4096 * sizeof(int)) != cudaSuccess ||
      cudaHostAlloc(&slot_host, 64, cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer(&slot_device, slot_host, 0) != cudaSuccess ||
      cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&function), reinterpret_cast<const void*>(probe_kernel)) !=
          cudaSuccess) {
    std::printf("probe: set-up failed (%s)\n", cudaGetErrorName(cudaGetLastError()));
    return 2;
  }
  state.slot = reinterpret_cast<CUdeviceptr>(slot_device);

  bool ok = launch_runtime(out, "cudaLaunchKernel");
  state.current_api = "<<<>>>";
  probe_kernel<<<7, 96, 0, state.stream>>>(out);
  ok = ok && cudaStreamSynchronize(state.stream) == cudaSuccess;
  state.current_api = "";
  ok = ok && launch_driver(function, out, "cuLaunchKernel");
  state.reenter_at_runtime_exit = true;
  ok = ok && launch_runtime(out, "cudaLaunchKernel (probe2)");
  state.reenter_at_driver_exit = true;
  ok = ok && launch_driver(function, out, "cuLaunchKernel (probe2)");
  if (!ok)
    std::printf("probe: a launch failed (%s); what follows may be partial\n", cudaGetErrorName(cudaGetLastError()));

  bool nested_launch_seen = false, runtime_launch_seen = false;
  for (const LaunchSeen& l : state.launches) {
    std::string nested;
    bool launch_inside = false;
    for (const std::string& n : l.nested) {
      nested += (nested.empty() ? "" : ", ") + n;
      launch_inside = launch_inside || n.rfind("cuLaunch", 0) == 0;
    }
    bool runtime = l.runtime;
    if (runtime) {
      runtime_launch_seen = true;
      nested_launch_seen = nested_launch_seen || launch_inside;
    }
    std::printf("probe1: %s -> %s callback \"%s\" (cbid %u)%s%s\n", l.api.c_str(), runtime ? "runtime" : "driver",
                l.function_name.c_str(), static_cast<unsigned>(l.cbid),
                runtime ? "; driver callbacks nested inside it: " : "",
                runtime ? (nested.empty() ? "none" : nested.c_str()) : "");
  }
  if (!state.nvcc_params.empty())
    std::printf(
        "probe1: __cudaLaunchKernel functionParams read as its argument list: %s (launched with grid (7,1,1) "
        "block (96,1,1) shared 0)\n",
        state.nvcc_params.c_str());
  std::printf("probe1: answer: %s\n", !runtime_launch_seen ? "unknown (no runtime launch callback arrived)"
                                      : nested_launch_seen
                                          ? "yes, a runtime launch fires a nested driver launch callback"
                                          : "no nested driver launch callback inside runtime launches");
  for (const std::string& line : state.probe2) std::printf("probe2: %s\n", line.c_str());
  std::printf("probe2: answer: %s\n", state.probe2.empty() ? "unknown (no call was made inside a callback)"
                                      : state.any_reentry  ? "yes, calls made inside a callback fire callbacks again"
                                                           : "no, calls made inside a callback fire no callbacks");
  return 0;
}
