// The activity API of the simulated CUPTI (libcupti.so.13), as cupti_activity.h documents it: kinds enabled and
// disabled, records written into the buffers the client hands out (CUpti_BuffersCallbackRequestFunc) and handed back
// (CUpti_BuffersCallbackCompleteFunc) when full or flushed, cuptiActivityGetNextRecord walking them.
//
// Where records come from:
// - API records (CUPTI_ACTIVITY_KIND_RUNTIME, DRIVER): the outermost traced call of a thread, from the same
//   ENTER/EXIT sink the callback API uses. A driver call made by the runtime to implement a runtime call belongs to
//   that call: it gets no record of its own, and device work it queues carries the runtime call's correlation id, as
//   CUPTI reports it (consecutive runtime correlation ids, kernels sharing their launch call's).
// - Device records (KERNEL, CONCURRENT_KERNEL, MEMCPY, MEMSET): the driver tags work queued while one of these kinds
//   is enabled with the correlation id of the call queuing it, and tells its start and end (its own steady clock)
//   once it ran. Those are staged, and written into the client's buffers on the application's threads (at the exit of
//   an API call, or a flush) with their timestamps brought onto CUPTI's timestamp source, as CUPTI converts GPU
//   timestamps when it processes them. A record is written only once complete, so a default flush and a forced one
//   deliver the same records; the forced one also hands back a buffer holding none.
// - EXTERNAL_CORRELATION: before each API record, one per external kind whose per-thread stack was not empty when
//   the call began (the top id).
// - SYNCHRONIZATION and CUDA_EVENT: from the outermost stream, event and context synchronizing calls and event
//   records, with the handles their genuine *_params name; event ids are given per CUevent, and each record of an
//   event a new cudaEventSyncId that later synchronizations on it carry. CUDA_EVENT's deviceTimestamp is not modelled.
// - OVERHEAD: accepted; no record (CUPTI's own overhead is not modelled).
// Buffers are global (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER is kept but not modelled).
#include "activity.h"

#include <cupti.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cupti_names.h"  // generated from the toolkit's headers (cupti_names.py)

namespace simcuda::cupti {
namespace {

// ---- record layouts ------------------------------------------------------------------------------------------

#if CUPTI_API_VERSION >= 130000
// The kernel record CUPTI 13.1+ writes (CUpti_ActivityKernel11): version 10 with the launch priority appended. A client
// built with CUDA >= 13.1 (PyTorch's Kineto) reads kernels as version 11; one built against these 13.0 headers reads
// the version-10 prefix. Only the appended fields are spelled out here.
using KernelRecord = CUpti_ActivityKernel10;
constexpr size_t kKernelRecordSize = sizeof(KernelRecord) + sizeof(int32_t) + sizeof(uint32_t);
static_assert(sizeof(KernelRecord) % 8 == 0);
constexpr size_t kPriorityOffset = sizeof(KernelRecord);
#else
// CUPTI 12.8 writes CUpti_ActivityKernel9, the newest version its header defines; older clients read a prefix.
using KernelRecord = CUpti_ActivityKernel9;
constexpr size_t kKernelRecordSize = sizeof(KernelRecord);
#endif

// The size of the record at its kind, as cuptiActivityGetNextRecord steps over it; 0 for kinds never written here.
size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return kKernelRecordSize;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    default: return 0;
  }
}

constexpr size_t kAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT
uint8_t* align_up(uint8_t* p) {
  auto address = reinterpret_cast<uintptr_t>(p);
  return p + ((kAlignment - address % kAlignment) % kAlignment);
}

// ---- what is enabled -----------------------------------------------------------------------------------------

static_assert(CUPTI_ACTIVITY_KIND_COUNT <= 64);
constexpr uint64_t bit(CUpti_ActivityKind kind) { return uint64_t{1} << kind; }
constexpr uint64_t kDeviceKinds = bit(CUPTI_ACTIVITY_KIND_KERNEL) | bit(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) |
                                  bit(CUPTI_ACTIVITY_KIND_MEMCPY) | bit(CUPTI_ACTIVITY_KIND_MEMSET);
// Kinds whose records come from API calls other than the API records themselves.
constexpr uint64_t kCallKinds = bit(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) | bit(CUPTI_ACTIVITY_KIND_CUDA_EVENT);

// Per-callback-id collection of API records: cuptiActivityEnable(RUNTIME/DRIVER) sets every id, Disable clears every
// id, cuptiActivityEnableRuntimeApi/DriverApi one.
constexpr size_t kMaxCallbackIds = 1024;
static_assert(CUPTI_RUNTIME_TRACE_CBID_SIZE <= kMaxCallbackIds && CUPTI_DRIVER_TRACE_CBID_SIZE <= kMaxCallbackIds);

struct ApiFilter {
  explicit ApiFilter(size_t ids) : size(ids) {}
  const size_t size;
  std::array<std::atomic<bool>, kMaxCallbackIds> on{};
  size_t count = 0;  // ids on; under Config::mutex

