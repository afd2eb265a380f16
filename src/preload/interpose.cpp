// Interposition hooks, generated from interpose_hooks.h. Each hook resolves the real entry point once (RTLD_NEXT,
// or what dlsym / cuGetProcAddress gave the caller), never calls a missing one, and while interposition is off, or
// for firstassert's own calls, only passes the call through. When on, it translates the call for the shared
// observer exactly as the CUPTI subscriber does: the CUPTI callback id and *_params struct of the call.
#include "interpose.h"

#include <cupti.h>
#include <dlfcn.h>
#include <link.h>

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

// The definition of name in a loaded object other than the shim, even one loaded RTLD_LOCAL (a Python extension's
// libcudart), which RTLD_NEXT does not see.
void* find_elsewhere(const char* name, const void* own) {
  struct Search {
    const char* name;
    const void* own;
    void* found;
  } search{name, own, nullptr};
  Dl_info self{};
  dladdr(own, &self);
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (s->found != nullptr || info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        Dl_info self_info{};
        if (dladdr(s->own, &self_info) != 0 && self_info.dli_fname != nullptr &&
            std::strcmp(self_info.dli_fname, info->dlpi_name) == 0)
          return 0;
        void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        if (handle == nullptr) return 0;
        void* fn = real_dlsym()(handle, s->name);
        if (fn != nullptr && fn != s->own) s->found = fn;
        dlclose(handle);
        return 0;
      },
      &search);
  return search.found;
}

// The real entry point a hook stands for: the next definition after the shim, else one in any loaded object.
void* resolve(std::atomic<void*>& slot, const char* name, const void* own) {
  void* fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  DlsymFn real = real_dlsym();
  if (real == nullptr) return nullptr;
  fn = real(RTLD_NEXT, name);
  if (fn == nullptr || fn == own) fn = find_elsewhere(name, own);
  if (fn != nullptr) slot.store(fn, std::memory_order_release);
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
    auto get = reinterpret_cast<cudaError_t (*)(const char**, const void*)>(resolve(real_cudaFuncGetName, "cudaFuncGetName", nullptr));
    const char* name = nullptr;
    return get != nullptr && get(&name, func) == cudaSuccess ? name : nullptr;
  });
}

const char* nvcc_kernel_name(cudaKernel_t kernel) {
  return name_of(kernel, [&]() -> const char* {
    const char* name = nullptr;
    auto by_kernel = reinterpret_cast<CUresult (*)(const char**, CUkernel)>(resolve(real_cuKernelGetName, "cuKernelGetName", nullptr));
    if (by_kernel != nullptr && by_kernel(&name, reinterpret_cast<CUkernel>(kernel)) == CUDA_SUCCESS) return name;
    auto by_func = reinterpret_cast<cudaError_t (*)(const char**, const void*)>(resolve(real_cudaFuncGetName, "cudaFuncGetName", nullptr));
    return by_func != nullptr && by_func(&name, kernel) == cudaSuccess ? name : nullptr;
  });
}

