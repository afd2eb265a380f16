// The interposition hooks' preloaded half, generated from interpose_hooks.h: each CUDA entry point the fallback
// wraps is defined here, resolves the real one once (RTLD_NEXT, else any loaded object) and never calls a missing
// one. Until the recorder is loaded (recorder_abi.h) a hook only passes the call through; then it hands the call to the
// recorder's implementation, which records it while interposition is on. cuGetProcAddress and dlsym are covered here
// too, so that a pointer the program fetches leads to the same hooks; and CUPTI's subscription calls, so that a tool
// subscribing later is handed CUPTI. Links nothing but libc.
#include "stub_hooks.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include <atomic>
#include <cstddef>

#include "core/log.h"
#include "real_slot.h"
#include "recorder_abi.h"
#include "interpose_hooks.h"

// cuda.h maps the base name onto _v2; here both are defined, each under its own name.
#undef cuGetProcAddress

#define FIRSTASSERT_INTERPOSE extern "C" __attribute__((visibility("default")))

extern "C" {
// dlsym's real entry point, and the two C++ halves of the dlsym hook (the assembly below decides which runs).
__attribute__((visibility("hidden"))) void* firstassert_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) void* firstassert_dlsym_wrapped(void* handle, const char* name);
}

namespace firstassert::stub {
namespace {

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

// Loaded objects' names, a batch at a time: nothing may be dlopen'ed or dlclose'd from inside dl_iterate_phdr, which
// holds the loader's list lock while another thread's dlopen takes the two locks in the other order (a deadlock).
struct NameBatch {
  static constexpr size_t kNames = 16, kLength = 512;
  size_t skip = 0;   // objects before this batch
  size_t seen = 0;   // objects visited
  size_t count = 0;  // names in this batch
  bool more = false;
  const char* own_file = nullptr;
  char names[kNames][kLength];
};

int collect_name(dl_phdr_info* info, size_t, void* data) {
  auto* b = static_cast<NameBatch*>(data);
  if (b->seen++ < b->skip) return 0;
  if (b->count == NameBatch::kNames) {
    b->more = true;
    return 1;
  }
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == '\0' || strlen(name) >= NameBatch::kLength) return 0;  // unnamed, or too long
  if (b->own_file != nullptr && strcmp(b->own_file, name) == 0) return 0;
  strcpy(b->names[b->count++], name);
  return 0;
}

// The definition of name in a loaded object other than this one, even one loaded RTLD_LOCAL (a Python extension's
// libcudart), which RTLD_NEXT does not see.
void* find_elsewhere(const char* name) {
  Dl_info self{};
  const char* own_file = dladdr(reinterpret_cast<void*>(&find_elsewhere), &self) != 0 ? self.dli_fname : nullptr;
  for (size_t skip = 0;;) {
    NameBatch batch;
    batch.skip = skip;
    batch.own_file = own_file;
    dl_iterate_phdr(collect_name, &batch);
    for (size_t i = 0; i < batch.count; ++i) {
      void* handle = dlopen(batch.names[i], RTLD_LAZY | RTLD_NOLOAD);
      if (handle == nullptr) continue;
      void* found = real_dlsym()(handle, name);
      dlclose(handle);
      if (found != nullptr) return found;
    }
    if (!batch.more) return nullptr;
    skip = batch.seen - 1;  // the object that did not fit opens the next batch
  }
}

// The real entry point a hook stands for: the next definition after this object, else one in any loaded object.
void* resolve(RealSlot& slot, const char* name, const void* own) {
  if (void* kept = slot.fn.load(std::memory_order_acquire)) return kept;  // every call after the first
  DlsymFn real = real_dlsym();
  if (real == nullptr) return nullptr;
  return resolve_kept(slot, &loaded_generation, [&]() -> void* {
    void* fn = real(RTLD_NEXT, name);
    if (fn == nullptr || fn == own) fn = find_elsewhere(name);
    return fn == own ? nullptr : fn;
  });
}

template <typename Ret>
Ret missing(const char* name) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) say("%s is not in the CUDA library this process loaded; the call fails", name);
  return static_cast<Ret>(801);  // cudaErrorNotSupported / CUDA_ERROR_NOT_SUPPORTED
}

}  // namespace
}  // namespace firstassert::stub