  void set(size_t cbid, bool enable) {
    if (on[cbid].exchange(enable) == enable) return;
    if (enable)
      ++count;
    else
      --count;
  }
  void set_all(bool enable) {
    for (size_t cbid = 1; cbid < size; ++cbid) set(cbid, enable);
  }
};

struct Attributes {
  size_t device_buffer_size = 3200000;
  size_t device_buffer_size_cdp = 8388608;
  size_t device_buffer_pool_limit = 250;
  uint8_t zeroed_out_activity_buffer = 0;
  size_t device_buffer_pre_allocate_value = 3;
  uint8_t mem_allocation_type_host_pinned = 0;
  uint8_t per_thread_activity_buffer = 1;
  size_t device_buffer_size_device_graphs = 16777216;
};

struct Config {
  std::mutex mutex;  // serializes changes; readers load the atomics
  std::atomic<uint64_t> kinds{0};
  ApiFilter runtime{CUPTI_RUNTIME_TRACE_CBID_SIZE};
  ApiFilter driver{CUPTI_DRIVER_TRACE_CBID_SIZE};
  std::atomic<bool> wants_api_events{false};
  std::atomic<CUpti_TimestampCallbackFunc> timestamp_source{nullptr};
  uint8_t cuda_event_device_timestamps = 0;
  Attributes attributes;
  std::atomic<bool> client_zeroes_buffers{false};  // attributes.zeroed_out_activity_buffer, read without the lock
};

Config& config() {
  static Config* instance = new Config;  // never destroyed: worker threads and exit handlers may still record
  return *instance;
}

bool kind_on(CUpti_ActivityKind kind) { return (config().kinds.load(std::memory_order_relaxed) & bit(kind)) != 0; }

bool api_record_wanted(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (cbid >= kMaxCallbackIds) return false;
  const ApiFilter& filter = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? config().runtime : config().driver;
  return filter.on[cbid].load(std::memory_order_relaxed);
}

// ---- timestamps ----------------------------------------------------------------------------------------------

// CUPTI's timestamp source: the client's callback, else CLOCK_REALTIME in ns as CUPTI uses on Linux.
uint64_t timestamp() {
  if (CUpti_TimestampCallbackFunc source = config().timestamp_source.load(std::memory_order_acquire)) return source();
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The driver's device clock (device.cpp's now_ns).
int64_t device_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- the calling thread --------------------------------------------------------------------------------------

// Bumped when recording of API events starts anew and by cuptiFinalize: a thread's call depth from before is void
// (it may have missed an EXIT while nothing listened).
std::atomic<uint64_t> call_generation{1};
std::atomic<uint64_t> external_generation{1};  // bumped by cuptiFinalize: external correlation stacks are dropped

struct ThreadState {
  uint64_t generation = 0;
  int depth = 0;                 // traced API calls in progress (runtime and driver)
  uint32_t correlation = 0;      // of the outermost one
  bool runtime = false;          // the outermost one is a runtime call
  bool record = false;           // it gets an API record
  bool timed = false;            // its start was taken (an API record, or one of kCallKinds may follow)
  uint64_t start = 0;
  uint32_t external_at_entry = 0;  // bit per external kind with an id when the call began
  std::array<uint64_t, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> external_ids_at_entry{};

  uint64_t stacks_generation = 0;
  std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> external;

  bool requesting = false;  // inside the client's buffer-request callback
  bool delivering = false;  // inside the client's buffer-completion callback
};

// Owned through a pointer: a thread that calls CUPTI after its thread_local objects were destroyed (an exit handler
// flushing) gets a fresh state, not a destroyed one.
struct ThreadStateOwner {
  ThreadState* state = nullptr;
  ~ThreadStateOwner() {
    delete state;
    state = nullptr;
  }
};
thread_local ThreadStateOwner thread_state_owner;

ThreadState& thread_state() {
  if (thread_state_owner.state == nullptr) thread_state_owner.state = new ThreadState;
  ThreadState& t = *thread_state_owner.state;
  if (uint64_t now = call_generation.load(std::memory_order_relaxed); t.generation != now) {
    t.generation = now;
    t.depth = 0;
    t.correlation = 0;
    t.record = false;
    t.timed = false;
  }
  if (uint64_t now = external_generation.load(std::memory_order_relaxed); t.stacks_generation != now) {
    t.stacks_generation = now;
    for (auto& stack : t.external) stack.clear();
  }
  return t;
}

// ---- buffers -------------------------------------------------------------------------------------------------

struct Buffer {
  uint8_t* base = nullptr;
  size_t size = 0;
  size_t used = 0;  // bytes from base, the alignment of the first record included (the valid size handed back)
  size_t max_records = 0;
  size_t records = 0;
};

struct Store {
  // Recursive: the client's request callback runs under it (as under CUPTI's own lock) and may call CUPTI.
  std::recursive_mutex mutex;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  bool has_current = false;
  Buffer current;
  std::vector<Buffer> finished;  // full or flushed, to be handed back
  size_t dropped = 0;
  int64_t next_grid_id = 1;

