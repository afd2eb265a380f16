// The callback API of CUPTI (libcupti.so.13): its subscribers, each with its own per-domain and per-callback enable
// bits, and the sink the driver and runtime call for every API ENTER/EXIT and resource event, which also feeds the
// activity API (activity.cpp) while it records. The driver is reached through its export table, as NVIDIA's CUPTI
// reaches its driver.
//
// By default this is CUPTI <= 13.2 (or a driver before r610): one subscriber per process.
// SIMCUDA_CUPTI_MULTIPLE_SUBSCRIBERS=1 makes it CUPTI 13.3+ on an r610+ driver, which admits several subscribers when
// all of them use cuptiSubscribe_v2 and the first asked for company with allowMultipleSubscribers.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "../common/private_table.h"
#include "../common/say_unsupported.h"
#include "../common/subscriber_params.h"
#include "activity.h"
#include "cupti_names.h"  // generated from the toolkit's headers (cupti_names.py)

namespace {

constexpr size_t kMaxCallbackIds = 1024;
// CUPTI documents no limit; a fixed one keeps the roster a small array. Beyond it, a subscriber is refused with 39.
constexpr size_t kMaxSubscribers = 8;

using simcuda::SubscriberParams132;

using EnableBits = std::array<std::array<std::atomic<bool>, kMaxCallbackIds>, CUPTI_CB_DOMAIN_SIZE>;

// Each subscription gets its own Subscriber, never freed: a callback in flight may still read one that has just
// unsubscribed, and an old handle must never match a newer subscription.
struct Subscriber {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::string name;
  EnableBits enabled{};  // all off: subscribing enables no callback
};

// Who is subscribed, in subscription order. A published roster never changes: subscribing and unsubscribing publish a
// new one, so the sink reads a consistent list with one atomic load and no lock. Never freed, like Subscribers, because
// a sink in flight may still walk the previous one.
struct Roster {
  std::array<Subscriber*, kMaxSubscribers> members{};
  size_t count = 0;
};

const Roster kNobody{};

struct State {
  std::mutex mutex;  // serializes subscribe, unsubscribe and finalize; the sink and the enable calls take none
  std::atomic<const Roster*> roster{&kNobody};
  // A session lasts from a first subscriber to the last unsubscribe. Whether it admits more than one subscriber is
  // decided by the subscriber that opened it.
  bool session_admits_more = false;
  const simcuda::PrivateTable* driver = nullptr;
};

State& state() {
  static State* instance = new State;  // never destroyed: the driver may call the sink during exit
  return *instance;
}

size_t callback_count(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}

bool valid_domain(CUpti_CallbackDomain domain) {
  return domain > CUPTI_CB_DOMAIN_INVALID && domain < CUPTI_CB_DOMAIN_SIZE && callback_count(domain) <= kMaxCallbackIds;
}

using simcuda::cupti::say_once;

// The sink installed in the driver: every subscriber that enabled this callback, in subscription order, within the
// activity API's view of the call (its API record spans the callbacks). It takes no lock, as a callback may call
// CUDA (and so this sink) or CUPTI itself.
void dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= kMaxCallbackIds) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  const bool api = (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) && call != nullptr;
  const bool activity = api && simcuda::cupti::activity_wants_api_events();
  if (activity && call->callbackSite == CUPTI_API_ENTER) simcuda::cupti::activity_api_enter(domain, cbid, *call);
  const Roster& roster = *state().roster.load(std::memory_order_acquire);
  for (size_t i = 0; i < roster.count; ++i) {
    Subscriber* subscriber = roster.members[i];
    if (subscriber->enabled[domain][cbid].load(std::memory_order_relaxed))
      subscriber->callback(subscriber->userdata, domain, cbid, data);
  }
  if (activity && call->callbackSite == CUPTI_API_EXIT) simcuda::cupti::activity_api_exit(domain, cbid, *call);
}

// The sink is attached while anyone listens: a subscriber, or the activity API.
void update_dispatch_locked(State& s) {
  if (s.driver == nullptr) return;
  const bool wanted =
      s.roster.load(std::memory_order_acquire)->count > 0 || simcuda::cupti::activity_wants_api_events();
  s.driver->set_tool_dispatch(wanted ? dispatch : nullptr);
}

const simcuda::PrivateTable* link_driver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) return nullptr;
  using GetExportTable = CUresult (*)(const void**, const CUuuid*);
  auto get = reinterpret_cast<GetExportTable>(dlsym(handle, "cuGetExportTable"));
  const void* table = nullptr;
  if (get == nullptr || get(&table, &simcuda::kPrivateTableId) != CUDA_SUCCESS) return nullptr;
  return static_cast<const simcuda::PrivateTable*>(table);
}

