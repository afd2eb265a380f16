// The callback API of CUPTI (libcupti.so.13): one subscriber at a time, per-domain and per-callback enable bits,
// and the sink the driver and runtime call for every API ENTER/EXIT and resource event. The driver is reached
// through its export table, as NVIDIA's CUPTI reaches its driver.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "../common/private_table.h"

namespace {

constexpr size_t kMaxCallbackIds = 1024;

struct Subscriber {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::string name;
};

struct State {
  std::mutex mutex;
  // Each subscription gets its own Subscriber, never freed: a callback in flight may still read the last one, and
  // an old handle must never match a newer subscription.
  std::atomic<Subscriber*> active{nullptr};
  std::array<std::array<std::atomic<bool>, kMaxCallbackIds>, CUPTI_CB_DOMAIN_SIZE> enabled{};
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

void say_once(const char* what) {
  static std::mutex mutex;
  static std::set<std::string>* said = new std::set<std::string>;
  std::lock_guard lock(mutex);
  if (said->insert(what).second) std::fprintf(stderr, "simcuda: %s is not supported by the simulator\n", what);
}

// The sink installed in the driver: filters by the subscriber's enable bits.
void dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State& s = state();
  Subscriber* subscriber = s.active.load(std::memory_order_acquire);
  if (subscriber == nullptr || domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE ||
      cbid >= kMaxCallbackIds || !s.enabled[domain][cbid].load(std::memory_order_relaxed))
    return;
  subscriber->callback(subscriber->userdata, domain, cbid, data);
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

CUptiResult subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback, void* userdata,
                      CUpti_SubscriberParams* params) {
  if (handle == nullptr || callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (Subscriber* holder = s.active.load()) {
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "CUPTI for %s",
                    holder->name.empty() ? "an unnamed subscriber" : holder->name.c_str());
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (s.driver == nullptr) s.driver = link_driver();
  if (s.driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  auto* subscriber = new Subscriber;
  subscriber->callback = callback;
  subscriber->userdata = userdata;
  subscriber->name = params != nullptr && params->subscriberName != nullptr
                         ? std::string(params->subscriberName).substr(0, CUPTI_SUBSCRIBER_NAME_MAX_LEN)
                         : std::string();
  for (auto& domain : s.enabled)
    for (auto& bit : domain) bit.store(false);
  s.active.store(subscriber, std::memory_order_release);
  s.driver->set_tool_dispatch(dispatch);
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(subscriber);
  return CUPTI_SUCCESS;
}

bool is_active(CUpti_SubscriberHandle handle) {
  return handle != nullptr && reinterpret_cast<Subscriber*>(handle) == state().active.load();
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  return subscribe(subscriber, callback, userdata, nullptr);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams* pParams) {
  return subscribe(subscriber, callback, userdata, pParams);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!is_active(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  s.active.store(nullptr, std::memory_order_release);
  s.driver->set_tool_dispatch(nullptr);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!is_active(subscriber) || !valid_domain(domain) || cbid >= callback_count(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  state().enabled[domain][cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  if (!is_active(subscriber) || !valid_domain(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain == CUPTI_CB_DOMAIN_NVTX || domain == CUPTI_CB_DOMAIN_STATE)
    say_once("callbacks of the NVTX and state domains (enabled, they never fire)");
  for (size_t cbid = 0; cbid < callback_count(domain); ++cbid) state().enabled[domain][cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  if (!is_active(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int domain = CUPTI_CB_DOMAIN_INVALID + 1; domain < CUPTI_CB_DOMAIN_SIZE; ++domain)
    for (size_t cbid = 0; cbid < callback_count(static_cast<CUpti_CallbackDomain>(domain)); ++cbid)
      state().enabled[domain][cbid].store(enable != 0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (enable == nullptr || !is_active(subscriber) || !valid_domain(domain) || cbid >= callback_count(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *enable = state().enabled[domain][cbid].load() ? 1 : 0;
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
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.active.store(nullptr, std::memory_order_release);
  if (s.driver != nullptr) s.driver->set_tool_dispatch(nullptr);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
    default: *str = nullptr; return CUPTI_ERROR_INVALID_PARAMETER;
  }
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

// The activity API is not modelled: a tool that needs it learns so at once.
#define SIMCUDA_CUPTI_UNSUPPORTED(name, params, ...)          \
  CUptiResult CUPTIAPI name params {                          \
    say_once(#name);                                          \
    return CUPTI_ERROR_NOT_SUPPORTED;                         \
  }
SIMCUDA_CUPTI_UNSUPPORTED(cuptiActivityEnable, (CUpti_ActivityKind))
SIMCUDA_CUPTI_UNSUPPORTED(cuptiActivityDisable, (CUpti_ActivityKind))
SIMCUDA_CUPTI_UNSUPPORTED(cuptiActivityRegisterCallbacks, (CUpti_BuffersCallbackRequestFunc,
                                                           CUpti_BuffersCallbackCompleteFunc))
SIMCUDA_CUPTI_UNSUPPORTED(cuptiActivityFlushAll, (uint32_t))

}  // extern "C"
