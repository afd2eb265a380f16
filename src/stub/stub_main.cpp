// The preloaded stub's doors (recorder_abi.h explains the split): the load-time constructor, the driver's
// InitializeInjection, and the public C API. Each loads the recorder library once, when recording is first asked for,
// and forwards to it; a recorder that cannot be loaded turns recording off with one line. Links nothing but libc.
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "core/log.h"
#include "recorder_abi.h"
#include "firstassert/firstassert.h"
#include "stderr_tap.h"
#include "stub_hooks.h"

#define FIRSTASSERT_EXPORT extern "C" __attribute__((visibility("default")))

namespace firstassert::stub {
namespace {

constexpr const char* kChainedVariable = "FIRSTASSERT_CHAINED_INJECTION";

// This library's path as the loader opened it, or nullptr.
const char* own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_path), &info) == 0 || info.dli_fname == nullptr) return nullptr;
  return info.dli_fname;
}

bool same_file(const char* a, const char* b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  if (realpath(a, ra) == nullptr || realpath(b, rb) == nullptr) return strcmp(a, b) == 0;
  return strcmp(ra, rb) == 0;
}

// Whether LD_PRELOAD names this library (by its file name: the loader may have found it through a search path).
bool preloaded(const char* self) {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr || self == nullptr) return false;
  const char* slash = strrchr(self, '/');
  return strstr(preload, slash != nullptr ? slash + 1 : self) != nullptr;
}

// The directory the recorder is loaded from, fixed at load time and resolved: a relative LD_PRELOAD path means nothing
// once the program has changed directory (as Hydra does), the recorder is only loaded when CUDA starts, and a path
// reached through a link (firstassert run's, for a directory LD_PRELOAD cannot carry) is not trusted to stay.
char own_directory[PATH_MAX];

void remember_own_directory(const char* self) {
  char resolved[PATH_MAX];
  if (realpath(self, resolved) != nullptr) self = resolved;
  const char* slash = strrchr(self, '/');
  size_t length = slash != nullptr ? static_cast<size_t>(slash - self) + 1 : 0;
  if (length >= sizeof own_directory) length = 0;
  memcpy(own_directory, self, length);
  own_directory[length] = '\0';
}

// Preloaded, we do no CUDA work at load time: we only ask the driver to initialize us at cuInit, through
// CUDA_INJECTION64_PATH, so that a process that never uses CUDA never loads the recorder or CUPTI. A tool the user
// already named there is kept and initialized first (by the recorder). Loaded by dlopen, we leave the environment alone:
// the process may have threads reading it.
__attribute__((constructor)) void on_load() {
  const char* self = own_path();
  if (self == nullptr) return;
  remember_own_directory(self);
  if (!preloaded(self)) return;
  const char* current = getenv("CUDA_INJECTION64_PATH");
  if (current != nullptr && *current != '\0' && !same_file(current, self)) setenv(kChainedVariable, current, 1);
  if (current == nullptr || *current == '\0' || !same_file(current, self)) setenv("CUDA_INJECTION64_PATH", self, 1);
}

struct Recorder {
  int (*initialize_injection)() = nullptr;
  int (*enable)() = nullptr;
  const char* (*report_path)() = nullptr;
  int (*refresh_report)() = nullptr;
  int (*finish_report)() = nullptr;
  const char* (*set_report_dir)(const char*) = nullptr;
  int (*stderr_pipe)(int) = nullptr;
  int (*disable)() = nullptr;
  uint64_t (*launch_count)() = nullptr;
  int (*set_launch_values)(uint64_t, const char*) = nullptr;
};
Recorder recorder;
std::atomic<bool> recorder_ready{false};
pthread_once_t recorder_once = PTHREAD_ONCE_INIT;

int route_hooks();
FirstassertStub services{kFirstassertAbi, 0, &real_entry_point, &loaded_generation, &route_hooks};

// Only a preloaded stub's hooks see the program's calls.
int route_hooks() {
  return services.preloaded != 0 && route_recorder_hooks() ? 1 : 0;
}

template <typename Fn>
bool find(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (out == nullptr) say("%s has no %s; recording is off", kRecorderLibrary, name);
  return out != nullptr;
}