// SIMCUDA_CUPTI_MULTIPLE_SUBSCRIBERS=1 stands for CUPTI 13.3+ with an r610+ driver. Read once, at the first subscribe:
// a process does not change its CUPTI or its driver.
bool multiple_subscribers_supported() {
  static const bool supported = [] {
    const char* value = std::getenv("SIMCUDA_CUPTI_MULTIPLE_SUBSCRIBERS");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return supported;
}

// allowMultipleSubscribers == 1, read only where structSize says the caller's struct has the field (as a byte: the
// caller's object is its own, longer, struct type).
bool asks_for_company(const SubscriberParams132* params) {
  constexpr size_t offset = offsetof(SubscriberParams132, allowMultipleSubscribers);
  if (params == nullptr || params->structSize < offset + sizeof(uint8_t)) return false;
  return reinterpret_cast<const unsigned char*>(params)[offset] == 1;
}

// With a subscriber present, another joins only a session its opener made multi, only by asking the same way
// (cuptiSubscribe_v2 with allowMultipleSubscribers), and only while the roster has room. CUPTI <= 13.2 never makes a
// session multi.
bool may_join(const State& s, const Roster& now, bool asks) {
  return now.count == 0 || (s.session_admits_more && asks && now.count < kMaxSubscribers);
}

// Written on refusal, and on a successful join of a multi session, as CUPTI documents. The first subscriber is the
// oldest one still subscribed: a tool that has gone does not hold CUPTI any more.
void tell_first_subscriber(SubscriberParams132* params, const Roster& now) {
  if (params == nullptr || params->oldSubscriberName == nullptr || params->oldSubscriberSize == 0 || now.count == 0)
    return;
  const std::string& name = now.members[0]->name;
  std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "CUPTI for %s",
                name.empty() ? "an unnamed subscriber" : name.c_str());
}

Subscriber* new_subscriber(CUpti_CallbackFunc callback, void* userdata, const SubscriberParams132* params) {
  auto* subscriber = new Subscriber;
  subscriber->callback = callback;
  subscriber->userdata = userdata;
  subscriber->name = params != nullptr && params->subscriberName != nullptr
                         ? std::string(params->subscriberName).substr(0, simcuda::kSubscriberNameMaxLen)
                         : std::string();
  return subscriber;
}

const Roster* with(const Roster& now, Subscriber* added) {
  auto* next = new Roster(now);
  next->members[next->count++] = added;
  return next;
}

const Roster* without(const Roster& now, const Subscriber* dropped) {
  auto* next = new Roster;
  for (size_t i = 0; i < now.count; ++i)
    if (now.members[i] != dropped) next->members[next->count++] = now.members[i];
  if (next->count > 0) return next;
  delete next;  // never published
  return &kNobody;
}

// The subscriber behind a handle, if it is subscribed now.
Subscriber* subscribed(CUpti_SubscriberHandle handle) {
  const Roster& now = *state().roster.load(std::memory_order_acquire);
  for (size_t i = 0; i < now.count; ++i)
    if (reinterpret_cast<Subscriber*>(handle) == now.members[i]) return now.members[i];
  return nullptr;
}

// cuptiSubscribe (V1) comes here without params, and so never asks for company: after a first V2 subscriber that did,
// a V1 one is refused, as CUPTI refuses mixing the two.
CUptiResult subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback, void* userdata,
                      SubscriberParams132* params) {
  if (handle == nullptr || callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  State& s = state();
  std::lock_guard lock(s.mutex);
  // Without multi-subscriber support the request is ignored, as CUPTI <= 13.2 ignores a field it does not know.
  const bool asks = multiple_subscribers_supported() && asks_for_company(params);
  const Roster& now = *s.roster.load();
  if (!may_join(s, now, asks)) {
    tell_first_subscriber(params, now);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (s.driver == nullptr) s.driver = link_driver();
  if (s.driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (now.count == 0) s.session_admits_more = asks;
  tell_first_subscriber(params, now);  // joining a multi session: told who is first, with no error
  Subscriber* subscriber = new_subscriber(callback, userdata, params);
  s.roster.store(with(now, subscriber), std::memory_order_release);
  update_dispatch_locked(s);
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(subscriber);
  return CUPTI_SUCCESS;
}

// The last subscriber has gone: the next first subscriber decides anew whether others may join.
void end_session(State& s) {
  s.session_admits_more = false;
  update_dispatch_locked(s);
}

void set_domain(Subscriber& subscriber, CUpti_CallbackDomain domain, bool enable) {
  for (size_t cbid = 0; cbid < callback_count(domain); ++cbid) subscriber.enabled[domain][cbid].store(enable);
}

struct CallbackName {
  uint32_t cbid;
  const char* name;
};
#define SIMCUDA_CALLBACK_NAME(value, name) CallbackName{value, name},
constexpr CallbackName kRuntimeNames[] = {SIMCUDA_RUNTIME_CBID_NAMES(SIMCUDA_CALLBACK_NAME)};
constexpr CallbackName kDriverNames[] = {SIMCUDA_DRIVER_CBID_NAMES(SIMCUDA_CALLBACK_NAME)};
#undef SIMCUDA_CALLBACK_NAME

// A domain's callback names indexed by callback id (nullptr for ids the toolkit's table skips).
template <size_t kSize, size_t kCount>
const std::array<const char*, kSize>* index_names(const CallbackName (&names)[kCount]) {
  auto* table = new std::array<const char*, kSize>{};
  for (const CallbackName& n : names)
    if (n.cbid < kSize) (*table)[n.cbid] = n.name;
  return table;
}

const char* const* callback_names(CUpti_CallbackDomain domain, size_t* count) {
  static const auto* runtime = index_names<CUPTI_RUNTIME_TRACE_CBID_SIZE>(kRuntimeNames);
  static const auto* driver = index_names<CUPTI_DRIVER_TRACE_CBID_SIZE>(kDriverNames);
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API: *count = runtime->size(); return runtime->data();
    case CUPTI_CB_DOMAIN_DRIVER_API: *count = driver->size(); return driver->data();
    default: *count = 0; return nullptr;
  }
}

}  // namespace

namespace simcuda::cupti {

void say_once(const char* what) { simcuda::say_unsupported_once(what); }

const PrivateTable* linked_driver() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.driver == nullptr) s.driver = link_driver();
  return s.driver;
}

