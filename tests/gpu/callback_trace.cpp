// A tool of the tests, never part of the shim: records the CUPTI callbacks a program gets, so that the sequences seen
// on a GPU can be kept as fixtures and the simulator's compared with them (tests/gpu/callback_conformance.py).
//
// Loaded by CUDA_INJECTION64_PATH: the driver calls InitializeInjection at cuInit. It subscribes to CUPTI
// (cuptiSubscribe) and enables the runtime API, driver API, resource and synchronize domains (cuptiEnableDomain).
// CUPTI is opened with dlopen, from $FIRSTASSERT_CALLBACK_TRACE_CUPTI when set, else as libcupti.so.13 by the loader's
// search, so that the same build works with the simulator's CUPTI and a toolkit's.
//
// At exit it writes $FIRSTASSERT_CALLBACK_TRACE, UTF-8 text, one line per callback in the order they began:
//
//   # firstassert callback trace 1
//   <order> TAB <thread> TAB <domain> TAB <cbid> TAB <name> TAB <site> TAB <depth>
//   ...
//   # dropped <n>
//
//   order   0, 1, 2, ... in the order the callbacks were entered (across threads)
//   thread  1, 2, ... numbered by each thread's first callback (no OS ids: they differ between runs)
//   domain  runtime | driver | resource | synchronize
//   cbid    the callback id within its domain (cupti_runtime_cbid.h, cupti_driver_cbid.h, cupti_callbacks.h)
//   name    cuptiGetCallbackName's name for the API domains; "-" for the others, which it does not name
//   site    enter | exit for the API domains (CUpti_CallbackData::callbackSite); for the resource and synchronize
//           domains the event, as CUpti_CallbackIdResource / CUpti_CallbackIdSync name it, in lower case without
//           the prefix (context_created, stream_synchronized, ...)
//   depth   how many API calls of the same thread had been entered and not exited when the callback came: a driver
//           call a runtime call makes is at depth 1 at both its enter and exit
//   dropped how many callbacks came after the first kMaxRecords and were not kept
//
// Any failure is one line on stderr and no trace: never a crash, never a change to the program's results.
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace {

constexpr size_t kMaxRecords = 200000;

struct Record {
  std::atomic<bool> filled{false};  // set last: a slot taken by a callback still running at exit is left out
  uint32_t thread = 0;
  CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID;
  CUpti_CallbackId cbid = 0;
  int site = 0;  // CUpti_ApiCallbackSite for the API domains, unused otherwise
  int depth = 0;
};

using Subscribe = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using EnableDomain = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
using GetCallbackName = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);

struct Trace {
  std::string path;
  GetCallbackName callback_name = nullptr;
  std::atomic<size_t> next{0};
  std::atomic<uint32_t> threads{0};
  Record* records = nullptr;
};

Trace* trace = nullptr;  // set once, in InitializeInjection, before subscribing; never freed (callbacks may outlive exit)

thread_local uint32_t thread_number = 0;
thread_local int open_calls = 0;

bool is_api(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API;
}

void on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (thread_number == 0) thread_number = trace->threads.fetch_add(1) + 1;
  int site = 0;
  int depth = open_calls;
  if (is_api(domain) && data != nullptr) {
    site = static_cast<const CUpti_CallbackData*>(data)->callbackSite;
    // An exit is at the depth of its own enter: the call it closes no longer counts as open around it.
    if (site == CUPTI_API_ENTER) {
      ++open_calls;
    } else if (open_calls > 0) {
      depth = --open_calls;
    }
  }
  const size_t slot = trace->next.fetch_add(1);
  if (slot >= kMaxRecords) return;  // counted as dropped at exit
  Record& r = trace->records[slot];
  r.thread = thread_number;
  r.domain = domain;
  r.cbid = cbid;
  r.site = site;
  r.depth = depth;
  r.filled.store(true, std::memory_order_release);
}

const char* domain_name(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API: return "runtime";
    case CUPTI_CB_DOMAIN_DRIVER_API: return "driver";
    case CUPTI_CB_DOMAIN_RESOURCE: return "resource";
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return "synchronize";
    default: return "other";
  }
}