// The recorder library, from this library's own directory (else the loader's search path).
void load_recorder() {
  const char* self = own_path();
  if (own_directory[0] == '\0' && self != nullptr) remember_own_directory(self);  // called before our constructor
  char path[PATH_MAX];
  size_t dir = strlen(own_directory);
  if (dir + strlen(kRecorderLibrary) >= sizeof path) dir = 0;
  memcpy(path, own_directory, dir);
  strcpy(path + dir, kRecorderLibrary);
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    say("cannot load %s (%s); recording is off", path, error != nullptr ? error : "?");
    return;
  }
  int (*attach)(const FirstassertStub*) = nullptr;
  void (*stderr_bytes)(const char*, size_t) = nullptr;
  void (*cupti_subscribing)(const char*) = nullptr;
  if (!find(handle, "firstassert_recorder_attach", attach) ||
      !find(handle, "firstassert_recorder_initialize_injection", recorder.initialize_injection) ||
      !find(handle, "firstassert_recorder_enable", recorder.enable) ||
      !find(handle, "firstassert_recorder_report_path", recorder.report_path) ||
      !find(handle, "firstassert_recorder_refresh_report", recorder.refresh_report) ||
      !find(handle, "firstassert_recorder_finish_report", recorder.finish_report) ||
      !find(handle, "firstassert_recorder_set_report_dir", recorder.set_report_dir) ||
      !find(handle, "firstassert_recorder_stderr_pipe", recorder.stderr_pipe) ||
      !find(handle, "firstassert_recorder_disable", recorder.disable) ||
      !find(handle, "firstassert_recorder_launch_count", recorder.launch_count) ||
      !find(handle, "firstassert_recorder_set_launch_values", recorder.set_launch_values) ||
      !find(handle, "firstassert_recorder_cupti_subscribing", cupti_subscribing) ||
      !find(handle, "firstassert_recorder_stderr", stderr_bytes))
    return;
  services.preloaded = preloaded(self) ? 1 : 0;
  if (services.preloaded != 0) find_recorder_hooks(handle);  // only a preloaded stub's hooks can be routed
  if (attach(&services) == 0) return;  // the recorder has said why
  // The tap and the CUPTI hooks only interpose when preloaded; loaded by dlopen, the program never calls them.
  if (services.preloaded != 0) {
    attach_stderr_tap(stderr_bytes);
    route_cupti_subscriptions(cupti_subscribing);
  }
  recorder_ready.store(true, std::memory_order_release);
}

bool have_recorder() {
  pthread_once(&recorder_once, load_recorder);
  return recorder_ready.load(std::memory_order_acquire);
}

}  // namespace
}  // namespace firstassert::stub

namespace fas = firstassert::stub;

// Called by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names this library.
FIRSTASSERT_EXPORT int InitializeInjection(void) {
  if (fas::have_recorder()) fas::recorder.initialize_injection();
  return 1;
}

FIRSTASSERT_EXPORT int firstassert_enable(void) { return fas::have_recorder() ? fas::recorder.enable() : 0; }

// No recorder loaded yet means no recording, so no report: asking does not load it.
FIRSTASSERT_EXPORT const char* firstassert_report_path(void) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.report_path() : nullptr;
}

FIRSTASSERT_EXPORT int firstassert_refresh_report(void) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.refresh_report() : 0;
}

FIRSTASSERT_EXPORT int firstassert_finish_report(void) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.finish_report() : 0;
}

// Before the recorder is loaded there is nothing to move: FIRSTASSERT_DIR is read when recording starts.
FIRSTASSERT_EXPORT const char* firstassert_set_report_dir(const char* dir) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.set_report_dir(dir) : dir;
}

FIRSTASSERT_EXPORT int firstassert_disable(void) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.disable() : 0;
}

FIRSTASSERT_EXPORT uint64_t firstassert_launch_count(void) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.launch_count() : UINT64_MAX;
}

FIRSTASSERT_EXPORT int firstassert_set_launch_values(uint64_t seq, const char* json_object) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.set_launch_values(seq, json_object) : 0;
}

FIRSTASSERT_EXPORT int firstassert_stderr_pipe(int on) {
  return fas::recorder_ready.load(std::memory_order_acquire) ? fas::recorder.stderr_pipe(on) : 0;
}