namespace fas = firstassert::stub;

// The calls on are tail calls, so the stub leaves no frame of its own in the launch's stack. GCC makes them so by
// itself; clang (the wheel's zig toolchain) does not when arguments pass on the stack (cudaLaunchKernel) unless told.
#if defined(__clang__)
#define FIRSTASSERT_TAIL [[clang::musttail]]
#else
#define FIRSTASSERT_TAIL
#endif

// A hook is reached by an indirect jump (through the GOT, or a pointer dlsym and cuGetProcAddress gave out): built
// for control-flow enforcement, it starts with the landing instruction the compiler would have put there.
#if defined(__CET__)
#define FIRSTASSERT_HOOK_LANDING "  endbr64\n"
#else
#define FIRSTASSERT_HOOK_LANDING
#endif

// Each hook is a hidden function (so that its own address is always its own, whatever else is preloaded) and an
// exported alias under the CUDA name, written in assembly: the recorder's implementation (recorder_<name>, once the
// recorder is loaded and interposition is on), else the real entry point, is reached by a plain jump, whatever the
// parameters are (a C++ body spills the by-value dim3s of a launch before it can jump). The slots are extern "C" so
// that the assembly can name them; a call before the real entry point is known goes to firstassert_first_<name>.
#define FIRSTASSERT_STUB_HOOK(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args)                    \
  extern "C" {                                                                                                \
  __attribute__((visibility("hidden"))) firstassert::RealSlot firstassert_real_##name;                        \
  __attribute__((visibility("hidden"))) std::atomic<void*> firstassert_recorder_##name{nullptr};              \
  __attribute__((visibility("hidden"))) Ret firstassert_hook_##name decl;                                     \
  }                                                                                                           \
  static_assert(offsetof(firstassert::RealSlot, fn) == 0 && sizeof(std::atomic<void*>) == sizeof(void*),      \
                "the assembly reads the slots as plain pointers");                                           \
  /* The first call (and a CUDA without the entry point): resolve (kept in real_<name>), then the hook again. */ \
  extern "C" __attribute__((visibility("hidden"), noinline, used)) Ret firstassert_first_##name decl {        \
    if (fas::resolve(firstassert_real_##name, #name, reinterpret_cast<const void*>(&firstassert_hook_##name)) == \
        nullptr)                                                                                              \
      return fas::missing<Ret>(#name);                                                                        \
    FIRSTASSERT_TAIL return firstassert_hook_##name args;                                                     \
  }                                                                                                           \
  /* r10 and r11 carry no argument (and al, the vector-register count of a variadic call, is left alone). */  \
  asm(".pushsection .text\n"                                                                                 \
      ".globl firstassert_hook_" #name "\n"                                                                   \
      ".hidden firstassert_hook_" #name "\n"                                                                  \
      ".type firstassert_hook_" #name ", @function\n"                                                         \
      ".globl " #name "\n"                                                                                    \
      ".type " #name ", @function\n"                                                                          \
      "firstassert_hook_" #name ":\n"                                                                         \
      #name ":\n"                                                                                             \
      "  .cfi_startproc\n" /* the entry state holds throughout (rsp untouched): unwinders get through */     \
      FIRSTASSERT_HOOK_LANDING                                                                                \
      "  movq firstassert_real_" #name "(%rip), %r11\n"                                                       \
      "  testq %r11, %r11\n"                                                                                  \
      "  jz firstassert_first_" #name "\n"                                                                    \
      "  movq firstassert_recorder_" #name "(%rip), %r10\n"                                                   \
      "  testq %r10, %r10\n"                                                                                  \
      "  cmovnzq %r10, %r11\n"                                                                                \
      "  jmp *%r11\n"                                                                                         \
      "  .cfi_endproc\n"                                                                                      \
      ".size firstassert_hook_" #name ", .-firstassert_hook_" #name "\n"                                      \
      ".size " #name ", .-" #name "\n"                                                                        \
      ".popsection\n");

FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_STUB_HOOK)
FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_STUB_HOOK)

