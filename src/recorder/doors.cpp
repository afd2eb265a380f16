// The recorder library's doors (recorder_abi.h): what the preloaded stub forwards to once it has loaded the recorder. Each is
// extern "C", catches everything, and hands over to activation.cpp.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "activation.h"
#include "core/log.h"
#include "stub/recorder_abi.h"
#include "device_message_tap.h"
#include "interpose.h"
#include "sources.h"

#define FIRSTASSERT_RECORDER_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr const char* kChainedVariable = "FIRSTASSERT_CHAINED_INJECTION";

// The tool CUDA_INJECTION64_PATH named before the stub took its place, initialized first.
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

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_attach(const FirstassertStub* stub) {
  if (stub == nullptr || stub->abi != kFirstassertAbi) {
    firstassert::say("libfirstassert.so and %s come from different builds; recording is off", kRecorderLibrary);
    return 0;
  }
  firstassert::interpose::attach(*stub);
  return 1;
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_initialize_injection(void) {
  try {
    initialize_chained_tool();
  } catch (...) {
  }
  return firstassert::activate(firstassert::ActivatedBy::injection) ? 1 : 0;
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_enable(void) {
  return firstassert::activate(firstassert::ActivatedBy::enable_call) ? 1 : 0;
}

FIRSTASSERT_RECORDER_EXPORT const char* firstassert_recorder_report_path(void) {
  // A copy that stays valid: the path never changes once claimed.
  static thread_local std::string path;
  try {
    path = firstassert::report_path();
  } catch (...) {
    return nullptr;
  }
  return path.empty() ? nullptr : path.c_str();
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_refresh_report(void) {
  try {
    return firstassert::refresh_report() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_finish_report(void) {
  try {
    return firstassert::finish_report() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

FIRSTASSERT_RECORDER_EXPORT const char* firstassert_recorder_set_report_dir(const char* dir) {
  static thread_local std::string where;
  if (dir == nullptr || *dir == '\0') return nullptr;
  try {
    where = firstassert::set_report_dir(dir);
  } catch (...) {
    return nullptr;
  }
  return where.c_str();
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_stderr_pipe(int on) {
  try {
    return firstassert::stderr_pipe(on != 0) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_disable(void) {
  try {
    return firstassert::disable() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

FIRSTASSERT_RECORDER_EXPORT uint64_t firstassert_recorder_launch_count(void) {
  return firstassert::launch_count();  // never throws
}

FIRSTASSERT_RECORDER_EXPORT int firstassert_recorder_set_launch_values(uint64_t seq, const char* json_object) {
  if (json_object == nullptr) return 0;
  try {
    return firstassert::set_launch_values(seq, json_object) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// Catches everything itself (sources.cpp).
FIRSTASSERT_RECORDER_EXPORT void firstassert_recorder_cupti_subscribing(const char* name) {
  firstassert::sources::before_other_subscriber(name);
}

FIRSTASSERT_RECORDER_EXPORT void firstassert_recorder_stderr(const char* bytes, size_t size) {
  firstassert::feed_device_messages(bytes, size);
}
