// Interposition hooks, generated from interpose_hooks.h. Each hook resolves the real entry point once (RTLD_NEXT,
// or what dlsym / cuGetProcAddress gave the caller), never calls a missing one, and while interposition is off, or
// for firstassert's own calls, only passes the call through. When on, it translates the call for the shared
// observer exactly as the CUPTI subscriber does: the CUPTI callback id and *_params struct of the call.
#include "interpose.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>

#include "core/log.h"
#include "device/driver_calls.h"
#include "interpose_hooks.h"
#include "source/api_table.h"

// cuda.h maps the base name onto _v2; here both are defined, each under its own name.
#undef cuGetProcAddress

#define FIRSTASSERT_INTERPOSE extern "C" __attribute__((visibility("default")))

extern "C" {
// dlsym's real entry point, and the two C++ halves of the dlsym hook (the assembly below decides which runs).
__attribute__((visibility("hidden"))) void* firstassert_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) void* firstassert_dlsym_wrapped(void* handle, const char* name);
__attribute__((visibility("hidden"))) void* firstassert_dlsym_early(void* handle, const char* name);
}

namespace firstassert::interpose {
namespace {

std::atomic<bool> on{false};

using DlsymFn = void* (*)(void*, const char*);

DlsymFn real_dlsym() {
  if (firstassert_real_dlsym == nullptr) {
    // dlvsym is not hooked: it finds the real dlsym whatever the versions of glibc.
    void* fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (fn == nullptr) fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&firstassert_real_dlsym, fn, __ATOMIC_RELEASE);
  }
  return reinterpret_cast<DlsymFn>(firstassert_real_dlsym);
}

__attribute__((constructor)) void resolve_dlsym_at_load() { (void)real_dlsym(); }

void* resolve(std::atomic<void*>& slot, const char* name) {
  void* fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    DlsymFn real = real_dlsym();
    fn = real != nullptr ? real(RTLD_NEXT, name) : nullptr;
    if (fn != nullptr) slot.store(fn, std::memory_order_release);
  }
  return fn;
}

template <typename Ret>
Ret missing(const char* name) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) say("%s is not in the CUDA library this process loaded; the call fails", name);
  return static_cast<Ret>(801);  // cudaErrorNotSupported / CUDA_ERROR_NOT_SUPPORTED
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

std::atomic<void*> real_cudaFuncGetName{nullptr};
std::atomic<void*> real_cuFuncGetName{nullptr};
std::atomic<void*> real_cuKernelGetName{nullptr};

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

// One call of the program, seen through a hook: entered and exited for the observer, folded into the enclosing
// runtime call when it is one's implementation.
template <typename Ret, typename Params, typename Call>
Ret around(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, const Params& params, Call&& call) {
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (runtime ? !source::runtime_call_entered() : source::inside_runtime_call()) {
    Ret r = call();
    if (runtime) source::runtime_call_exited();
    return r;
  }
  source::CallSite site{domain, cbid, &params, name};
  uint64_t entry = source::call_entered(site);
  Ret r = call();
  if (runtime) source::runtime_call_exited();
  const char* kernel = source::is_launch(domain, cbid) ? kernel_of(params) : nullptr;
  source::call_exited(site, static_cast<int>(r), kernel, current_context(), 0, entry);
  return r;
}

}  // namespace

bool active() { return on.load(std::memory_order_acquire); }

void start(const source::Recording& recording) {
  source::start(recording);
  on.store(true, std::memory_order_release);
}

bool available() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&available), &info) == 0 || info.dli_fname == nullptr) return false;
  const char* preload = std::getenv("LD_PRELOAD");
  std::string_view self(info.dli_fname);
  self = self.substr(self.rfind('/') == std::string_view::npos ? 0 : self.rfind('/') + 1);
  return preload != nullptr && std::string_view(preload).find(self) != std::string_view::npos;
}

}  // namespace firstassert::interpose

namespace fai = firstassert::interpose;

#define FA_UNPAREN(...) __VA_ARGS__
#define FA_CBID_RUNTIME(suffix) CUPTI_RUNTIME_TRACE_CBID_##suffix
#define FA_CBID_DRIVER(suffix) CUPTI_DRIVER_TRACE_CBID_##suffix

