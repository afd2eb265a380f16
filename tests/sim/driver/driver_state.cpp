#include "driver_state.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <string>

#include "device_table.h"
#include "tool_events.h"

namespace simcuda {
namespace {

// A primary context knows its device; the handle is the object's address.
struct ContextObject {
  int device = 0;
};

std::atomic<bool> initialized{false};
std::once_flag injection_once;
// Constant-initialized: each object knows its device before any code runs.
constexpr std::array<ContextObject, kMaxDevices> numbered_contexts() {
  std::array<ContextObject, kMaxDevices> contexts{};
  for (int d = 0; d < kMaxDevices; ++d) contexts[d].device = d;
  return contexts;
}
std::array<ContextObject, kMaxDevices> primary_storage = numbered_contexts();
std::atomic<bool> primary_announced[kMaxDevices];
// Trivially destructible, so that calls made while the process exits (after thread-local destructors ran) still work.
constexpr int kMaxContextDepth = 64;
thread_local CUcontext context_stack[kMaxContextDepth];
thread_local int context_depth = 0;

struct Allocation {
  size_t bytes;
  Memory kind;
  int device;
};

struct Allocations {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> live;  // by first address
  bool peer_access[kMaxDevices][kMaxDevices] = {};  // [from][to], cuCtxEnablePeerAccess
};
Allocations& allocations() {
  static Allocations* instance = new Allocations;
  return *instance;
}

void load_injection() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return;
  void* handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "simcuda: cannot load CUDA_INJECTION64_PATH=%s: %s\n", path, dlerror());
    return;
  }
  using InitializeInjection = int (*)();
  auto init = reinterpret_cast<InitializeInjection>(dlsym(handle, "InitializeInjection"));
  if (init == nullptr) {
    std::fprintf(stderr, "simcuda: %s has no InitializeInjection\n", path);
    return;
  }
  init();
}

// SIMCUDA_DEVICE_CODE (simcuda.h): libraries of kernel bodies, loaded as a program's fatbinaries would bring code.
void load_device_code() {
  const char* list = std::getenv("SIMCUDA_DEVICE_CODE");
  if (list == nullptr) return;
  std::string paths(list);
  size_t begin = 0;
  while (begin <= paths.size()) {
    size_t end = paths.find(':', begin);
    if (end == std::string::npos) end = paths.size();
    std::string path = paths.substr(begin, end - begin);
    if (!path.empty() && dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr)
      std::fprintf(stderr, "simcuda: cannot load SIMCUDA_DEVICE_CODE library %s: %s\n", path.c_str(), dlerror());
    begin = end + 1;
  }
}

std::once_flag device_code_once;

}  // namespace

bool driver_initialized() { return initialized.load(std::memory_order_acquire); }

CUresult initialize_driver() {
  // CUDA_VISIBLE_DEVICES naming no device leaves the driver without one: cuInit fails (runtime: cudaErrorNoDevice).
  if (apply_visible_devices() == 0) return CUDA_ERROR_NO_DEVICE;
  // Marked first: the injected tool calls back into the driver from InitializeInjection.
  initialized.store(true, std::memory_order_release);
  std::call_once(device_code_once, load_device_code);
  std::call_once(injection_once, load_injection);
  return CUDA_SUCCESS;
}

CUcontext primary_context(int device) {
  if (device < 0 || device >= visible_device_count()) return nullptr;
  return reinterpret_cast<CUcontext>(&primary_storage[device]);
}

CUcontext retain_primary_context(int device) {
  CUcontext context = primary_context(device);
  // Announced once per device, outside any lock: the tool's callback may call back into the driver.
  if (context != nullptr && !primary_announced[device].exchange(true))
    emit_context_resource_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, context);
  return context;
}

bool primary_context_retained(int device) {
  return device >= 0 && device < kMaxDevices && primary_announced[device].load();
}