  std::mutex staged_mutex;  // device records, told on the device's worker threads
  std::vector<DeviceActivity> staged;
};

Store& store() {
  static Store* instance = new Store;
  return *instance;
}

std::atomic<bool> staged_any{false};
std::atomic<bool> finished_any{false};

// A new buffer from the client; false when it declined.
bool obtain_buffer(Store& s) {
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  ThreadState& t = thread_state();
  t.requesting = true;
  s.request(&buffer, &size, &max_records);
  t.requesting = false;
  if (buffer == nullptr || size == 0) return false;
  uint8_t* first = align_up(buffer);
  size_t offset = static_cast<size_t>(first - buffer);
  // Zeroed, as CUPTI does unless told the client zeroes its buffers (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER).
  if (!config().client_zeroes_buffers.load(std::memory_order_relaxed)) std::memset(buffer, 0, size);
  s.current = Buffer{buffer, size, offset < size ? offset : size, max_records, 0};
  s.has_current = true;
  return true;
}

void retire_current(Store& s) {
  s.finished.push_back(s.current);
  s.has_current = false;
  finished_any.store(true, std::memory_order_release);
}

bool fits(const Buffer& b, size_t size) {
  return b.size - b.used >= size && (b.max_records == 0 || b.records < b.max_records);
}

// Appends one record (under s.mutex). A record that no buffer can take is dropped and counted: the client declined
// a buffer, or handed out one too small for it even empty (kept: smaller records may still fit).
void append(Store& s, const void* record, size_t size) {
  if (s.request == nullptr || thread_state().requesting) {
    ++s.dropped;
    return;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!s.has_current && !obtain_buffer(s)) break;
    Buffer& b = s.current;
    if (fits(b, size)) {
      std::memcpy(b.base + b.used, record, size);
      b.used += size;
      ++b.records;
      if (b.max_records != 0 && b.records == b.max_records) retire_current(s);
      return;
    }
    if (b.records == 0) break;
    retire_current(s);
  }
  ++s.dropped;
}

// Hands finished buffers back to the client, outside the store's lock (the client may call CUPTI from there).
void deliver() {
  if (!finished_any.load(std::memory_order_acquire)) return;
  ThreadState& t = thread_state();
  if (t.delivering || t.requesting) return;  // a later call delivers them
  Store& s = store();
  std::vector<Buffer> out;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  {
    std::lock_guard lock(s.mutex);
    out.swap(s.finished);
    finished_any.store(false, std::memory_order_relaxed);
    complete = s.complete;
  }
  if (complete == nullptr) return;
  t.delivering = true;
  for (const Buffer& b : out) complete(nullptr, 0, b.base, b.size, b.used);
  t.delivering = false;
}

// ---- records -------------------------------------------------------------------------------------------------

uint32_t this_thread_id() {
  pthread_t self = pthread_self();
  uint32_t id = 0;
  std::memcpy(&id, &self, sizeof id);  // the low 32 bits of pthread_self(), as CUPTI reports threads
  return id;
}

void write_api_record(Store& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const ThreadState& t,
                      uint64_t end, const CUpti_CallbackData& call) {
  for (size_t kind = 0; kind < t.external_ids_at_entry.size(); ++kind) {
    if ((t.external_at_entry & (1u << kind)) == 0) continue;
    CUpti_ActivityExternalCorrelation e{};
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
    e.externalId = t.external_ids_at_entry[kind];
    e.correlationId = t.correlation;
    append(s, &e, sizeof e);
  }
  CUpti_ActivityAPI a{};
  a.kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = cbid;
  a.start = t.start;
  a.end = end;
  a.processId = static_cast<uint32_t>(getpid());
  a.threadId = this_thread_id();
  a.correlationId = t.correlation;
  // CUresult and cudaError_t are both int-sized enums.
  if (call.functionReturnValue != nullptr) std::memcpy(&a.returnValue, call.functionReturnValue, sizeof a.returnValue);
  append(s, &a, sizeof a);
}