#define FIRSTASSERT_HOOK(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args)                         \
  namespace firstassert::interpose {                                                                          \
  namespace {                                                                                                 \
  std::atomic<void*> real_##name{nullptr};                                                                    \
  }                                                                                                           \
  }                                                                                                           \
  FIRSTASSERT_INTERPOSE Ret name decl {                                                                       \
    using Fn = Ret(*) decl;                                                                                   \
    auto fn = reinterpret_cast<Fn>(fai::resolve(fai::real_##name, #name));                                    \
    if (fn == nullptr) return fai::missing<Ret>(#name);                                                       \
    if (!fai::active() || firstassert::source::inside_our_call()) return fn args;                            \
    Params params{FA_UNPAREN args};                                                                           \
    return fai::around<Ret>(CUPTI_CB_DOMAIN_##DOMAIN##_API, FA_CBID_##DOMAIN(cbid), #name, params,           \
                            [&] { return fn args; });                                                         \
  }

FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_HOOK)
FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_HOOK)

// ---- the ways around symbol interposition: cuGetProcAddress and dlsym ---------------------------------------

namespace firstassert::interpose {
namespace {

struct Hook {
  const char* name;   // the exported symbol
  const char* base;   // the name cuGetProcAddress is asked for
  bool per_thread;
  std::atomic<void*>* real;
  void* wrapper;
};

#define FIRSTASSERT_HOOK_ENTRY(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args) \
  {#name, base, per_thread, &real_##name, reinterpret_cast<void*>(&::name)},

Hook hooks[] = {FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_HOOK_ENTRY) FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_HOOK_ENTRY)};

std::atomic<void*> real_cuGetProcAddress_v2{nullptr};
std::atomic<void*> real_cuGetProcAddress{nullptr};

// The hook standing for real: keeps real as the hook's target (the first one seen) and returns the hook. A library
// whose own references to its entry points are not bound at link time hands out the preloaded hook itself (the
// symbol is interposed): then the real target is the next definition after the shim.
void* wrap(Hook& hook, void* real) {
  if (real == hook.wrapper) real = real_dlsym()(RTLD_NEXT, hook.name);
  if (real == nullptr || real == hook.wrapper) return hook.wrapper;
  void* expected = nullptr;
  hook.real->compare_exchange_strong(expected, real, std::memory_order_acq_rel);
  return hook.wrapper;
}

}  // namespace
}  // namespace firstassert::interpose

extern "C" CUresult CUDAAPI cuGetProcAddress(const char*, void**, int, cuuint64_t);

// What cudart (>= 11.3) fetches every driver entry point through.
FIRSTASSERT_INTERPOSE CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                            cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto real = reinterpret_cast<Fn>(fai::resolve(fai::real_cuGetProcAddress_v2, "cuGetProcAddress_v2"));
  if (real == nullptr) return fai::missing<CUresult>("cuGetProcAddress_v2");
  CUresult r = real(symbol, pfn, cudaVersion, flags, status);
  // Only the ABI the hooks were written for (CUDA 12 and later).
  if (r != CUDA_SUCCESS || symbol == nullptr || pfn == nullptr || *pfn == nullptr || cudaVersion < 12000) return r;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    if (*pfn != reinterpret_cast<void*>(&cuGetProcAddress_v2)) {
      void* expected = nullptr;
      fai::real_cuGetProcAddress_v2.compare_exchange_strong(expected, *pfn);
    }
    *pfn = reinterpret_cast<void*>(&cuGetProcAddress_v2);
    return r;
  }
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  fai::Hook* legacy = nullptr;
  for (fai::Hook& hook : fai::hooks) {
    if (std::strcmp(hook.base, symbol) != 0) continue;
    if (hook.per_thread == per_thread) {
      *pfn = fai::wrap(hook, *pfn);
      return r;
    }
    if (!hook.per_thread) legacy = &hook;
  }
  if (legacy != nullptr) *pfn = fai::wrap(*legacy, *pfn);  // no per-thread variant: one entry point serves both
  return r;
}

// The pre-12.0 signature under the base name.
FIRSTASSERT_INTERPOSE CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                                         cuuint64_t flags) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
  auto real = reinterpret_cast<Fn>(fai::resolve(fai::real_cuGetProcAddress, "cuGetProcAddress"));
  if (real == nullptr) return fai::missing<CUresult>("cuGetProcAddress");
  return real(symbol, pfn, cudaVersion, flags);
}

// dlsym of a CUDA name (the assembly below sends only those here; never RTLD_NEXT, which depends on the caller).
void* firstassert_dlsym_wrapped(void* handle, const char* name) {
  void* found = fai::real_dlsym()(handle, name);
  if (found == nullptr) return nullptr;
  if (std::strcmp(name, "cuGetProcAddress_v2") == 0) {
    if (found != reinterpret_cast<void*>(&cuGetProcAddress_v2)) {
      void* expected = nullptr;
      fai::real_cuGetProcAddress_v2.compare_exchange_strong(expected, found);
    }
    return reinterpret_cast<void*>(&cuGetProcAddress_v2);
  }
  for (fai::Hook& hook : fai::hooks) {
    if (std::strcmp(hook.name, name) == 0) return fai::wrap(hook, found);
  }
  return found;
}

// Called before the real dlsym was known (a constructor running before ours): resolve it, then behave as dlsym.
void* firstassert_dlsym_early(void* handle, const char* name) {
  fai::DlsymFn real = fai::real_dlsym();
  if (real == nullptr) return nullptr;
  if (handle != RTLD_NEXT && name != nullptr && name[0] == 'c' && name[1] == 'u')
    return firstassert_dlsym_wrapped(handle, name);
  return real(handle, name);
}

// dlsym itself, in assembly so that every call it does not wrap is a plain jump to the real dlsym: glibc then sees
// the caller's own return address, which RTLD_NEXT (and RTLD_DEFAULT's local scope) are resolved against.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  movq firstassert_real_dlsym(%rip), %rax
  testq %rax, %rax
  jz 3f
  cmpq $-1, %rdi
  je 2f
  testq %rsi, %rsi
  jz 2f
  cmpb $0x63, (%rsi)
  jne 2f
  cmpb $0x75, 1(%rsi)
  jne 2f
  jmp firstassert_dlsym_wrapped
2:
  jmp *%rax
3:
  jmp firstassert_dlsym_early
  .size dlsym, .-dlsym
)");
