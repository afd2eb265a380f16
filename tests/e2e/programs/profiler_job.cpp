// A program that starts a profiler of its own while it runs, as torch.profiler's Kineto does when profile() starts:
// a CUPTI subscriber that counts the kernel launches it is shown. There is one subscriber per process, so under a
// preloaded firstassert that already records through CUPTI the profiler must be handed the slot.
//
// usage: profiler_job MODE [ROUNDS]
//   late        CUDA runs and is recorded; then the profiler subscribes (cuptiSubscribe), sees 3 launches and
//               unsubscribes, ROUNDS times (default 3); then the failing nll_loss
//   late-v2     the same through cuptiSubscribe_v2, fetched with dlsym from libcupti, named "stand-in profiler"
//   late-v2-multi  the same, asking CUPTI 13.3+ to allow several subscribers (allowMultipleSubscribers = 1)
//   early       the profiler subscribes before CUDA starts (so before firstassert does), then as late
//   fail-first  the failing nll_loss and the sync that finds it come first; then the profiler rounds, whose
//               launches fail (the context is lost)
//   burst       4 threads launch 2000 kernels each, runtime and driver launches in turn; the profiler subscribes
//               when about a third of them are done and stays
//   enabled     not preloaded: firstassert is dlopened from $FIRSTASSERT_LIB and enabled after CUDA started; the
//               profiler is refused, firstassert_disable() gives CUPTI back, the profiler subscribes, sees a launch
//               and unsubscribes, firstassert_enable() records again; then the failing nll_loss
//   busy-disable   firstassert as for enabled (or preloaded: the same library); 4 threads launch and synchronize
//               without pause while firstassert_disable() and firstassert_enable() run; then one of them launches
//               the failing nll_loss
//   disable-after-fail  firstassert as for enabled; the failing nll_loss, then firstassert_disable(), then exit
// Prints "subscribe: RESULT" for each subscription, "profiler saw: N" (launches shown to the profiler), "launches: N"
// (launches the program made that were accepted) and "sync: ERROR".
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bad_labels.h"
#include "common/subscriber_params.h"
#include "kernels/stock_kernels.h"

namespace {

std::atomic<int> profiler_saw{0};

// Kernel launches as a profiler sees them: each runtime launch once, and driver launches the program made directly.
thread_local int inside_runtime_launch = 0;
void CUPTIAPI profiler(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    inside_runtime_launch += cb->callbackSite == CUPTI_API_ENTER ? 1 : -1;
    if (cb->callbackSite == CUPTI_API_ENTER) ++profiler_saw;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
             cb->callbackSite == CUPTI_API_ENTER && inside_runtime_launch == 0) {
    ++profiler_saw;
  }
}


using SubscribeV2 = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);

enum class Api { v1, v2, v2_multiple };

// Subscribes as the profiler, enables the API domains, prints the result; nullptr when refused.
CUpti_SubscriberHandle start_profiler(Api api) {
  CUpti_SubscriberHandle handle = nullptr;
  CUptiResult r;
  if (api != Api::v1) {
    auto subscribe = reinterpret_cast<SubscribeV2>(
        dlsym(dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD), "cuptiSubscribe_v2"));
    if (subscribe == nullptr) std::exit(5);
    simcuda::SubscriberParams132 params{};
    params.structSize =
        api == Api::v2_multiple ? sizeof(simcuda::SubscriberParams132) : CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "stand-in profiler";
    params.allowMultipleSubscribers = api == Api::v2_multiple ? 1 : 0;
    r = subscribe(&handle, profiler, nullptr, reinterpret_cast<CUpti_SubscriberParams*>(&params));
  } else {
    r = cuptiSubscribe(&handle, profiler, nullptr);
  }
  const char* name = nullptr;
  cuptiGetResultString(r, &name);
  std::printf("subscribe: %s\n", name != nullptr ? name : "?");
  if (r != CUPTI_SUCCESS) return nullptr;
  cuptiEnableDomain(1, handle, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, handle, CUPTI_CB_DOMAIN_DRIVER_API);
  return handle;
}

struct Launcher {
  unsigned long long us = 0;
  void* args[1] = {&us};
  const void* busy = simkernels_host_stub("busy");
  CUfunction busy_function = nullptr;
  std::atomic<int> accepted{0};

  Launcher() {
    CUmodule module;
    cuModuleLoadData(&module, "cubin");
    cuModuleGetFunction(&busy_function, module, "_ZN10simkernels11busy_kernelEy");
  }
  void runtime_launch() { accepted += cudaLaunchKernel(busy, dim3{1}, dim3{1}, args, 0, nullptr) == cudaSuccess; }
  void driver_launch() {
    accepted += cuLaunchKernel(busy_function, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS;
  }
};

// ROUNDS of: subscribe, 3 launches seen, unsubscribe.
void profiler_rounds(Launcher& launcher, Api api, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    CUpti_SubscriberHandle handle = start_profiler(api);
    for (int i = 0; i < 3; ++i) launcher.runtime_launch();
    if (handle != nullptr) cuptiUnsubscribe(handle);
    launcher.runtime_launch();  // between profiles
  }
}

