#include "subscriber.h"

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <mutex>

#include "api_table.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/stream_key.h"
#include "cupti_library.h"
#include "device/driver_calls.h"
#include "stack/native_stack.h"
#include "stack/python_frames.h"

namespace firstassert::cupti {
namespace {

Recording recording;  // set once before the subscription starts; what it points to is never freed

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

int32_t device_of(uintptr_t context) {
  if (context == 0) return -1;
  for (const ContextDevice& c : context_devices) {
    uintptr_t seen = c.context.load(std::memory_order_acquire);
    if (seen == context) return c.device.load(std::memory_order_relaxed);
    if (seen == 0) break;
  }
  std::lock_guard lock(context_mutex);
  int32_t device = -1;
  const DriverCalls* calls = driver_calls();
  if (calls != nullptr && calls->ctx_get_device != nullptr) {
    GuardOurCall guard;
    CUdevice d = 0;
    // During a launch callback the launch's context is current on this thread.
    if (calls->ctx_get_device(&d) == CUDA_SUCCESS) device = static_cast<int32_t>(d);
  }
  for (ContextDevice& c : context_devices) {
    if (c.context.load() == context) return c.device.load();
    if (c.context.load() == 0) {
      c.device.store(device, std::memory_order_relaxed);
      c.context.store(context, std::memory_order_release);
      break;
    }
  }
  return device;
}

std::atomic<bool> said_capture_skip{false};

// The shim's, CUPTI's and CUDA's own frames, cut from the top of every stack; collected at the first launch, when
// the CUDA libraries in use are loaded.
MachineryRanges machinery;
std::once_flag machinery_once;

// Host stacks of the launching thread, into the caller's buffers (the program's frames only).
struct Stacks {
  uintptr_t native[kMaxStackFrames + 32];
  PythonFrame python[kMaxPythonFrames];
};

void capture_stacks(LaunchEvent& launch, Stacks& stacks) {
  if (recording.stack_depth > 0) {
    std::call_once(machinery_once, [] { machinery.collect(reinterpret_cast<const void*>(&capture_stacks)); });
    size_t n = capture_native_stack(stacks.native, recording.stack_depth + 32);
    size_t skip = machinery.leading(stacks.native, n);
    launch.native_stack = stacks.native + skip;
    launch.native_depth = static_cast<uint8_t>(std::min<size_t>(n - skip, recording.stack_depth));
  }
  if (recording.python) {
    size_t depth = recording.stack_depth > 0 ? std::min<size_t>(recording.stack_depth, kMaxPythonFrames)
                                             : kMaxPythonFrames;
    launch.python_stack = stacks.python;
    launch.python_depth = static_cast<uint8_t>(capture_python_stack(stacks.python, depth));
  }
}

// After a launch the program made: the breadcrumb, then the forced synchronization FIRSTASSERT_SYNC asks for.
void after_launch(const LaunchEvent& launch, uint64_t seq, const char* kernel) {
  uintptr_t handle = explicit_stream_handle(launch.stream, launch.per_thread_default_stream);
  if (seq == Tracker::kNotRecorded) {
    // A launch into a capturing stream: nothing runs, and a write or a sync would break the capture.
    if (recording.sync != nullptr && recording.sync->active() && !said_capture_skip.exchange(true))
      say("FIRSTASSERT_SYNC: no forced synchronization while a stream is capturing a CUDA graph");
    return;
  }
  uint64_t key = stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id());
  if (recording.breadcrumbs != nullptr) {
    GuardOurCall guard;
    recording.breadcrumbs->after_launch(key, reinterpret_cast<CUstream>(handle), seq);
  }
  if (recording.sync == nullptr || !recording.sync->sync_after(seq, kernel)) return;
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->stream_synchronize == nullptr) return;
  CUresult r;
  {
    GuardOurCall guard;
    r = calls->stream_synchronize(reinterpret_cast<CUstream>(handle));
  }
  ApiCall sync;
  sync.domain = ApiDomain::driver;
  sync.api = "cuStreamSynchronize (forced by firstassert after the launch)";
  sync.code = r;
  sync.kind = CallKind::sync_stream;
  sync.stream = launch.stream;
  sync.per_thread_default_stream = launch.per_thread_default_stream;
  sync.context = launch.context;
  sync.launches_at_entry = seq + 1;
  recording.tracker->record_call(sync);
}

void on_exit_of_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (cb.functionReturnValue == nullptr || !returns_error_code(domain, cbid)) return;
  int code = *static_cast<const int*>(cb.functionReturnValue);
  auto context = reinterpret_cast<uintptr_t>(cb.context);
  LaunchEvent launch;
  if (describe_launch(domain, cbid, cb.functionParams, launch)) {
    launch.kernel = cb.symbolName;
    launch.context = context;
    launch.device = device_of(context);
    launch.correlation_id = cb.correlationId;
    Stacks stacks;
    if (code == 0 || (!is_sticky_error(code) && !is_status_not_error(code))) capture_stacks(launch, stacks);
    ApiDomain api_domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::runtime : ApiDomain::driver;
    if (code == 0) {
      const char* kernel = nullptr;
      uint64_t seq = recording.tracker->record_launch(launch, &kernel);
      after_launch(launch, seq, kernel);
      return;
    }
    // Refused at once (a sticky error here is only the aftermath of an earlier fault).
    if (!is_sticky_error(code) && !is_status_not_error(code))
      recording.tracker->record_launch_error(launch, api_domain, code);
  }
  ApiCall call;
  call.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::runtime : ApiDomain::driver;
  call.api = cb.functionName;
  call.code = code;
  call.context = context;
  if (describe_stream_call(domain, cbid, cb.functionParams, call) && cb.correlationData != nullptr)
    call.launches_at_entry = *cb.correlationData;
  if (code != 0 || call.kind != CallKind::other) recording.tracker->record_call(call);
}

void on_enter_of_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (recording.breadcrumbs != nullptr) {
    LaunchEvent launch;
    if (describe_launch(domain, cbid, cb.functionParams, launch)) {
      GuardOurCall guard;
      recording.breadcrumbs->before_launch(
          stream_key(launch.stream, launch.per_thread_default_stream, current_thread_id()));
      return;
    }
  }
  // What a successful sync proves complete is what was launched before it began.
  ApiCall probe;
  if (cb.correlationData != nullptr && describe_stream_call(domain, cbid, nullptr, probe))
    *cb.correlationData = recording.tracker->launch_count();
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

SubscribeResult start_recording(const Recording& r_in, const std::string& explicit_cupti_path) {
  SubscribeResult result;
  std::string why;
  CuptiLibrary lib = open_cupti(explicit_cupti_path, why);
  if (!lib) {
    result.message = why;
    return result;
  }
  result.cupti_path = lib.path;
  recording = r_in;

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