// CUPTI's subscription calls: X(name, (parameters), (arguments), the name the tool gives itself). Another tool that
// subscribes while firstassert holds CUPTI (there is one subscriber per process) would be refused; the recorder
// hands CUPTI over first (recorder/sources.h), then the call goes on, so the tool gets the slot and its callbacks.
#define FIRSTASSERT_CUPTI_SUBSCRIBE_CALLS(X)                                                                    \
  X(cuptiSubscribe, (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata),         \
    (subscriber, callback, userdata), nullptr)                                                                  \
  X(cuptiSubscribe_v2,                                                                                          \
    (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata,                          \
     CUpti_SubscriberParams* params),                                                                           \
    (subscriber, callback, userdata, params), fas::subscriber_name(params))

namespace firstassert::stub {
namespace {

// The recorder's firstassert_recorder_cupti_subscribing, once a preloaded stub has loaded it.
std::atomic<void (*)(const char*)> cupti_door{nullptr};

const char* subscriber_name(const CUpti_SubscriberParams* params) {
  constexpr size_t needed = offsetof(CUpti_SubscriberParams, subscriberName) + sizeof params->subscriberName;
  return params != nullptr && params->structSize >= needed ? params->subscriberName : nullptr;
}

}  // namespace
}  // namespace firstassert::stub