const char* driver_kernel_name(CUfunction f) {
  return name_of(f, [&]() -> const char* {
    auto get = reinterpret_cast<CUresult (*)(const char**, CUfunction)>(resolve(real_cuFuncGetName, "cuFuncGetName", nullptr));
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
// Keeps the runtime depth right however the call ends (an exception or a longjmp through it).
struct RuntimeScope {
  bool runtime;
  bool outermost;
  explicit RuntimeScope(bool is_runtime) : runtime(is_runtime), outermost(is_runtime && source::runtime_call_entered()) {}
  ~RuntimeScope() {
    if (runtime) source::runtime_call_exited();
  }
};

template <typename Ret, typename Params, typename Call>
Ret around(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, const Params& params, Call&& call) {
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && source::inside_runtime_call()) return call();
  RuntimeScope scope(runtime);
  if (runtime && !scope.outermost) return call();
  source::CallSite site{domain, cbid, &params, name};
  uint64_t entry = 0;
  const char* kernel = nullptr;
  try {
    entry = source::call_entered(site);
    // Named before the call: a launch that faults (CUDA_LAUNCH_BLOCKING=1, or a kernel quicker than this hook)
    // leaves the context sticky, and every later name query fails.
    if (source::is_launch(domain, cbid)) kernel = kernel_of(params);
  } catch (...) {  // nothing of firstassert's may reach the program's C code
  }
  Ret r = call();
  try {
    source::call_exited(site, static_cast<int>(r), kernel, current_context(), 0, entry);
  } catch (...) {
  }
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

// Each hook is a hidden function (so that its own address is always its own, whatever else is preloaded) and an
// exported alias under the CUDA name.
#define FIRSTASSERT_HOOK(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args)                         \
  namespace firstassert::interpose {                                                                          \
  namespace {                                                                                                 \
  std::atomic<void*> real_##name{nullptr};                                                                    \
  }                                                                                                           \
  }                                                                                                           \
  extern "C" __attribute__((visibility("hidden"))) Ret firstassert_hook_##name decl {                         \
    using Fn = Ret(*) decl;                                                                                   \
    auto fn = reinterpret_cast<Fn>(                                                                           \
        fai::resolve(fai::real_##name, #name, reinterpret_cast<const void*>(&firstassert_hook_##name)));      \
    if (fn == nullptr) return fai::missing<Ret>(#name);                                                       \
    if (!fai::active() || firstassert::source::inside_our_call()) return fn args;                            \
    Params params{FA_UNPAREN args};                                                                           \
    return fai::around<Ret>(CUPTI_CB_DOMAIN_##DOMAIN##_API, FA_CBID_##DOMAIN(cbid), #name, params,           \
                            [&] { return fn args; });                                                         \
  }                                                                                                           \
  FIRSTASSERT_INTERPOSE Ret name decl __attribute__((alias("firstassert_hook_" #name)));

FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_HOOK)
FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_HOOK)

// ---- the ways around symbol interposition: cuGetProcAddress and dlsym ---------------------------------------

namespace firstassert::interpose {
namespace {

struct Hook {
  const char* name;  // the exported symbol
  std::atomic<void*>* real;
  void* self;        // the hook's own (hidden) address
};

#define FIRSTASSERT_HOOK_ENTRY(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args) \
  {#name, &real_##name, reinterpret_cast<void*>(&firstassert_hook_##name)},

Hook hooks[] = {FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_HOOK_ENTRY) FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_HOOK_ENTRY)};

std::atomic<void*> real_cuGetProcAddress_v2{nullptr};

// The hook that stands for fn: fn must be the very entry point the hook was written for (the one the shim would
// call), or the hook itself. Anything else (another tool's wrapper, a mock, a per-thread or newer variant without a
// hook of its own, a second copy of a library) is not ours to wrap.
void* hook_for(void* fn) {
  if (fn == nullptr) return nullptr;
  for (Hook& hook : hooks) {
    if (fn == hook.self) return fn;
    if (fn == resolve(*hook.real, hook.name, hook.self)) return hook.self;
  }
  return nullptr;
}

}  // namespace
}  // namespace firstassert::interpose

extern "C" __attribute__((visibility("hidden"))) CUresult CUDAAPI firstassert_get_proc_address_v2(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult* status);

namespace firstassert::interpose {
namespace {
void* own_get_proc_address_v2() { return reinterpret_cast<void*>(&firstassert_get_proc_address_v2); }
void* real_get_proc_address_v2() {
  return resolve(real_cuGetProcAddress_v2, "cuGetProcAddress_v2", own_get_proc_address_v2());
}
}  // namespace
}  // namespace firstassert::interpose

// What cudart (>= 11.3) fetches every driver entry point through: the answer is replaced by the hook standing
// for it, when there is one (see hook_for), and asked for itself, it gives this hook.
CUresult CUDAAPI firstassert_get_proc_address_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult* status) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto real = reinterpret_cast<Fn>(fai::real_get_proc_address_v2());
  if (real == nullptr) return fai::missing<CUresult>("cuGetProcAddress_v2");
  CUresult r = real(symbol, pfn, cudaVersion, flags, status);
  if (r != CUDA_SUCCESS || pfn == nullptr || *pfn == nullptr) return r;
  if (*pfn == reinterpret_cast<void*>(real) || *pfn == fai::own_get_proc_address_v2()) {
    *pfn = fai::own_get_proc_address_v2();
  } else if (void* hook = fai::hook_for(*pfn)) {
    *pfn = hook;
  }
  return r;
}
FIRSTASSERT_INTERPOSE CUresult CUDAAPI cuGetProcAddress_v2(const char*, void**, int, cuuint64_t,
                                                            CUdriverProcAddressQueryResult*)
    __attribute__((alias("firstassert_get_proc_address_v2")));

// dlsym of a CUDA name in a given library (the assembly below sends only those here: never RTLD_NEXT or
// RTLD_DEFAULT, which depend on the caller's scope).
void* firstassert_dlsym_wrapped(void* handle, const char* name) {
  void* found = fai::real_dlsym()(handle, name);
  if (found == nullptr) return nullptr;
  if (found == fai::real_get_proc_address_v2() || found == fai::own_get_proc_address_v2())
    return fai::own_get_proc_address_v2();
  void* hook = fai::hook_for(found);
  return hook != nullptr ? hook : found;
}

// Called by the assembly when the real dlsym is not known yet (a constructor running before the shim's).
extern "C" __attribute__((visibility("hidden"))) void firstassert_resolve_dlsym() { (void)fai::real_dlsym(); }

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
1:
  cmpq $-1, %rdi
  je 2f
  testq %rdi, %rdi
  jz 2f
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
  pushq %rdi
  pushq %rsi
  subq $8, %rsp
  call firstassert_resolve_dlsym
  addq $8, %rsp
  popq %rsi
  popq %rdi
  movq firstassert_real_dlsym(%rip), %rax
  testq %rax, %rax
  jnz 1b
  xorl %eax, %eax
  ret
  .size dlsym, .-dlsym
)");