// The events of CUpti_CallbackIdResource (cupti_callbacks.h), indexed by id.
constexpr const char* kResourceEvents[] = {
    "invalid", "context_created", "context_destroy_starting", "stream_created", "stream_destroy_starting",
    "cu_init_finished", "module_loaded", "module_unload_starting", "module_profiled", "graph_created",
    "graph_destroy_starting", "graph_cloned", "graphnode_create_starting", "graphnode_created",
    "graphnode_destroy_starting", "graphnode_dependency_created", "graphnode_dependency_destroy_starting",
    "graphexec_create_starting", "graphexec_created", "graphexec_destroy_starting", "graphnode_cloned",
    "stream_attribute_changed", "graph_node_updated", "graph_node_set_params"};
// The events of CUpti_CallbackIdSync, indexed by id.
constexpr const char* kSyncEvents[] = {"invalid", "stream_synchronized", "context_synchronized"};

template <size_t kCount>
std::string event_name(const char* const (&events)[kCount], const char* domain, CUpti_CallbackId cbid) {
  if (cbid < kCount) return events[cbid];
  return std::string(domain) + "_" + std::to_string(cbid);  // an event of a newer CUPTI than these tables
}

std::string site_of(const Record& r) {
  switch (r.domain) {
    case CUPTI_CB_DOMAIN_RESOURCE: return event_name(kResourceEvents, "resource", r.cbid);
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return event_name(kSyncEvents, "synchronize", r.cbid);
    default: return r.site == CUPTI_API_ENTER ? "enter" : r.site == CUPTI_API_EXIT ? "exit" : "invalid";
  }
}

const char* name_of(const Record& r) {
  const char* name = nullptr;
  if (is_api(r.domain) && trace->callback_name(r.domain, r.cbid, &name) == CUPTI_SUCCESS && name != nullptr)
    return name;
  return is_api(r.domain) ? "?" : "-";
}

void write_trace() {
  const size_t taken = trace->next.load();
  const size_t kept = taken < kMaxRecords ? taken : kMaxRecords;
  FILE* out = std::fopen(trace->path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "callback_trace: cannot write %s\n", trace->path.c_str());
    return;
  }
  std::fprintf(out, "# firstassert callback trace 1\n");
  size_t written = 0;
  for (size_t i = 0; i < kept; ++i) {
    const Record& r = trace->records[i];
    if (!r.filled.load(std::memory_order_acquire)) continue;
    std::fprintf(out, "%zu\t%u\t%s\t%u\t%s\t%s\t%d\n", written++, r.thread, domain_name(r.domain), r.cbid,
                 name_of(r), site_of(r).c_str(), r.depth);
  }
  std::fprintf(out, "# dropped %zu\n", taken - written);
  if (std::fclose(out) != 0) std::fprintf(stderr, "callback_trace: cannot write %s\n", trace->path.c_str());
}

template <typename Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

// Returns why the trace cannot be taken, or nullptr once subscribed.
const char* start() {
  const char* path = std::getenv("FIRSTASSERT_CALLBACK_TRACE");
  if (path == nullptr || *path == '\0') return "FIRSTASSERT_CALLBACK_TRACE is not set";
  const char* cupti_path = std::getenv("FIRSTASSERT_CALLBACK_TRACE_CUPTI");
  void* cupti = dlopen(cupti_path != nullptr && *cupti_path != '\0' ? cupti_path : "libcupti.so.13", RTLD_NOW);
  if (cupti == nullptr) return "cannot load CUPTI";
  auto subscribe = symbol<Subscribe>(cupti, "cuptiSubscribe");
  auto enable_domain = symbol<EnableDomain>(cupti, "cuptiEnableDomain");
  auto callback_name = symbol<GetCallbackName>(cupti, "cuptiGetCallbackName");
  if (subscribe == nullptr || enable_domain == nullptr || callback_name == nullptr)
    return "CUPTI lacks cuptiSubscribe, cuptiEnableDomain or cuptiGetCallbackName";
  auto* records = new (std::nothrow) Record[kMaxRecords];
  if (records == nullptr) return "no memory for the records";
  trace = new Trace;
  trace->path = path;
  trace->callback_name = callback_name;
  trace->records = records;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (subscribe(&subscriber, on_callback, nullptr) != CUPTI_SUCCESS) return "cuptiSubscribe failed";
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API,
                                      CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE}) {
    if (enable_domain(1, subscriber, domain) != CUPTI_SUCCESS) return "cuptiEnableDomain failed";
  }
  if (std::atexit(write_trace) != 0) return "atexit failed";
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return 1;  // the driver calls it once; a second call must not subscribe again
  if (const char* why = start()) {
    std::fprintf(stderr, "callback_trace: no trace: %s\n", why);
    return 0;
  }
  return 1;
}
