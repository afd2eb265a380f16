// The interposition hooks' recording half, in the recorder library: the stub's hooks (stub_hooks.cpp) hand each call
// here once the recorder is loaded. While interposition is off, or for firstassert's own calls, a call only passes
// through; when on, it is translated for the shared observer exactly as the CUPTI subscriber does: the CUPTI
// callback id and *_params struct of the call (interpose_hooks.h).
#include "interpose.h"

#include <cupti.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>

#include "core/fast_tls.h"
#include "core/log.h"
#include "device/driver_calls.h"
#include "stub/interpose_hooks.h"
#include "stub/real_slot.h"
#include "source/api_table.h"

#define FIRSTASSERT_RECORDER_EXPORT extern "C" __attribute__((visibility("default")))

namespace firstassert::interpose {
namespace {

std::atomic<bool> on{false};
FirstassertStub stub{};  // set by attach(), before any hook reaches the recorder

// The real entry point, as the stub's hook calls it: asked of the stub once, then kept (kernel names are looked up
// on the launch path, so a miss is not asked again until the loader has loaded something).
void* resolve(RealSlot& slot, const char* name) {
  if (stub.real == nullptr || stub.loaded_generation == nullptr) return slot.fn.load(std::memory_order_acquire);
  return resolve_kept(slot, stub.loaded_generation, [&] { return stub.real(name); });
}

// Kernel names, asked of the CUDA libraries once per function and kept (the key is the handle the launch used).
constexpr size_t kNames = 8192;
struct KnownName {
  std::atomic<const void*> handle{nullptr};
  std::atomic<const char*> name{nullptr};
};
KnownName known_names[kNames];
std::mutex names_mutex;

template <typename Lookup>
const char* name_of(const void* handle, Lookup&& lookup) {
  if (handle == nullptr) return nullptr;
  size_t start = std::hash<const void*>{}(handle) % kNames;
  for (size_t i = 0; i < kNames; ++i) {
    const KnownName& k = known_names[(start + i) % kNames];
    const void* seen = k.handle.load(std::memory_order_acquire);
    if (seen == handle) return k.name.load(std::memory_order_relaxed);
    if (seen == nullptr) break;
  }
  const char* name = nullptr;
  {
    source::OurCall ours;
    name = lookup();
  }
  if (name == nullptr) return nullptr;
  std::lock_guard lock(names_mutex);
  for (size_t i = 0; i + 1 < kNames; ++i) {
    KnownName& k = known_names[(start + i) % kNames];
    if (k.handle.load() == handle) return k.name.load();
    if (k.handle.load() != nullptr) continue;
    k.name.store(strdup(name), std::memory_order_relaxed);
    k.handle.store(handle, std::memory_order_release);
    return k.name.load();
  }
  return name;
}

RealSlot real_cudaFuncGetName;
RealSlot real_cuFuncGetName;
RealSlot real_cuKernelGetName;

const char* runtime_kernel_name(const void* func) {
  return name_of(func, [&]() -> const char* {
    auto get = reinterpret_cast<cudaError_t (*)(const char**, const void*)>(resolve(real_cudaFuncGetName, "cudaFuncGetName"));
    const char* name = nullptr;
    return get != nullptr && get(&name, func) == cudaSuccess ? name : nullptr;
  });
}

const char* nvcc_kernel_name(cudaKernel_t kernel) {
  return name_of(kernel, [&]() -> const char* {
    const char* name = nullptr;
    auto by_kernel = reinterpret_cast<CUresult (*)(const char**, CUkernel)>(resolve(real_cuKernelGetName, "cuKernelGetName"));
    if (by_kernel != nullptr && by_kernel(&name, reinterpret_cast<CUkernel>(kernel)) == CUDA_SUCCESS) return name;
    auto by_func = reinterpret_cast<cudaError_t (*)(const char**, const void*)>(resolve(real_cudaFuncGetName, "cudaFuncGetName"));
    return by_func != nullptr && by_func(&name, kernel) == cudaSuccess ? name : nullptr;
  });
}

const char* driver_kernel_name(CUfunction f) {
  return name_of(f, [&]() -> const char* {
    auto get = reinterpret_cast<CUresult (*)(const char**, CUfunction)>(resolve(real_cuFuncGetName, "cuFuncGetName"));
    const char* name = nullptr;
    return get != nullptr && get(&name, f) == CUDA_SUCCESS ? name : nullptr;
  });
}

// The launched kernel's name, from whichever handle the call's params carry.
template <typename P>
const char* kernel_of(const P& p) {
  if constexpr (requires { p.f; }) return driver_kernel_name(p.f);
  else if constexpr (requires { p.kernel; }) return nvcc_kernel_name(p.kernel);
  else if constexpr (requires { p.func; }) return runtime_kernel_name(p.func);
  else return nullptr;
}

uintptr_t current_context() {
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->ctx_get_current == nullptr) return 0;
  source::OurCall ours;
  CUcontext context = nullptr;
  return calls->ctx_get_current(&context) == CUDA_SUCCESS ? reinterpret_cast<uintptr_t>(context) : 0;
}

FIRSTASSERT_FAST_TLS thread_local source::RuntimeNesting runtime_calls;

// One call of the program, seen through a hook: entered and exited for the observer, folded into the enclosing
// runtime call when it is one's implementation.
// Keeps the runtime depth right however the call ends (an exception or a longjmp through it).
struct RuntimeScope {
  bool runtime;
  bool outermost;
  explicit RuntimeScope(bool is_runtime) : runtime(is_runtime), outermost(is_runtime && runtime_calls.entered()) {}
  ~RuntimeScope() {
    if (runtime) runtime_calls.exited();
  }
};

template <typename Ret, typename Params, typename Call>
Ret around(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, const Params& params, Call&& call) {
  source::HookedCall hooked;  // CUPTI, if still subscribed, leaves this call (and those inside it) to us
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && runtime_calls.inside()) return call();
  RuntimeScope scope(runtime);
  if (runtime && !scope.outermost) return call();
  if (source::routine_call(domain, cbid)) {
    // Only its error matters (source::routine_call): recorded when it fails, as any call is.
    Ret r = call();
    if (static_cast<int>(r) == 0 || source::call_meaning(domain, cbid) == source::kNoErrorCode) return r;
    try {
      source::call_exited({domain, cbid, &params, name}, static_cast<int>(r), nullptr, current_context(), 0, nullptr);
    } catch (...) {
    }
    return r;
  }
  source::CallSite site{domain, cbid, &params, name};
  uint64_t entry = 0;
  const char* kernel = nullptr;
  try {
    // A launch's breadcrumb slot is taken before the call, for its device's stream: the context current then.
    if (source::is_launch(domain, cbid)) site.context = current_context();
    entry = source::call_entered(site);
    // Named before the call: a launch that faults (CUDA_LAUNCH_BLOCKING=1, or a kernel quicker than this hook)
    // leaves the context sticky, and every later name query fails.
    if (source::is_launch(domain, cbid)) kernel = kernel_of(params);
  } catch (...) {  // nothing of firstassert's may reach the program's C code
  }
  Ret r = call();
  try {
    source::call_exited(site, static_cast<int>(r), kernel, current_context(), 0, &entry);
  } catch (...) {
  }
  return r;
}

}  // namespace

