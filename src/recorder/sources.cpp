#include "sources.h"

#include <mutex>

#include "core/log.h"
#include "cupti/subscriber.h"
#include "interpose.h"
#include "source/observer.h"

namespace firstassert::sources {
namespace {

// Held for a whole change of source, which may wait on calls in flight (below).
std::mutex change_mutex;

// What describe() reads, under its own lock: a report written from a call CUPTI is recording while a hand-over
// waits for that call must not wait for the hand-over.
std::mutex state_mutex;
std::string backend;  // "cupti" or "interpose": what records, or recorded last; "" before any did
std::string cupti_path;
uint32_t cupti_api_version = 0;
bool handed_over = false;

// FIRSTASSERT_BACKEND as the last start() was given it, read under change_mutex.
Backend configured = Backend::automatic;

void set_state(const std::string& now_backend, const std::string& now_cupti_path, uint32_t now_cupti_version = 0) {
  std::lock_guard lock(state_mutex);
  backend = now_backend;
  if (!now_cupti_path.empty()) {
    cupti_path = now_cupti_path;
    cupti_api_version = now_cupti_version;
  }
}

// How long giving CUPTI up waits for the calls it showed entering. At least the grace: a call that passed the stub's
// hook just before the hooks were routed here reaches CUPTI's callback within it. At most the wait: a
// synchronization blocked on a long kernel is not waited for longer (its return is then not seen).
constexpr int kGraceMs = 20;
constexpr int kWaitMs = 1000;
constexpr const char* kNotSeenReturning = "a call still inside CUDA after 1 s, on another thread, was not seen returning";

std::string who(const char* name) {
  if (name == nullptr || *name == '\0') return "another tool (a profiler?)";
  return std::string("a tool named \"") + name + "\"";
}

}  // namespace

bool start(Backend wanted, const std::string& wanted_cupti_path, std::string& message) {
  // Opened before the lock is taken: dlopen takes the loader's lock, which a library constructor that subscribes to
  // CUPTI (and so waits for this lock in before_other_subscriber) holds.
  cupti::CuptiLibrary lib;
  std::string why;
  if (wanted != Backend::interpose && !cupti::recording()) lib = cupti::open_cupti(wanted_cupti_path, why);
  std::lock_guard lock(change_mutex);
  configured = wanted;
  message.clear();
  if (wanted != Backend::interpose) {
    cupti::SubscribeResult started = cupti::start_recording(lib, why);
    message = started.message;
    if (started.recording) {
      set_state("cupti", started.cupti_path, started.cupti_api_version);
      return true;
    }
  }
  if (wanted == Backend::cupti) return false;
  std::string cupti_said = message;
  std::string then = cupti_said.empty() ? "" : "; ";
  if (!interpose::available()) {
    message = cupti_said + then + "interposition needs the shim preloaded (LD_PRELOAD or firstassert run)";
  } else if (!interpose::start()) {
    message = cupti_said + then + "interposition could not start (see above)";
  } else {
    if (wanted == Backend::automatic) say("%s; recording through interposition instead", cupti_said.c_str());
    message = "recording launches through interposition";
    set_state("interpose", "");
    return true;
  }
  return false;
}

void before_other_subscriber(const char* name) {
  try {
    if (source::inside_our_call() || source::stopped()) return;  // our own subscription, or a forked child's
    std::lock_guard lock(change_mutex);
    if (!cupti::recording()) return;
    // The hooks first, so that no call goes unrecorded between the two sources: from now on each call through them
    // is theirs alone, and CUPTI keeps only the calls already inside it until they return. FIRSTASSERT_BACKEND=cupti
    // never falls back: CUPTI is given up all the same (the tool comes first), and recording ends.
    bool hooks = configured != Backend::cupti && interpose::start();
    bool whole = cupti::stop_recording(kGraceMs, kWaitMs);
    {
      std::lock_guard state(state_mutex);
      if (hooks) backend = "interpose";
      handed_over = true;  // firstassert gave CUPTI up for another tool, whether or not the tool's call then succeeds
    }
    if (!hooks) {
      say("%s subscribes to CUPTI: firstassert gave CUPTI up, and recording stops (%s)", who(name).c_str(),
          configured == Backend::cupti ? "FIRSTASSERT_BACKEND=cupti: no interposition"
                                       : "the interposition hooks could not start");
      return;
    }
    std::string cut = whole ? std::string() : std::string(" (") + kNotSeenReturning + ")";
    info("%s subscribes to CUPTI: firstassert handed CUPTI over and records through interposition from now on%s",
         who(name).c_str(), cut.c_str());
  } catch (...) {
    // Nothing may reach the tool's C code: the tool's call goes on whatever happened here.
  }
}

// The state keeps the source that recorded last: the report written at exit is about what it found.
void stop() {
  std::lock_guard lock(change_mutex);
  interpose::stop();
  if (!cupti::stop_recording(0, kWaitMs)) info("%s before CUPTI was released", kNotSeenReturning);
}

bool holds_cupti() { return cupti::recording(); }

bool recording() { return cupti::recording() || interpose::active(); }

void describe(ToolInfo& tool) {
  std::lock_guard lock(state_mutex);
  tool.backend = backend;
  tool.cupti_path = cupti_path;
  tool.cupti_api_version = cupti_api_version;
  tool.cupti_handed_over = handed_over;
}

}  // namespace firstassert::sources