int context_device(CUcontext context) {
  for (int d = 0; d < visible_device_count(); ++d) {
    if (context == reinterpret_cast<CUcontext>(&primary_storage[d])) return d;
  }
  return -1;
}

uint32_t context_uid(CUcontext context) { return static_cast<uint32_t>(context_device(context) + 1); }

int current_device() { return context_device(current_context()); }

CUcontext current_context() { return context_depth == 0 ? nullptr : context_stack[context_depth - 1]; }

void set_current_context(CUcontext context) {
  if (context == nullptr) {
    if (context_depth > 0) --context_depth;
  } else if (context_depth == 0) {
    context_stack[context_depth++] = context;
  } else {
    context_stack[context_depth - 1] = context;
  }
}

void push_context(CUcontext context) {
  if (context_depth < kMaxContextDepth) context_stack[context_depth++] = context;
}

CUcontext pop_context() { return context_depth == 0 ? nullptr : context_stack[--context_depth]; }
bool is_context(CUcontext context) { return context_device(context) >= 0; }

void* allocate(size_t bytes, Memory kind, int device) {
  void* p = std::aligned_alloc(256, ((bytes == 0 ? 1 : bytes) + 255) & ~size_t{255});
  if (p == nullptr) return nullptr;
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  a.live[reinterpret_cast<uintptr_t>(p)] = {bytes, kind, device};
  return p;
}

bool release(void* pointer, Memory kind) {
  Allocations& a = allocations();
  {
    std::lock_guard lock(a.mutex);
    auto it = a.live.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == a.live.end() || it->second.kind != kind) return false;
    a.live.erase(it);
  }
  std::free(pointer);
  return true;
}

namespace {

// The allocation holding [pointer, pointer + bytes), if any.
std::optional<Memory> allocation_holding(const void* pointer, size_t bytes) {
  auto allocation = allocation_of(pointer);
  if (!allocation) return std::nullopt;
  auto begin = reinterpret_cast<uintptr_t>(pointer);
  auto end = reinterpret_cast<uintptr_t>(allocation->begin) + std::max<size_t>(allocation->bytes, 1);
  if (begin + bytes > end) return std::nullopt;
  return allocation->kind;
}

}  // namespace

bool register_host_range(void* pointer, size_t bytes) {
  if (pointer == nullptr || bytes == 0 || allocation_holding(pointer, 1)) return false;
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  a.live[reinterpret_cast<uintptr_t>(pointer)] = {bytes, Memory::Registered, current_device()};
  return true;
}

bool unregister_host_range(void* pointer) {
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  auto it = a.live.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == a.live.end() || it->second.kind != Memory::Registered) return false;
  a.live.erase(it);
  return true;
}

std::optional<AllocationInfo> allocation_of(const void* pointer) {
  auto begin = reinterpret_cast<uintptr_t>(pointer);
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  auto it = a.live.upper_bound(begin);
  if (it == a.live.begin()) return std::nullopt;
  --it;
  if (begin >= it->first + std::max<size_t>(it->second.bytes, 1)) return std::nullopt;
  return AllocationInfo{reinterpret_cast<void*>(it->first), it->second.bytes, it->second.kind, it->second.device};
}

size_t device_bytes_in_use(int device) {
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  size_t total = 0;
  for (const auto& [begin, entry] : a.live)
    if (entry.kind == Memory::Device && entry.device == device) total += entry.bytes;
  return total;
}

PeerChange set_peer_access(int from, int to, bool enable) {
  Allocations& a = allocations();
  std::lock_guard lock(a.mutex);
  bool& enabled = a.peer_access[from][to];
  if (enabled == enable) return enable ? PeerChange::AlreadyEnabled : PeerChange::NotEnabled;
  enabled = enable;
  return PeerChange::Done;
}

bool device_accessible(const void* pointer, size_t bytes) { return allocation_holding(pointer, bytes).has_value(); }

bool is_host_allocation(const void* pointer) { return allocation_holding(pointer, 1) == Memory::Host; }

}  // namespace simcuda