#define FIRSTASSERT_CUPTI_HOOK(name, decl, args, tool_name)                                                   \
  namespace firstassert::stub {                                                                               \
  namespace {                                                                                                 \
  RealSlot real_##name;                                                                                       \
  }                                                                                                           \
  }                                                                                                           \
  extern "C" __attribute__((visibility("hidden"))) CUptiResult CUPTIAPI firstassert_hook_##name decl {        \
    using Fn = CUptiResult(CUPTIAPI*) decl;                                                                   \
    auto fn = reinterpret_cast<Fn>(                                                                           \
        fas::resolve(fas::real_##name, #name, reinterpret_cast<const void*>(&firstassert_hook_##name)));      \
    if (fn == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;                                                    \
    if (auto door = fas::cupti_door.load(std::memory_order_acquire)) door(tool_name);                         \
    return fn args;                                                                                           \
  }                                                                                                           \
  FIRSTASSERT_INTERPOSE CUptiResult CUPTIAPI name decl __attribute__((alias("firstassert_hook_" #name)));

FIRSTASSERT_CUPTI_SUBSCRIBE_CALLS(FIRSTASSERT_CUPTI_HOOK)

namespace firstassert::stub {
namespace {

struct Hook {
  const char* name;  // the exported symbol
  RealSlot* real;
  void* self;  // the hook's own (hidden) address
  std::atomic<void*>* recorder;  // what the hook hands calls to: null until routed
  void* implementation;          // the recorder's, found when it is loaded
};

#define FIRSTASSERT_STUB_HOOK_ENTRY(DOMAIN, cbid, Params, Ret, name, base, per_thread, decl, args)      \
  {#name, &firstassert_real_##name, reinterpret_cast<void*>(&firstassert_hook_##name), &firstassert_recorder_##name, \
   nullptr},

Hook hooks[] = {FIRSTASSERT_INTERPOSED_RUNTIME(FIRSTASSERT_STUB_HOOK_ENTRY)
                    FIRSTASSERT_INTERPOSED_DRIVER(FIRSTASSERT_STUB_HOOK_ENTRY)};

// The CUPTI hooks are never routed to the recorder's implementations: they only call the recorder's door first.
#define FIRSTASSERT_CUPTI_HOOK_ENTRY(name, decl, args, tool_name) \
  {#name, &real_##name, reinterpret_cast<void*>(&firstassert_hook_##name), nullptr, nullptr},

Hook cupti_hooks[] = {FIRSTASSERT_CUPTI_SUBSCRIBE_CALLS(FIRSTASSERT_CUPTI_HOOK_ENTRY)};

RealSlot real_cuGetProcAddress_v2;

// The hook that stands for fn: fn must be the very entry point the hook was written for (the one the shim would
// call), or the hook itself. Anything else (another tool's wrapper, a mock, a per-thread or newer variant without a
// hook of its own, a second copy of a library) is not ours to wrap.
template <size_t N>
void* hook_in(Hook (&table)[N], void* fn) {
  for (Hook& hook : table) {
    if (fn == hook.self) return fn;
    if (fn == resolve(*hook.real, hook.name, hook.self)) return hook.self;
  }
  return nullptr;
}

// name: what the pointer was asked for by, when known; only CUPTI's own names are compared with CUPTI's entry points
// (each comparison may search the loaded objects once per loader generation).
void* hook_for(void* fn, const char* name = nullptr) {
  if (fn == nullptr) return nullptr;
  if (name != nullptr && strncmp(name, "cupti", 5) == 0) return hook_in(cupti_hooks, fn);
  return hook_in(hooks, fn);
}

}  // namespace

// A search that failed need not run again until this grows.
unsigned long long loaded_generation() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* data) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<unsigned long long*>(data) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

void* real_entry_point(const char* name) {
  if (name == nullptr) return nullptr;
  for (Hook& hook : hooks) {
    if (strcmp(hook.name, name) == 0) return resolve(*hook.real, hook.name, hook.self);
  }
  RealSlot unkept;  // not one of the hooks: the caller keeps what it found
  return resolve(unkept, name, nullptr);
}

void route_cupti_subscriptions(void (*door)(const char* name)) { cupti_door.store(door, std::memory_order_release); }

bool find_recorder_hooks(void* recorder) {
  for (Hook& hook : hooks) {
    char symbol[128] = "firstassert_recorder_hook_";
    strncat(symbol, hook.name, sizeof symbol - strlen(symbol) - 1);
    hook.implementation = real_dlsym() != nullptr ? real_dlsym()(recorder, symbol) : nullptr;
    if (hook.implementation == nullptr) {
      say("the recorder library has no %s; interposition stays off", symbol);
      for (Hook& h : hooks) h.implementation = nullptr;
      return false;
    }
  }
  return true;
}

bool route_recorder_hooks() {
  if (hooks[0].implementation == nullptr) return false;  // find_recorder_hooks failed, or never ran
  for (Hook& hook : hooks) hook.recorder->store(hook.implementation, std::memory_order_release);
  return true;
}

}  // namespace firstassert::stub

extern "C" __attribute__((visibility("hidden"))) CUresult CUDAAPI firstassert_get_proc_address_v2(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult* status);

namespace firstassert::stub {
namespace {
void* own_get_proc_address_v2() { return reinterpret_cast<void*>(&firstassert_get_proc_address_v2); }
void* real_get_proc_address_v2() {
  return resolve(real_cuGetProcAddress_v2, "cuGetProcAddress_v2", own_get_proc_address_v2());
}
}  // namespace
}  // namespace firstassert::stub

// What cudart (>= 11.3) fetches every driver entry point through: the answer is replaced by the hook standing
// for it, when there is one (see hook_for), and asked for itself, it gives this hook.
CUresult CUDAAPI firstassert_get_proc_address_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult* status) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto real = reinterpret_cast<Fn>(fas::real_get_proc_address_v2());
  if (real == nullptr) return fas::missing<CUresult>("cuGetProcAddress_v2");
  CUresult r = real(symbol, pfn, cudaVersion, flags, status);
  if (r != CUDA_SUCCESS || pfn == nullptr || *pfn == nullptr) return r;
  if (*pfn == reinterpret_cast<void*>(real) || *pfn == fas::own_get_proc_address_v2()) {
    *pfn = fas::own_get_proc_address_v2();
  } else if (void* hook = fas::hook_for(*pfn)) {
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
  void* found = fas::real_dlsym()(handle, name);
  if (found == nullptr) return nullptr;
  if (found == fas::real_get_proc_address_v2() || found == fas::own_get_proc_address_v2())
    return fas::own_get_proc_address_v2();
  void* hook = fas::hook_for(found, name);
  return hook != nullptr ? hook : found;
}

// Called by the assembly when the real dlsym is not known yet (a constructor running before the shim's).
extern "C" __attribute__((visibility("hidden"))) void firstassert_resolve_dlsym() { (void)fas::real_dlsym(); }

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