void write_device_record(Store& s, const DeviceActivity& d, uint64_t cupti_now, int64_t device_now) {
  // GPU timestamps brought onto CUPTI's source by their distance from now.
  auto converted = [&](int64_t device_ns) -> uint64_t {
    int64_t value = static_cast<int64_t>(cupti_now) - (device_now - device_ns);
    return value > 0 ? static_cast<uint64_t>(value) : 0;
  };
  switch (d.kind) {
    case DeviceActivity::Kind::Kernel: {
      KernelRecord k{};
      k.kind = kind_on(CUPTI_ACTIVITY_KIND_KERNEL) ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = converted(d.start_ns);
      k.end = converted(d.end_ns);
      k.completed = k.end;  // no child kernels
      k.deviceId = d.device_id;
      k.contextId = d.context_id;
      k.streamId = d.stream_id;
      k.gridX = static_cast<int32_t>(d.grid[0]);
      k.gridY = static_cast<int32_t>(d.grid[1]);
      k.gridZ = static_cast<int32_t>(d.grid[2]);
      k.blockX = static_cast<int32_t>(d.block[0]);
      k.blockY = static_cast<int32_t>(d.block[1]);
      k.blockZ = static_cast<int32_t>(d.block[2]);
      k.correlationId = d.correlation_id;
      k.gridId = s.next_grid_id++;
      k.name = d.name;
      k.queued = CUPTI_TIMESTAMP_UNKNOWN;  // cuptiActivityEnableLatencyTimestamps is not modelled
      k.submitted = CUPTI_TIMESTAMP_UNKNOWN;
      k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
      k.channelID = CUPTI_INVALID_CHANNEL_ID;
      k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
      alignas(8) unsigned char record[kKernelRecordSize] = {};
      std::memcpy(record, &k, sizeof k);
#if CUPTI_API_VERSION >= 130000
      const int32_t priority = 0;
      std::memcpy(record + kPriorityOffset, &priority, sizeof priority);
#endif
      append(s, record, sizeof record);
      return;
    }
    case DeviceActivity::Kind::Memcpy: {
      CUpti_ActivityMemcpy6 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = d.copy_kind;
      m.srcKind = d.src_kind;
      m.dstKind = d.dst_kind;
      m.bytes = d.bytes;
      m.start = converted(d.start_ns);
      m.end = converted(d.end_ns);
      m.deviceId = d.device_id;
      m.contextId = d.context_id;
      m.streamId = d.stream_id;
      m.correlationId = d.correlation_id;
      m.runtimeCorrelationId = d.runtime_correlation_id;
      m.channelID = CUPTI_INVALID_CHANNEL_ID;
      m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
      m.copyCount = 1;
      append(s, &m, sizeof m);
      return;
    }
    case DeviceActivity::Kind::Memset: {
      CUpti_ActivityMemset4 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      m.value = d.value;
      m.bytes = d.bytes;
      m.start = converted(d.start_ns);
      m.end = converted(d.end_ns);
      m.deviceId = d.device_id;
      m.contextId = d.context_id;
      m.streamId = d.stream_id;
      m.correlationId = d.correlation_id;
      m.memoryKind = d.dst_kind;
      m.channelID = CUPTI_INVALID_CHANNEL_ID;
      m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
      append(s, &m, sizeof m);
      return;
    }
  }
}

// Device records told so far, written into the client's buffers (on an application thread).
void write_staged() {
  if (!staged_any.load(std::memory_order_acquire)) return;
  Store& s = store();
  std::vector<DeviceActivity> items;
  {
    std::lock_guard lock(s.staged_mutex);
    items.swap(s.staged);
    staged_any.store(false, std::memory_order_relaxed);
  }
  if (items.empty()) return;
  const uint64_t cupti_now = timestamp();
  const int64_t device_now = device_clock_ns();
  std::lock_guard lock(s.mutex);
  for (const DeviceActivity& d : items) write_device_record(s, d, cupti_now, device_now);
}

// ---- synchronization and CUDA event records ----------------------------------------------------------------

enum class CallClass { Other, Synchronize, EventRecord, EventDestroy };

// What a call is for SYNCHRONIZATION and CUDA_EVENT records, with the handles its *_params struct names.
struct CallInfo {
  CallClass what = CallClass::Other;
  CUpti_ActivitySynchronizationType sync = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN;
  CUstream stream = nullptr;
  CUevent event = nullptr;
  bool has_stream = false;
  bool has_event = false;
  bool per_thread = false;
};

template <typename P>
const P& params_as(const void* params) {
  return *static_cast<const P*>(params);
}