void burst(Launcher& launcher) {
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  CUcontext context = nullptr;
  cuCtxGetCurrent(&context);  // the runtime's primary context, for the driver launches of the new threads
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&launcher, t, context] {
      cuCtxSetCurrent(context);
      for (int i = 0; i < kEach; ++i) (i + t) % 2 == 0 ? launcher.runtime_launch() : launcher.driver_launch();
    });
  }
  while (launcher.accepted.load() < kThreads * kEach / 3) std::this_thread::yield();
  start_profiler(Api::v1);
  for (std::thread& t : threads) t.join();
}

int fail(BadLabelsLoss& bad, Launcher& launcher) {
  const void* loss = simkernels_host_stub("nll_loss");
  launcher.accepted += cudaLaunchKernel(loss, dim3{1}, dim3{32}, bad.args, 0, nullptr) == cudaSuccess;
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}

// firstassert as a notebook loads it (preloaded, the same library).
struct Doors {
  int (*enable)() = nullptr;
  int (*disable)() = nullptr;
};

Doors open_firstassert() {
  const char* lib = std::getenv("FIRSTASSERT_LIB");
  void* shim = lib != nullptr ? dlopen(lib, RTLD_NOW | RTLD_GLOBAL) : nullptr;
  Doors doors;
  if (shim != nullptr) {
    doors.enable = reinterpret_cast<int (*)()>(dlsym(shim, "firstassert_enable"));
    doors.disable = reinterpret_cast<int (*)()>(dlsym(shim, "firstassert_disable"));
  }
  if (doors.enable == nullptr || doors.disable == nullptr) std::exit(6);
  return doors;
}

// Threads busy inside CUDA calls while recording is switched off and on: none of them may be left unrecorded after.
int busy_disable(BadLabelsLoss& bad, Launcher& launcher) {
  Doors firstassert = open_firstassert();
  std::printf("enable: %d\n", firstassert.enable());
  std::atomic<bool> stop{false};
  std::atomic<int> idle{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      while (!stop.load()) {
        launcher.runtime_launch();
        cudaStreamSynchronize(nullptr);
      }
      ++idle;
      if (t != 0) return;
      // Alone on the stream, so that which launch failed is not the question here.
      while (idle.load() < 4) std::this_thread::yield();
      const void* loss = simkernels_host_stub("nll_loss");
      launcher.accepted += cudaLaunchKernel(loss, dim3{1}, dim3{32}, bad.args, 0, nullptr) == cudaSuccess;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::printf("disable: %d\n", firstassert.disable());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::printf("enable again: %d\n", firstassert.enable());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.store(true);
  for (std::thread& t : threads) t.join();
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(sync));
  return sync == cudaSuccess ? 0 : 1;
}

int disable_after_fail(BadLabelsLoss& bad, Launcher& launcher) {
  Doors firstassert = open_firstassert();
  std::printf("enable: %d\n", firstassert.enable());
  launcher.runtime_launch();
  int status = fail(bad, launcher);
  std::printf("disable: %d\n", firstassert.disable());
  return status;
}

int enabled_by_dlopen(BadLabelsLoss& bad, Launcher& launcher) {
  Doors firstassert = open_firstassert();
  auto enable = firstassert.enable;
  auto disable = firstassert.disable;
  std::printf("enable: %d\n", enable());
  launcher.runtime_launch();
  if (CUpti_SubscriberHandle refused = start_profiler(Api::v1)) cuptiUnsubscribe(refused);
  std::printf("disable: %d\n", disable());
  launcher.runtime_launch();  // not recorded
  CUpti_SubscriberHandle handle = start_profiler(Api::v1);
  launcher.runtime_launch();
  if (handle != nullptr) cuptiUnsubscribe(handle);
  std::printf("enable again: %d\n", enable());
  launcher.runtime_launch();
  return fail(bad, launcher);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  Api api = mode == "late-v2" ? Api::v2 : mode == "late-v2-multi" ? Api::v2_multiple : Api::v1;
  CUpti_SubscriberHandle early = nullptr;
  if (mode == "early") early = start_profiler(Api::v1);
  if (cudaFree(nullptr) != cudaSuccess) return 4;
  BadLabelsLoss bad;
  Launcher launcher;
  int status;
  if (mode == "late" || mode == "late-v2" || mode == "late-v2-multi" || mode == "early") {
    launcher.runtime_launch();
    if (early != nullptr) cuptiUnsubscribe(early);
    profiler_rounds(launcher, api, rounds);
    status = fail(bad, launcher);
  } else if (mode == "fail-first") {
    launcher.runtime_launch();
    status = fail(bad, launcher);
    profiler_rounds(launcher, Api::v1, rounds);
  } else if (mode == "burst") {
    burst(launcher);
    status = fail(bad, launcher);
  } else if (mode == "enabled") {
    status = enabled_by_dlopen(bad, launcher);
  } else if (mode == "busy-disable") {
    status = busy_disable(bad, launcher);
  } else if (mode == "disable-after-fail") {
    status = disable_after_fail(bad, launcher);
  } else {
    std::fprintf(stderr, "profiler_job: unknown mode '%s' (late, late-v2, late-v2-multi, early, fail-first, burst, enabled, busy-disable, disable-after-fail)\n",
                 mode.c_str());
    return 2;
  }
  std::printf("profiler saw: %d\n", profiler_saw.load());
  std::printf("launches: %d\n", launcher.accepted.load());
  return status;
}
