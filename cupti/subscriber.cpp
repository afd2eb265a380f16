#include "subscriber.h"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "api_table.h"
#include "cupti_library.h"
#include "core/log.h"

namespace firstassert::cupti {
namespace {

Tracker* tracker = nullptr;  // set once before the subscription starts, never freed

// Set while firstassert itself calls CUDA from inside a callback: those calls are not the program's.
thread_local bool inside_our_call = false;
// Depth of the program's runtime calls on this thread: driver calls made inside them are their implementation.
thread_local int runtime_depth = 0;

struct GuardOurCall {
  GuardOurCall() { inside_our_call = true; }
  ~GuardOurCall() { inside_our_call = false; }
};

// Contexts seen so far and their device ordinals: found once per context (warm-up), then a lock-free lookup.
constexpr int kMaxContexts = 64;
struct ContextDevice {
  std::atomic<uintptr_t> context{0};
  std::atomic<int32_t> device{-1};
};
ContextDevice context_devices[kMaxContexts];
std::mutex context_mutex;
using CtxGetDevice = CUresult (*)(CUdevice*);
std::atomic<CtxGetDevice> ctx_get_device{nullptr};

int32_t device_of(uintptr_t context) {
  if (context == 0) return -1;
  for (const ContextDevice& c : context_devices) {
    uintptr_t seen = c.context.load(std::memory_order_acquire);
    if (seen == context) return c.device.load(std::memory_order_relaxed);
    if (seen == 0) break;
  }
  std::lock_guard lock(context_mutex);
  CtxGetDevice get = ctx_get_device.load();
  if (get == nullptr) {
    // The driver is loaded (a callback is running); never load it ourselves.
    if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      get = reinterpret_cast<CtxGetDevice>(dlsym(driver, "cuCtxGetDevice"));
      ctx_get_device.store(get);
    }
  }
  int32_t device = -1;
  if (get != nullptr) {
    GuardOurCall guard;
    CUdevice d = 0;
    // During a launch callback the launch's context is current on this thread.
    if (get(&d) == CUDA_SUCCESS) device = static_cast<int32_t>(d);
  }
  for (ContextDevice& c : context_devices) {
    uintptr_t expected = 0;
    if (c.context.load() == context) return c.device.load();
    if (c.context.load() == 0) {
      c.device.store(device, std::memory_order_relaxed);
      c.context.compare_exchange_strong(expected, context, std::memory_order_release);
      break;
    }
  }
  return device;
}

void on_exit_of_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (cb.functionReturnValue == nullptr || !returns_error_code(domain, cbid)) return;
  int code = *static_cast<const int*>(cb.functionReturnValue);
  auto context = reinterpret_cast<uintptr_t>(cb.context);
  if (code == 0) {
    LaunchEvent launch;
    if (describe_launch(domain, cbid, cb.functionParams, launch)) {
      launch.kernel = cb.symbolName;
      launch.context = context;
      launch.device = device_of(context);
      launch.correlation_id = cb.correlationId;
      tracker->record_launch(launch);
      return;
    }
  }
  ApiCall call;
  call.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::runtime : ApiDomain::driver;
  call.api = cb.functionName;
  call.code = code;
  call.context = context;
  if (describe_stream_call(domain, cbid, cb.functionParams, call) && cb.correlationData != nullptr)
    call.launches_at_entry = *cb.correlationData;
  if (code != 0 || call.kind != CallKind::other) tracker->record_call(call);
}

void on_enter_of_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  // What a successful sync proves complete is what was launched before it began.
  ApiCall probe;
  if (cb.correlationData != nullptr && describe_stream_call(domain, cbid, nullptr, probe))
    *cb.correlationData = tracker->launch_count();
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (inside_our_call || data == nullptr) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
    if (cb.callbackSite == CUPTI_API_ENTER) {
      if (runtime_depth++ == 0) on_enter_of_call(domain, cbid, cb);
      return;
    }
    if (runtime_depth > 0) --runtime_depth;  // a call entered before we subscribed has no ENTER
    if (runtime_depth == 0) on_exit_of_call(domain, cbid, cb);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (runtime_depth > 0) return;  // the implementation of a runtime call, already accounted for
    const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
    if (cb.callbackSite == CUPTI_API_ENTER) on_enter_of_call(domain, cbid, cb);
    else on_exit_of_call(domain, cbid, cb);
  }
  // The resource domain (context and stream creation) needs no work yet: contexts are learnt at first launch.
}

}  // namespace

SubscribeResult start_recording(Tracker& t, const std::string& explicit_cupti_path) {
  SubscribeResult result;
  std::string why;
  CuptiLibrary lib = open_cupti(explicit_cupti_path, why);
  if (!lib) {
    result.message = why;
    return result;
  }
  result.cupti_path = lib.path;
  tracker = &t;

  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (lib.subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "firstassert";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    r = lib.subscribe_v2(&subscriber, on_callback, nullptr, &params);
  } else {
    r = lib.subscribe(&subscriber, on_callback, nullptr);
  }
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    result.message = std::string("the CUPTI subscriber slot is taken") +
                     (holder[0] != '\0' ? std::string(" by ") + holder : std::string(" by another tool")) +
                     " (a profiler, compute-sanitizer or cuda-gdb?); recording is off";
    return result;
  }
  if (r != CUPTI_SUCCESS) {
    result.message = "cuptiSubscribe failed with " + lib.describe(r) + " using " + lib.path + "; recording is off";
    return result;
  }
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE}) {
    r = lib.enable_domain(1, subscriber, domain);
    if (r != CUPTI_SUCCESS) {
      lib.unsubscribe(subscriber);
      result.message = "cuptiEnableDomain failed with " + lib.describe(r) + "; recording is off";
      return result;
    }
  }
  result.recording = true;
  result.message = "recording launches through CUPTI at " + lib.path;
  return result;
}

}  // namespace firstassert::cupti