CallInfo classify(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params) {
  CallInfo c;
  auto sync = [&](CUpti_ActivitySynchronizationType type) {
    c.what = CallClass::Synchronize;
    c.sync = type;
  };
  auto on_stream = [&](CUstream stream, bool per_thread) {
    c.stream = stream;
    c.has_stream = true;
    c.per_thread = per_thread;
  };
  auto on_event = [&](CUevent event) {
    c.event = event;
    c.has_event = true;
  };
  auto record = [&](CUevent event, CUstream stream, bool per_thread) {
    c.what = CallClass::EventRecord;
    on_event(event);
    on_stream(stream, per_thread);
  };
  auto destroy = [&](CUevent event) {
    c.what = CallClass::EventDestroy;
    on_event(event);
  };
  constexpr auto kStreamSync = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  constexpr auto kEventSync = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  constexpr auto kWait = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  constexpr auto kContextSync = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020:
        sync(kContextSync);
        return c;
      default:
        break;
    }
    if (params == nullptr) return c;
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
        sync(kStreamSync);
        on_stream(params_as<cudaStreamSynchronize_v3020_params>(params).stream, false);
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
        sync(kStreamSync);
        on_stream(params_as<cudaStreamSynchronize_ptsz_v7000_params>(params).stream, true);
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
        sync(kEventSync);
        on_event(params_as<cudaEventSynchronize_v3020_params>(params).event);
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020: {
        const auto& p = params_as<cudaStreamWaitEvent_v3020_params>(params);
        sync(kWait);
        on_stream(p.stream, false);
        on_event(p.event);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: {
        const auto& p = params_as<cudaStreamWaitEvent_ptsz_v7000_params>(params);
        sync(kWait);
        on_stream(p.stream, true);
        on_event(p.event);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020: {
        const auto& p = params_as<cudaEventRecord_v3020_params>(params);
        record(p.event, p.stream, false);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000: {
        const auto& p = params_as<cudaEventRecord_ptsz_v7000_params>(params);
        record(p.event, p.stream, true);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010: {
        const auto& p = params_as<cudaEventRecordWithFlags_v11010_params>(params);
        record(p.event, p.stream, false);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010: {
        const auto& p = params_as<cudaEventRecordWithFlags_ptsz_v11010_params>(params);
        record(p.event, p.stream, true);
        break;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020:
        destroy(params_as<cudaEventDestroy_v3020_params>(params).event);
        break;
      default:
        break;
    }
    return c;
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
#if CUPTI_API_VERSION >= 130000  // cuCtxSynchronize_v2 came with CUDA 13.0
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
#endif
      sync(kContextSync);
      return c;
    default:
      break;
  }
  if (params == nullptr) return c;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
      sync(kStreamSync);
      on_stream(params_as<cuStreamSynchronize_params>(params).hStream, false);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
      sync(kStreamSync);
      on_stream(params_as<cuStreamSynchronize_ptsz_params>(params).hStream, true);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
      sync(kEventSync);
      on_event(params_as<cuEventSynchronize_params>(params).hEvent);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent: {
      const auto& p = params_as<cuStreamWaitEvent_params>(params);
      sync(kWait);
      on_stream(p.hStream, false);
      on_event(p.hEvent);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz: {
      const auto& p = params_as<cuStreamWaitEvent_ptsz_params>(params);
      sync(kWait);
      on_stream(p.hStream, true);
      on_event(p.hEvent);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord: {
      const auto& p = params_as<cuEventRecord_params>(params);
      record(p.hEvent, p.hStream, false);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz: {
      const auto& p = params_as<cuEventRecord_ptsz_params>(params);
      record(p.hEvent, p.hStream, true);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags: {
      const auto& p = params_as<cuEventRecordWithFlags_params>(params);
      record(p.hEvent, p.hStream, false);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz: {
      const auto& p = params_as<cuEventRecordWithFlags_ptsz_params>(params);
      record(p.hEvent, p.hStream, true);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventDestroy:
      destroy(params_as<cuEventDestroy_params>(params).hEvent);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2:
      destroy(params_as<cuEventDestroy_v2_params>(params).hEvent);
      break;
    default:
      break;
  }
  return c;
}

// CUPTI's ids for CUDA events: one per CUevent while it lives, and per event the cudaEventSyncId of its latest record.
struct EventIds {
  std::mutex mutex;
  std::unordered_map<CUevent, std::pair<uint32_t, uint64_t>> known;  // event: (eventId, latest cudaEventSyncId)
  uint32_t next_id = 1;
  uint64_t next_sync_id = 1;

  std::pair<uint32_t, uint64_t>& entry(CUevent event) {
    auto [it, added] = known.try_emplace(event, 0, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
    if (added) it->second.first = next_id++;
    return it->second;
  }
};

EventIds& event_ids() {
  static EventIds* instance = new EventIds;
  return *instance;
}

uint32_t stream_id_of(CUstream stream, bool per_thread) {
  const PrivateTable* driver = linked_driver();
  if (driver == nullptr || driver->size < offsetof(PrivateTable, stream_id) + sizeof driver->stream_id ||
      driver->stream_id == nullptr)
    return CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  uint64_t id = driver->stream_id(stream, per_thread);
  return id != 0 ? static_cast<uint32_t>(id) : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
}

// A context's device and id, from the driver (device 0 and id 1, the first device's primary context, where the driver
// cannot tell, as for a call made before any context existed).
bool table_has_contexts(const PrivateTable& driver) {
  return driver.size >= offsetof(PrivateTable, context_uid) + sizeof driver.context_uid &&
         driver.context_device != nullptr && driver.context_uid != nullptr;
}

uint32_t device_of(CUcontext context) {
  const PrivateTable* driver = linked_driver();
  if (driver == nullptr || !table_has_contexts(*driver) || context == nullptr) return 0;
  int device = driver->context_device(context);
  return device >= 0 ? static_cast<uint32_t>(device) : 0;
}

uint32_t context_id_of(CUcontext context) {
  const PrivateTable* driver = linked_driver();
  if (driver == nullptr || !table_has_contexts(*driver) || context == nullptr) return 1;
  uint32_t id = driver->context_uid(context);
  return id != 0 ? id : 1;
}

// At the outermost EXIT of a call, its SYNCHRONIZATION or CUDA_EVENT record (no lock held: the lookups reach the
// driver).
void write_call_record(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const ThreadState& t, uint64_t end,
                       const CUpti_CallbackData& call) {
  const uint64_t kinds = config().kinds.load(std::memory_order_relaxed);
  if ((kinds & kCallKinds) == 0) return;
  const CallInfo c = classify(domain, cbid, call.functionParams);
  if (c.what == CallClass::Other) return;
  uint32_t result = 0;
  if (call.functionReturnValue != nullptr) std::memcpy(&result, call.functionReturnValue, sizeof result);
  EventIds& events = event_ids();
  if (c.what == CallClass::EventDestroy) {
    std::lock_guard lock(events.mutex);
    events.known.erase(c.event);
    return;
  }
  const bool sync_on = (kinds & bit(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) != 0;
  const bool event_on = (kinds & bit(CUPTI_ACTIVITY_KIND_CUDA_EVENT)) != 0;
  if (c.what == CallClass::Synchronize && !sync_on) return;
  if (c.what == CallClass::EventRecord && result != 0) return;  // nothing was recorded
  const uint32_t stream = c.has_stream ? stream_id_of(c.stream, c.per_thread) : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  uint32_t event_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  uint64_t sync_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  if (c.has_event && c.event != nullptr) {
    std::lock_guard lock(events.mutex);
    auto& [id, latest] = events.entry(c.event);
    if (c.what == CallClass::EventRecord) latest = events.next_sync_id++;
    event_id = id;
    sync_id = latest;
  }
  Store& s = store();
  std::lock_guard lock(s.mutex);
  if (c.what == CallClass::Synchronize) {
    CUpti_ActivitySynchronization2 r{};
    r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    r.type = c.sync;
    r.start = t.start;
    r.end = end;
    r.correlationId = t.correlation;
    r.contextId = context_id_of(call.context);
    r.streamId = stream;
    r.cudaEventId = event_id;
    r.cudaEventSyncId = sync_id;
    r.returnValue = result;
    append(s, &r, sizeof r);
  } else if (event_on) {
    CUpti_ActivityCudaEvent2 r{};
    r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    r.correlationId = t.correlation;
    r.contextId = context_id_of(call.context);
    r.streamId = stream;
    r.eventId = event_id;
    r.deviceId = device_of(call.context);
    r.deviceTimestamp = 0;  // not modelled (cuptiActivityEnableCudaEventDeviceTimestamps)
    r.cudaEventSyncId = sync_id;
    append(s, &r, sizeof r);
  }
}

// ---- the driver's device-activity sink -----------------------------------------------------------------------

void work_queued(uint32_t* correlation_id, uint32_t* runtime_correlation_id) {
  const ThreadState& t = thread_state();
  *correlation_id = t.depth > 0 ? t.correlation : 0;
  *runtime_correlation_id = t.depth > 0 && t.runtime ? t.correlation : 0;
}

bool recorded(DeviceActivity::Kind kind) {
  switch (kind) {
    case DeviceActivity::Kind::Kernel:
      return kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) || kind_on(CUPTI_ACTIVITY_KIND_KERNEL);
    case DeviceActivity::Kind::Memcpy: return kind_on(CUPTI_ACTIVITY_KIND_MEMCPY);
    case DeviceActivity::Kind::Memset: return kind_on(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  return false;
}

// On a stream's worker thread (for copies and fills, under the device's lock): staged only.
void work_ran(const DeviceActivity& activity) {
  if (!recorded(activity.kind)) return;
  Store& s = store();
  std::lock_guard lock(s.staged_mutex);
  s.staged.push_back(activity);
  staged_any.store(true, std::memory_order_release);
}

const ActivitySink kSink{work_queued, work_ran};

// ---- enabling ------------------------------------------------------------------------------------------------

bool table_has_activity_sink(const PrivateTable& table) {
  return table.size >= offsetof(PrivateTable, set_activity_sink) + sizeof table.set_activity_sink &&
         table.set_activity_sink != nullptr;
}

// After a change of what is enabled (Config::mutex held): the driver's device sink, and whether API events are
// needed (the sink itself is attached by refresh_tool_dispatch, without this lock).
void apply_locked(Config& c) {
  const uint64_t kinds = c.kinds.load();
  if (const PrivateTable* driver = linked_driver(); driver != nullptr && table_has_activity_sink(*driver))
    driver->set_activity_sink((kinds & kDeviceKinds) != 0 ? &kSink : nullptr);
  const bool wanted = (kinds & (kDeviceKinds | kCallKinds)) != 0 || c.runtime.count > 0 || c.driver.count > 0;
  if (wanted && !c.wants_api_events.load()) call_generation.fetch_add(1);
  c.wants_api_events.store(wanted, std::memory_order_release);
}

enum class Support { Recorded, NoRecords, Unsupported };

Support support_of(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return Support::Recorded;
    // Accepted, as CUPTI accepts it, but the simulator writes none of its records.
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return Support::NoRecords;
    default:
      return Support::Unsupported;
  }
}

std::string kind_name(CUpti_ActivityKind kind) {
  switch (static_cast<int>(kind)) {
#define SIMCUDA_KIND_CASE(value, name) \
  case value:                          \
    return name;
    SIMCUDA_ACTIVITY_KIND_NAMES(SIMCUDA_KIND_CASE)
#undef SIMCUDA_KIND_CASE
    default:
      return "activity kind " + std::to_string(static_cast<int>(kind));
  }
}

bool valid_kind(CUpti_ActivityKind kind) {
  return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT;
}

CUptiResult set_kind(CUpti_ActivityKind kind, bool enable) {
  if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  if (linked_driver() == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  Support support = support_of(kind);
  if (enable && support == Support::Unsupported) {
    say_once(("cuptiActivityEnable(" + kind_name(kind) + ")").c_str());
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  if (enable && support == Support::NoRecords)
    say_once(("writing " + kind_name(kind) + " records (the kind can be enabled, but none is written)").c_str());
  Config& c = config();
  {
    std::lock_guard lock(c.mutex);
    if (enable)
      c.kinds.fetch_or(bit(kind));
    else
      c.kinds.fetch_and(~bit(kind));
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) c.runtime.set_all(enable);
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) c.driver.set_all(enable);
    apply_locked(c);
  }
  refresh_tool_dispatch();
  return CUPTI_SUCCESS;
}

CUptiResult set_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint8_t enable) {
  if (linked_driver() == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  Config& c = config();
  ApiFilter& filter = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? c.runtime : c.driver;
  if (cbid == 0 || cbid >= filter.size) return CUPTI_ERROR_INVALID_PARAMETER;
  {
    std::lock_guard lock(c.mutex);
    filter.set(cbid, enable != 0);
    apply_locked(c);
  }
  refresh_tool_dispatch();
  return CUPTI_SUCCESS;
}

// ---- attributes ----------------------------------------------------------------------------------------------

template <typename T>
CUptiResult attribute(T& field, bool write, size_t* value_size, void* value) {
  if (*value_size < sizeof(T)) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  if (write)
    std::memcpy(&field, value, sizeof(T));
  else
    std::memcpy(value, &field, sizeof(T));
  *value_size = sizeof(T);
  return CUPTI_SUCCESS;
}

CUptiResult access_attribute_locked(Config& c, CUpti_ActivityAttribute attr, bool write, size_t* value_size,
                                   void* value) {
  Attributes& a = c.attributes;
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE: return attribute(a.device_buffer_size, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
      return attribute(a.device_buffer_size_cdp, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
      return attribute(a.device_buffer_pool_limit, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
      return attribute(a.zeroed_out_activity_buffer, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
      return attribute(a.device_buffer_pre_allocate_value, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
      return attribute(a.mem_allocation_type_host_pinned, write, value_size, value);
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
      return attribute(a.per_thread_activity_buffer, write, value_size, value);
#if CUPTI_API_VERSION >= 130000  // an attribute of CUPTI 13.0
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS:
      return attribute(a.device_buffer_size_device_graphs, write, value_size, value);
#endif
    // CUPTI has not used profiling semaphore pools since CUDA 12.3.
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE:
      return CUPTI_ERROR_NOT_SUPPORTED;
    default:
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
}

CUptiResult access_attribute(CUpti_ActivityAttribute attr, bool write, size_t* value_size, void* value) {
  if (value_size == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  Config& c = config();
  std::lock_guard lock(c.mutex);
  CUptiResult result = access_attribute_locked(c, attr, write, value_size, value);
  c.client_zeroes_buffers.store(c.attributes.zeroed_out_activity_buffer != 0, std::memory_order_relaxed);
  return result;
}

bool valid_external_kind(CUpti_ExternalCorrelationKind kind) {
  return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

}  // namespace

// ---- shared with cupti_api.cpp -------------------------------------------------------------------------------

bool activity_wants_api_events() { return config().wants_api_events.load(std::memory_order_relaxed); }

void activity_api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& call) {
  ThreadState& t = thread_state();
  if (t.depth++ > 0) return;  // part of the call in progress
  t.correlation = call.correlationId;
  t.runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  t.record = api_record_wanted(domain, cbid);
  t.external_at_entry = 0;
  t.timed = t.record || (config().kinds.load(std::memory_order_relaxed) & kCallKinds) != 0;
  if (t.timed) t.start = timestamp();
  if (!t.record) return;
  if (kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
    for (size_t kind = 0; kind < t.external.size(); ++kind) {
      if (t.external[kind].empty()) continue;
      t.external_at_entry |= 1u << kind;
      t.external_ids_at_entry[kind] = t.external[kind].back();
    }
  }
}

void activity_api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& call) {
  ThreadState& t = thread_state();
  if (t.depth == 0) return;  // entered before API events were recorded
  if (--t.depth > 0) return;
  // The same call that entered (not one whose ENTER came before recording began while a nested one's did not).
  if (t.timed && call.correlationId == t.correlation) {
    const uint64_t end = timestamp();
    if (t.record && api_record_wanted(domain, cbid)) {
      Store& s = store();
      std::lock_guard lock(s.mutex);
      write_api_record(s, domain, cbid, t, end, call);
    }
    write_call_record(domain, cbid, t, end, call);
  }
  t.record = false;
  t.timed = false;
  t.correlation = 0;
  if (t.requesting || t.delivering) return;
  write_staged();
  deliver();
}

void activity_finalize() {
  Config& c = config();
  {
    std::lock_guard lock(c.mutex);
    c.kinds.store(0);
    c.runtime.set_all(false);
    c.driver.set_all(false);
    c.attributes = Attributes{};
    c.client_zeroes_buffers.store(false);
    c.cuda_event_device_timestamps = 0;
    c.timestamp_source.store(nullptr);
    apply_locked(c);
  }
  Store& s = store();
  {
    std::lock_guard lock(s.staged_mutex);
    s.staged.clear();
    staged_any.store(false);
  }
  {
    std::lock_guard lock(s.mutex);
    s.request = nullptr;
    s.complete = nullptr;
    s.has_current = false;  // the client's buffers are not handed back: CUPTI asks for a flush before finalizing
    s.finished.clear();
    finished_any.store(false);
    s.dropped = 0;
  }
  {
    EventIds& events = event_ids();
    std::lock_guard lock(events.mutex);
    events.known.clear();
  }
  call_generation.fetch_add(1);
  external_generation.fetch_add(1);
  refresh_tool_dispatch();
}

}  // namespace simcuda::cupti

// ---- the C API -----------------------------------------------------------------------------------------------

using namespace simcuda::cupti;

extern "C" {

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind(kind, true); }

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { return set_kind(kind, false); }

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return set_api(CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return set_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  Store& s = store();
  std::lock_guard lock(s.mutex);
  s.request = funcBufferRequested;
  s.complete = funcBufferCompleted;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  Store& s = store();
  {
    std::lock_guard lock(s.mutex);
    if (s.request == nullptr) return CUPTI_ERROR_INVALID_OPERATION;
  }
  write_staged();
  {
    std::lock_guard lock(s.mutex);
    // Every record written is complete: the current buffer goes back with a default flush once it holds one, and
    // with a forced flush even empty.
    if (s.has_current && (s.current.records > 0 || (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0))
      retire_current(s);
  }
  deliver();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext, uint32_t, uint32_t flag) {
  // Deprecated: CUPTI ignores the context and stream, as for cuptiActivityFlushAll.
  return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t* const end = buffer + validBufferSizeBytes;
  uint8_t* next = nullptr;
  if (*record == nullptr) {
    next = align_up(buffer);
  } else {
    size_t size = record_size((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    next = reinterpret_cast<uint8_t*>(*record) + size;
  }
  if (next >= end) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  CUpti_ActivityKind kind{};
  if (static_cast<size_t>(end - next) < sizeof kind) return CUPTI_ERROR_INVALID_KIND;
  std::memcpy(&kind, next, sizeof kind);
  size_t size = record_size(kind);
  if (size == 0 || static_cast<size_t>(end - next) < size) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = 0;
  if (context != nullptr) return CUPTI_SUCCESS;  // every buffer is global: no context has a queue of its own
  Store& s = store();
  std::lock_guard lock(s.mutex);
  *dropped = s.dropped;
  s.dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  return access_attribute(attr, true, valueSize, value);
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  return access_attribute(attr, false, valueSize, value);
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  thread_state().external[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* lastId) {
  if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::vector<uint64_t>& stack = thread_state().external[kind];
  if (stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId != nullptr) *lastId = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  if (funcTimestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  config().timestamp_source.store(funcTimestamp, std::memory_order_release);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp_out) {
  if (timestamp_out == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp_out = timestamp();
  return CUPTI_SUCCESS;
}

// The ids records carry: each device's primary context has its id (device 0's is 1), streams have cuStreamGetId's.
CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  if (contextId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const simcuda::PrivateTable* driver = linked_driver();
  if (driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (context == nullptr || (table_has_contexts(*driver) && driver->context_uid(context) == 0))
    return CUPTI_ERROR_INVALID_CONTEXT;
  *contextId = context_id_of(context);
  return CUPTI_SUCCESS;
}

// The ordinal of the context's device.
CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  if (deviceId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const simcuda::PrivateTable* driver = linked_driver();
  if (driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (context == nullptr || (table_has_contexts(*driver) && driver->context_device(context) < 0))
    return CUPTI_ERROR_INVALID_CONTEXT;
  *deviceId = device_of(context);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t perThreadStream, uint32_t* streamId) {
  if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (linked_driver() == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  uint32_t id = stream_id_of(stream, perThreadStream != 0);
  if (id == CUPTI_SYNCHRONIZATION_INVALID_VALUE) return CUPTI_ERROR_INVALID_STREAM;
  *streamId = id;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* streamId) {
  return cuptiGetStreamIdEx(context, stream, 0, streamId);
}

#if CUPTI_API_VERSION >= 130000  // a call of CUPTI 13.0
CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable) {
  Config& c = config();
  std::lock_guard lock(c.mutex);
  c.cuda_event_device_timestamps = enable;
  if (enable != 0) say_once("device timestamps of CUDA_EVENT records (enabled, deviceTimestamp stays 0)");
  return CUPTI_SUCCESS;
}
#endif

}  // extern "C"
