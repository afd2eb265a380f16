// The shim's doors, and nothing else: the load-time constructor, the driver's InitializeInjection, and the public
// C API. Each is extern "C", catches everything, and hands over to activation.cpp.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "activation.h"
#include "core/log.h"
#include "firstassert/firstassert.h"

#define FIRSTASSERT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr const char* kChainedVariable = "FIRSTASSERT_CHAINED_INJECTION";

std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_path), &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

bool same_file(const char* a, const char* b) {
  char ra[4096], rb[4096];
  if (realpath(a, ra) == nullptr || realpath(b, rb) == nullptr) return std::strcmp(a, b) == 0;
  return std::strcmp(ra, rb) == 0;
}

bool preloaded(const std::string& self) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return false;
  std::string list(preload);
  std::string name = self.substr(self.rfind('/') + 1);
  return list.find(name) != std::string::npos;
}

// Preloaded, we do no CUDA work at load time: we only ask the driver to initialize us at cuInit, through
// CUDA_INJECTION64_PATH, so that a process that never uses CUDA never loads CUPTI. A tool the user already named
// there is kept and initialized first (see InitializeInjection). Loaded by dlopen, we leave the environment alone:
// the process may have threads reading it.
__attribute__((constructor)) void on_load() {
  std::string self = own_path();
  if (self.empty() || !preloaded(self)) return;
  const char* current = std::getenv("CUDA_INJECTION64_PATH");
  if (current != nullptr && *current != '\0' && !same_file(current, self.c_str())) {
    setenv(kChainedVariable, current, 1);
  }
  if (current == nullptr || *current == '\0' || !same_file(current, self.c_str())) {
    setenv("CUDA_INJECTION64_PATH", self.c_str(), 1);
  }
}

void initialize_chained_tool() {
  const char* other = std::getenv(kChainedVariable);
  if (other == nullptr || *other == '\0') return;
  firstassert::say("CUDA_INJECTION64_PATH named another tool, %s: it is initialized first, then firstassert", other);
  void* handle = dlopen(other, RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    firstassert::say("cannot load %s (%s); continuing without it", other, error != nullptr ? error : "?");
    return;
  }
  using Initialize = int (*)();
  if (auto init = reinterpret_cast<Initialize>(dlsym(handle, "InitializeInjection"))) init();
}

}  // namespace

// Called by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names this library.
FIRSTASSERT_EXPORT int InitializeInjection(void) {
  try {
    initialize_chained_tool();
  } catch (...) {
  }
  firstassert::activate(firstassert::ActivatedBy::injection);
  return 1;
}

FIRSTASSERT_EXPORT int firstassert_enable(void) {
  return firstassert::activate(firstassert::ActivatedBy::enable_call) ? 1 : 0;
}

FIRSTASSERT_EXPORT const char* firstassert_report_path(void) {
  // A copy that stays valid: the path never changes once claimed.
  static thread_local std::string path;
  try {
    path = firstassert::report_path();
  } catch (...) {
    return nullptr;
  }
  return path.empty() ? nullptr : path.c_str();
}