bool active() { return on.load(std::memory_order_acquire); }

bool start() {
  if (stub.route_hooks == nullptr || stub.route_hooks() == 0) return false;
  on.store(true, std::memory_order_release);
  return true;
}

void stop() { on.store(false, std::memory_order_release); }

void attach(const FirstassertStub& s) { stub = s; }

bool available() { return stub.preloaded != 0; }

}  // namespace firstassert::interpose

namespace fai = firstassert::interpose;

#define FA_UNPAREN(...) __VA_ARGS__
#define FA_CBID_RUNTIME(suffix) CUPTI_RUNTIME_TRACE_CBID_##suffix
#define FA_CBID_DRIVER(suffix) CUPTI_DRIVER_TRACE_CBID_##suffix

// The recorder's implementation of each hook, with the entry point's own signature (recorder_abi.h).
#define FIRSTASSERT_RECORDER_HOOK(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args)                     \
  namespace firstassert::interpose {                                                                          \
  namespace {                                                                                                 \
  RealSlot real_##name;                                                                                       \
  }                                                                                                           \
  }                                                                                                           \
  FIRSTASSERT_RECORDER_EXPORT Ret FIRSTASSERT_RECORDER_HOOK_NAME(name) decl {                                         \
    using Fn = Ret(*) decl;                                                                                   \
    auto fn = reinterpret_cast<Fn>(fai::resolve(fai::real_##name, #name));                                    \
    if (fn == nullptr) return static_cast<Ret>(801); /* the stub found it: only a changed library gets here */ \
    if (!fai::active() || firstassert::source::inside_our_call() || firstassert::source::inside_cupti_call()) \
      return fn args; /* CUPTI records the call this one is part of */                                      \
    Params params{FA_UNPAREN args};                                                                           \
    return fai::around<Ret>(CUPTI_CB_DOMAIN_##DOMAIN##_API, FA_CBID_##DOMAIN(cbid), #name, params,           \
                            [&] { return fn args; });                                                         \
  }

FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_RECORDER_HOOK)
FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_RECORDER_HOOK)