void refresh_tool_dispatch() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  update_dispatch_locked(s);
}

}  // namespace simcuda::cupti

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  return subscribe(subscriber, callback, userdata, nullptr);
}

#if CUPTI_API_VERSION >= 130000  // cuptiSubscribe_v2 and its parameters came with CUPTI 13.0
CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams* pParams) {
  return subscribe(subscriber, callback, userdata, reinterpret_cast<SubscriberParams132*>(pParams));
}
#endif

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  Subscriber* subscriber = subscribed(handle);
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const Roster* next = without(*s.roster.load(), subscriber);
  s.roster.store(next, std::memory_order_release);
  if (next->count == 0) end_session(s);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle handle,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  Subscriber* subscriber = subscribed(handle);
  if (subscriber == nullptr || !valid_domain(domain) || cbid >= callback_count(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  subscriber->enabled[domain][cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain) {
  Subscriber* subscriber = subscribed(handle);
  if (subscriber == nullptr || !valid_domain(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain == CUPTI_CB_DOMAIN_NVTX || domain == CUPTI_CB_DOMAIN_STATE)
    say_once("callbacks of the NVTX and state domains (enabled, they never fire)");
  set_domain(*subscriber, domain, enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle handle) {
  Subscriber* subscriber = subscribed(handle);
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int domain = CUPTI_CB_DOMAIN_INVALID + 1; domain < CUPTI_CB_DOMAIN_SIZE; ++domain)
    set_domain(*subscriber, static_cast<CUpti_CallbackDomain>(domain), enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle handle,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  Subscriber* subscriber = subscribed(handle);
  if (enable == nullptr || subscriber == nullptr || !valid_domain(domain) || cbid >= callback_count(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *enable = subscriber->enabled[domain][cbid].load() ? 1 : 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t* domainCount, CUpti_DomainTable* domainTable) {
  static const CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                 CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE};
  if (domainCount == nullptr || domainTable == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *domainCount = sizeof domains / sizeof domains[0];
  *domainTable = const_cast<CUpti_CallbackDomain*>(domains);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void) {
  simcuda::cupti::activity_finalize();
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.roster.store(&kNobody, std::memory_order_release);
  end_session(s);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (static_cast<int>(result)) {
#define SIMCUDA_RESULT_CASE(value, name) \
  case value:                            \
    *str = name;                         \
    return CUPTI_SUCCESS;
    SIMCUDA_CUPTI_RESULTS(SIMCUDA_RESULT_CASE)
#undef SIMCUDA_RESULT_CASE
    default:
      *str = nullptr;
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = nullptr;
  size_t count = 0;
  const char* const* names = callback_names(domain, &count);
  if (names == nullptr || cbid >= count || names[cbid] == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = names[cbid];
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "No error."; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "One or more of the parameters are invalid."; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI unable to initialize its connection to the CUDA driver."; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "The attempted operation is not supported."; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *str = "Multiple subscribers are not supported: another CUPTI client holds the subscriber slot."; break;
    default: *str = "Unknown CUPTI error."; break;
  }
  return CUPTI_SUCCESS;
}

}  // extern "C"
