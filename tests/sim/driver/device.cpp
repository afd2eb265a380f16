#include "device.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../common/error_table.h"
#include "device_table.h"
#include "driver_state.h"
#include "graph.h"
#include "tool_events.h"

namespace simcuda {
namespace {

// The calling thread's default stream on each device (the _ptsz/_ptds API's stream 0).
thread_local Stream* per_thread_stream[kMaxDevices] = {};

// A thread's default streams go when the thread does (their queued work still runs first).
struct PerThreadStreamOwner {
  ~PerThreadStreamOwner();
};
thread_local PerThreadStreamOwner per_thread_stream_owner;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A sticky fault the kernel body running on this worker raised, applied when the body returns (raise_fault).
thread_local int trapped_code = 0;

// What a kernel body is running, for simcuda_device_assert/fault on the worker thread, and on which device.
thread_local Kernel* running_kernel = nullptr;
thread_local Device* worker_device = nullptr;
// Whether that body raised a sticky fault (its kernel trapped): its later simcuda_sleep_us calls return at once.
thread_local bool running_kernel_trapped = false;

// How long a kernel without a body keeps its stream busy: SIMCUDA_KERNEL_US (simcuda.h), read once.
unsigned default_kernel_us() {
  static const unsigned us = [] {
    const char* text = std::getenv("SIMCUDA_KERNEL_US");
    char* end = nullptr;
    unsigned long value = text != nullptr ? std::strtoul(text, &end, 10) : 0;
    return text != nullptr && *text != '\0' && *end == '\0' && value <= 10'000'000 ? static_cast<unsigned>(value) : 10u;
  }();
  return us;
}

bool blocking(const Stream* s) { return (s->flags & CU_STREAM_NON_BLOCKING) == 0; }

}  // namespace

Kernel* current_device_kernel() { return running_kernel; }
bool current_kernel_trapped() { return running_kernel_trapped; }

namespace {
PerThreadStreamOwner::~PerThreadStreamOwner() {
  for (Stream* stream : per_thread_stream) {
    if (stream != nullptr) stream->device->retire_per_thread_stream(stream);
  }
}

// What all devices share (device.h). Never destroyed: worker threads outlive static destruction at exit.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::mutex creation;
  std::atomic<Device*> devices[kMaxDevices] = {};
  int process_fault = 0;  // guarded by mutex: a fault that lost every context, also those of devices made later
};
Shared& shared() {
  static Shared* instance = new Shared;
  return *instance;
}

}  // namespace

Device& Device::of(int ordinal) {
  Shared& s = shared();
  if (Device* device = s.devices[ordinal].load(std::memory_order_acquire)) return *device;
  std::lock_guard lock(s.creation);
  if (Device* device = s.devices[ordinal].load()) return *device;
  auto* device = new Device(ordinal);  // never destroyed, as Shared
  s.devices[ordinal].store(device, std::memory_order_release);
  static std::once_flag at_exit_once;
  std::call_once(at_exit_once, [] { std::atexit(shut_down_at_exit); });
  return *device;
}

Device* Device::current() {
  int ordinal = current_device();
  return ordinal >= 0 ? &of(ordinal) : nullptr;
}

Device* Device::running() { return worker_device; }

Stream* Device::find(CUstream handle) {
  Shared& s = shared();
  std::lock_guard lock(s.mutex);
  for (auto& slot : s.devices) {
    Device* device = slot.load(std::memory_order_acquire);
    if (device == nullptr) continue;
    for (Stream* stream : device->streams_) {
      if (reinterpret_cast<CUstream>(stream) == handle) return stream->destroyed ? nullptr : stream;
    }
  }
  return nullptr;
}

Device::Device(int ordinal) : ordinal_(ordinal), mutex_(shared().mutex), changed_(shared().changed) {
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  launch_blocking_ = blocking != nullptr && std::strcmp(blocking, "1") == 0;
  std::lock_guard lock(mutex_);
  legacy_ = new_stream_locked(0, /*legacy=*/true);
  if (shared().process_fault != 0) sticky_.store(shared().process_fault, std::memory_order_release);
}

void Device::shut_down_at_exit() {
  for (auto& slot : shared().devices) {
    if (Device* device = slot.load(std::memory_order_acquire)) device->shut_down();
  }
}

// The process is exiting: like the driver tearing its context down, drop queued work, stop running kernels (at
// their next simcuda_sleep_us) and wait a bounded time for bodies still running, so that none touches the
// program's static objects after they are destroyed. Assertion lines the host never synchronized on are printed.
void Device::shut_down() {
  std::unique_lock lock(mutex_);
  shutting_down_.store(true, std::memory_order_release);
  for (Stream* s : streams_) s->queue.clear();
  changed_.notify_all();
  changed_.wait_for(lock, std::chrono::seconds(2), [&] {
    for (const Stream* s : streams_) {
      if (s->busy) return false;
    }
    return true;
  });
  flush_messages_locked();
}

Stream* Device::new_stream_locked(unsigned flags, bool legacy) {
  auto* stream = new Stream;
  stream->device = this;
  stream->id = next_stream_id_++;
  stream->flags = flags;
  stream->legacy = legacy;
  streams_.push_back(stream);
  stream->worker = std::thread([this, stream] { worker_loop(stream); });
  stream->worker.detach();
  return stream;
}

CUresult Device::observe_error() {
  if (shutting_down()) return CUDA_ERROR_DEINITIALIZED;
  return static_cast<CUresult>(sticky_.load(std::memory_order_acquire));
}

void Device::flush_messages_locked() {
  // The driver prints the device's assertion lines when the host learns of the fault.
  for (const std::string& line : pending_messages_) {
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(STDERR_FILENO, p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  pending_messages_.clear();
}

Stream* Device::resolve(CUstream handle, bool per_thread) {
  if (handle == CU_STREAM_PER_THREAD || (handle == nullptr && per_thread)) {
    Stream*& own = per_thread_stream[ordinal_];
    if (own == nullptr) {
      (void)&per_thread_stream_owner;  // constructs the thread's owner, whose destructor retires the stream
      std::lock_guard lock(mutex_);
      own = new_stream_locked(0, false);
    }
    return own;
  }
  if (handle == nullptr || handle == CU_STREAM_LEGACY) return legacy_;
  return find(handle);
}

CUstream Device::create_stream(unsigned flags) {
  Stream* stream = nullptr;
  {
    std::lock_guard lock(mutex_);
    stream = new_stream_locked(flags, false);
  }
  auto handle = reinterpret_cast<CUstream>(stream);
  emit_stream_resource_event(CUPTI_CBID_RESOURCE_STREAM_CREATED, handle);
  return handle;
}

CUresult Device::destroy_stream(Stream* stream) {
  if (stream == legacy_ || stream == per_thread_stream[ordinal_]) return CUDA_ERROR_INVALID_HANDLE;
  emit_stream_resource_event(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, reinterpret_cast<CUstream>(stream));
  std::lock_guard lock(mutex_);
  // As with the real driver, work already queued still runs; the handle is dead at once.
  stream->destroyed = true;
  changed_.notify_all();
  return CUDA_SUCCESS;
}

void Device::retire_per_thread_stream(Stream* stream) {
  std::lock_guard lock(mutex_);
  stream->destroyed = true;
  changed_.notify_all();
}

bool Device::ready_locked(const Work& work) const {
  for (const auto& [stream, seq] : work.waits) {
    // A wait on another device whose context was lost is over: that work will never run. (CUDA does not document
    // what a stream waiting on a lost context's event does; to be confirmed on a GPU, docs/gpu-validation.md.)
    if (stream->completed < seq && !(stream->device != this && stream->device->faulted())) return false;
  }
  return true;
}

CUresult Device::enqueue(Stream* stream, Work work, uint64_t* seq_out) {
  std::lock_guard lock(mutex_);
  return enqueue_locked(stream, std::move(work), seq_out);
}

CUresult Device::enqueue_locked(Stream* stream, Work work, uint64_t* seq_out) {
  if (shutting_down()) return CUDA_ERROR_DEINITIALIZED;
  if (faulted()) return static_cast<CUresult>(sticky_.load());
  if (stream->capture != nullptr) {
    // Kernel launches and stream memory operations are captured (launch, mem_ops); anything else invalidates the
    // capture, as unsupported work does on CUDA.
    say_unsupported_once("capturing work other than kernel launches and stream memory operations into a graph");
    stream->capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  // The legacy default stream waits for all blocking streams, and they wait for it.
  if (stream->legacy) {
    for (Stream* other : streams_) {
      if (other != stream && blocking(other) && other->enqueued > other->completed)
        work.waits.emplace_back(other, other->enqueued);
    }
  } else if (blocking(stream) && legacy_->enqueued > legacy_->completed) {
    work.waits.emplace_back(legacy_, legacy_->enqueued);
  }
  if (device_activity_wanted()) tag_device_activity(work, *stream);  // CUPTI activity records (tool_events.h)
  work.seq = ++stream->enqueued;
  if (seq_out != nullptr) *seq_out = work.seq;
  stream->queue.push_back(std::move(work));
  changed_.notify_all();
  return CUDA_SUCCESS;
}

GraphNode* Device::capture_locked(Stream* stream, CUgraphNodeType type) {
  if (stream->capture->invalidated) return nullptr;
  // Linear within the stream: each captured operation depends on the one before it.
  GraphNode* node = stream->capture->add(type, stream->capture_dependencies);
  stream->capture_dependencies.assign(1, node);
  return node;
}

void Device::worker_loop(Stream* stream) {
  worker_device = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return (!stream->queue.empty() && ready_locked(stream->queue.front())) ||
             (stream->destroyed && stream->queue.empty());
    });
    if (stream->queue.empty()) {
      // Destroyed and drained: no longer part of the device (the object stays, for waits that still name it).
      std::erase(streams_, stream);
      return;
    }
    Work work = std::move(stream->queue.front());
    stream->queue.pop_front();
    stream->busy = true;
    bool lands = !faulted() && !shutting_down();
    if (lands && work.kind != Work::Kind::Kernel && work.kind != Work::Kind::HostFunc) {
      // Memory operations are done under the lock: none lands once a fault was raised.
      execute(work);
    } else if (lands) {
      lock.unlock();
      execute(work);
      lock.lock();
    }
    stream->busy = false;
    // Only the worker whose kernel trapped applies its fault: another stream finishing meanwhile must not make the
    // context sticky while that kernel's threads are still printing.
    if (trapped_code != 0 && !faulted()) lose_context_locked(trapped_code);
    trapped_code = 0;
    if (!faulted()) stream->completed = work.seq;
    changed_.notify_all();
  }
}

void Device::execute(Work& work) {
  const int64_t activity_start = work.activity.wanted ? now_ns() : 0;  // CUPTI activity records (tool_events.h)
  switch (work.kind) {
    case Work::Kind::Kernel: {
      std::vector<void*> args;
      args.reserve(work.arg_offsets.size());
      for (size_t offset : work.arg_offsets) args.push_back(work.arg_bytes.data() + offset);
      running_kernel = work.kernel;
      running_kernel_trapped = false;
      if (work.body != nullptr)
        work.body(args.empty() ? nullptr : args.data(), work.grid, work.block);
      else
        simcuda_sleep_us(default_kernel_us());
      running_kernel = nullptr;
      break;
    }
    case Work::Kind::WriteValue32:
      std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(work.address))
          .store(static_cast<uint32_t>(work.value), std::memory_order_release);
      break;
    case Work::Kind::WriteValue64:
      std::atomic_ref<uint64_t>(*static_cast<uint64_t*>(work.address)).store(work.value, std::memory_order_release);
      break;
    case Work::Kind::Copy:
      std::memmove(work.address, work.source, work.bytes);
      break;
    case Work::Kind::Fill:
      if (work.fill_width == sizeof(uint32_t)) {
        auto word = static_cast<uint32_t>(work.value);
        for (size_t at = 0; at + sizeof word <= work.bytes; at += sizeof word)
          std::memcpy(static_cast<char*>(work.address) + at, &word, sizeof word);
      } else {
        std::memset(work.address, static_cast<int>(work.value), work.bytes);
      }
      break;
    case Work::Kind::Marker:
      if (work.completed_at_ns) work.completed_at_ns->store(now_ns());
      break;
    case Work::Kind::HostFunc:
      work.host_fn(work.user_data);
      break;
  }
  if (work.activity.wanted) emit_device_activity(work, activity_start, now_ns());
}

void Device::raise_fault(int code, std::string message) {
  std::lock_guard lock(mutex_);
  if (!message.empty()) pending_messages_.push_back(std::move(message));
  if (!is_sticky_error(code)) {
    if (async_error_ == 0) async_error_ = code;
    return;
  }
  if (faulted()) return;
  if (running_kernel != nullptr) {
    // From a kernel body: its kernel traps, but the host learns of it only once the body has returned
    // (worker_loop), so that a sync prints every line the kernel's threads printed, as a device's printf buffer is
    // read at once. Raising it here would let a waiting sync print the first line and lose the others.
    running_kernel_trapped = true;
    if (trapped_code == 0) trapped_code = code;  // this worker's: the body runs on its stream's worker thread
    return;
  }
  lose_context_locked(code);
}

// What a fault reaches, as the error's documentation (cuda.h) says. CUDA_ERROR_ASSERT: "The context cannot be used
// anymore, and must be destroyed" -- that context, the faulting device's; other devices' contexts keep working
// (the documentation says nothing of them). Every other sticky error (700 illegal address, 714-719, 702, 721, 226):
// "This leaves the process in an inconsistent state and any further CUDA work will return the same error" -- every
// context of the process. Both readings are to be confirmed on a machine with two GPUs (docs/gpu-validation.md).
void Device::lose_context_locked(int code) {
  if (code == CUDA_ERROR_ASSERT) {
    lose_one_context_locked(code);
    return;
  }
  if (shared().process_fault == 0) shared().process_fault = code;
  for (auto& slot : shared().devices) {
    Device* device = slot.load(std::memory_order_acquire);
    if (device != nullptr && !device->faulted()) device->lose_one_context_locked(code);
  }
}

void Device::lose_one_context_locked(int code) {
  sticky_.store(code, std::memory_order_release);
  // The context is lost: nothing queued on any stream will run.
  for (Stream* s : streams_) s->queue.clear();
  changed_.notify_all();
}

CUresult make_kernel_work(CUfunction function, dim3 grid, dim3 block, void** params, void** extra, Work* work) {
  if (!is_kernel(function)) return CUDA_ERROR_INVALID_HANDLE;
  auto* kernel = reinterpret_cast<Kernel*>(function);
  unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 ||
      threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64)
    return CUDA_ERROR_INVALID_VALUE;
  if (extra != nullptr) {
    say_unsupported_once("a launch with 'extra' (CU_LAUNCH_PARAM_BUFFER_POINTER)");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  simcuda_kernel_fn body = resolve_for_launch(kernel);
  *work = Work{};
  work->kind = Work::Kind::Kernel;
  work->kernel = kernel;
  work->body = body;
  work->grid = grid;
  work->block = block;
  if (body == nullptr) return CUDA_SUCCESS;  // a no-op reads no argument
  if (!kernel->param_sizes) {
    say_unsupported_once(
        "running a kernel body whose parameter sizes are unknown (register it with "
        "simcuda_register_kernel_with_params)");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // The driver copies argument values at launch: the caller's argument storage may be gone when the kernel runs.
  size_t count = kernel->param_sizes->size();
  if (count > 0 && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    size_t size = (*kernel->param_sizes)[i];
    size_t offset = (work->arg_bytes.size() + 15) & ~size_t{15};
    work->arg_bytes.resize(offset + size);
    work->arg_offsets.push_back(offset);
  }
  for (size_t i = 0; i < count; ++i)
    std::memcpy(work->arg_bytes.data() + work->arg_offsets[i], params[i], (*kernel->param_sizes)[i]);
  return CUDA_SUCCESS;
}

CUresult Device::launch(Stream* stream, Work work, unsigned shared_bytes) {
  uint64_t seq = 0;
  {
    std::lock_guard lock(mutex_);
    if (stream->capture != nullptr && !shutting_down() && !faulted()) {
      GraphNode* node = capture_locked(stream, CU_GRAPH_NODE_TYPE_KERNEL);
      if (node == nullptr) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      node->launch = std::move(work);
      node->shared_bytes = shared_bytes;
      return CUDA_SUCCESS;
    }
    if (CUresult r = enqueue_locked(stream, std::move(work), &seq); r != CUDA_SUCCESS) return r;
  }
  // CUDA_LAUNCH_BLOCKING=1: the launch returns once the kernel has run, with its fault if it raised one.
  return launch_blocking_ ? wait_for(stream, seq) : CUDA_SUCCESS;
}

CUresult Device::launch_graph(Stream* stream, const GraphExec& exec) {
  std::lock_guard lock(mutex_);
  if (shutting_down()) return CUDA_ERROR_DEINITIALIZED;
  if (faulted()) return static_cast<CUresult>(sticky_.load());
  if (stream->capture != nullptr) {
    say_unsupported_once("launching a graph into a capturing stream (a child graph node)");
    stream->capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  // All of it queued under one hold of the lock: no other work on the stream between the graph's nodes, and a
  // fault raised by one of them meanwhile drops the rest with everything else queued.
  for (size_t i : exec.order) {
    for (const Work& work : exec.nodes[i].work) {
      if (CUresult r = enqueue_locked(stream, work); r != CUDA_SUCCESS) return r;
    }
  }
  return CUDA_SUCCESS;
}

CUresult Device::mem_ops(Stream* stream, std::vector<CUstreamBatchMemOpParams> ops) {
  std::lock_guard lock(mutex_);
  if (shutting_down()) return CUDA_ERROR_DEINITIALIZED;
  if (faulted()) return static_cast<CUresult>(sticky_.load());
  if (stream->capture != nullptr) {
    // CUDA captures stream memory operations as a batch memory-operation node.
    GraphNode* node = capture_locked(stream, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    if (node == nullptr) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    node->mem_ops = std::move(ops);
    node->mem_op_context = primary_context(ordinal_);
    return CUDA_SUCCESS;
  }
  for (Work& work : mem_op_work(ops)) {
    if (CUresult r = enqueue_locked(stream, std::move(work)); r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult Device::copy(Stream* stream, void* dst, const void* src, size_t bytes, bool blocking_copy) {
  Work work;
  work.kind = Work::Kind::Copy;
  work.address = dst;
  work.source = src;
  work.bytes = bytes;
  uint64_t seq = 0;
  if (CUresult r = enqueue(stream, std::move(work), &seq); r != CUDA_SUCCESS)
    return blocking_copy ? learned_at_sync(r) : r;
  return blocking_copy ? wait_for(stream, seq) : CUDA_SUCCESS;
}

CUresult Device::fill(Stream* stream, void* dst, unsigned char value, size_t bytes, bool blocking_fill) {
  Work work;
  work.kind = Work::Kind::Fill;
  work.address = dst;
  work.value = value;
  work.bytes = bytes;
  uint64_t seq = 0;
  if (CUresult r = enqueue(stream, std::move(work), &seq); r != CUDA_SUCCESS)
    return blocking_fill ? learned_at_sync(r) : r;
  return blocking_fill ? wait_for(stream, seq) : CUDA_SUCCESS;
}

CUresult Device::fill32(Stream* stream, void* dst, uint32_t value, size_t count) {
  Work work;
  work.kind = Work::Kind::Fill;
  work.address = dst;
  work.value = value;
  work.bytes = count * sizeof(uint32_t);
  work.fill_width = sizeof(uint32_t);
  return enqueue(stream, std::move(work));
}

CUresult Device::host_func(Stream* stream, CUhostFn fn, void* user_data) {
  Work work;
  work.kind = Work::Kind::HostFunc;
  work.host_fn = fn;
  work.user_data = user_data;
  return enqueue(stream, std::move(work));
}

CUresult Device::record_event(Event* event, Stream* stream) {
  Work work;
  work.kind = Work::Kind::Marker;
  auto stamp = std::make_shared<std::atomic<int64_t>>(0);
  work.completed_at_ns = stamp;
  uint64_t seq = 0;
  if (CUresult r = enqueue(stream, std::move(work), &seq); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(mutex_);
  event->stream = stream;
  event->seq = seq;
  event->completed_at_ns = std::move(stamp);
  return CUDA_SUCCESS;
}

CUresult Device::wait_event(Stream* stream, Event* event) {
  Work work;
  {
    std::lock_guard lock(mutex_);
    if (event->stream != nullptr) work.waits.emplace_back(event->stream, event->seq);
  }
  return enqueue(stream, std::move(work));
}

CUresult Device::sync_result_locked() {
  // Only once the host learns of the fault: a kernel body that is still raising its lines has not made it sticky yet.
  if (faulted()) flush_messages_locked();
  if (shutting_down()) return CUDA_ERROR_DEINITIALIZED;
  if (faulted()) return static_cast<CUresult>(sticky_.load());
  return static_cast<CUresult>(std::exchange(async_error_, 0));
}

// A synchronizing call refused because the context was lost while it was being checked (the fault came after its
// sync_ready and before its work was queued) learns of the fault as a sync does: the assertion lines are printed.
CUresult Device::learned_at_sync(CUresult refused) {
  return is_sticky_error(refused) ? sticky_at_sync() : refused;
}

CUresult Device::sticky_at_sync() {
  std::lock_guard lock(mutex_);
  return sync_result_locked();
}

CUresult Device::wait_for(Stream* stream, uint64_t seq) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return faulted() || shutting_down() || stream->completed >= seq; });
  return sync_result_locked();
}

CUresult Device::synchronize(Stream* stream) {
  std::unique_lock lock(mutex_);
  if (stream->capture != nullptr) {
    stream->capture->invalidated = true;  // as on CUDA: the illegal sync also breaks the capture
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  changed_.wait(lock, [&] { return faulted() || shutting_down() || (stream->queue.empty() && !stream->busy); });
  return sync_result_locked();
}

CUresult Device::synchronize_device() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    if (faulted() || shutting_down()) return true;
    for (const Stream* s : streams_) {
      if (!s->queue.empty() || s->busy) return false;
    }
    return true;
  });
  return sync_result_locked();
}

CUresult Device::query(Stream* stream) {
  std::lock_guard lock(mutex_);
  if (faulted()) return sync_result_locked();
  if (!stream->queue.empty() || stream->busy) return CUDA_ERROR_NOT_READY;
  return sync_result_locked();
}

CUresult Device::query_event(Event* event) {
  std::lock_guard lock(mutex_);
  if (faulted()) return sync_result_locked();
  if (event->stream != nullptr && event->stream->completed < event->seq) return CUDA_ERROR_NOT_READY;
  return CUDA_SUCCESS;
}

CUresult Device::synchronize_event(Event* event) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return faulted() || shutting_down() || event->stream == nullptr || event->stream->completed >= event->seq;
  });
  return sync_result_locked();
}

CUresult Device::begin_capture(Stream* stream) {
  std::lock_guard lock(mutex_);
  if (stream->legacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the legacy stream cannot be captured
  if (stream->capture != nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  stream->capture = new Graph;
  // The graph is one from the start: while the capture runs, nodes may be added to it (cuStreamGetCaptureInfo).
  register_graph(stream->capture);
  stream->capture_dependencies.clear();
  static uint64_t captures = 0;  // under mutex_
  stream->capture_id = ++captures;
  return CUDA_SUCCESS;
}

CUresult Device::end_capture(Stream* stream, Graph** graph) {
  std::lock_guard lock(mutex_);
  if (stream->capture == nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  Graph* captured = std::exchange(stream->capture, nullptr);
  stream->capture_dependencies.clear();
  stream->capture_info.clear();
  if (captured->invalidated) {
    forget_graph(captured);
    delete captured;
    *graph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *graph = captured;
  return CUDA_SUCCESS;
}

CUstreamCaptureStatus Device::capture_info(Stream* stream, uint64_t* id, Graph** graph,
                                           const CUgraphNode** dependencies, size_t* count) {
  std::lock_guard lock(mutex_);
  if (stream->capture == nullptr) return CU_STREAM_CAPTURE_STATUS_NONE;
  if (stream->capture->invalidated) return CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  stream->capture_info.clear();
  for (GraphNode* node : stream->capture_dependencies) stream->capture_info.push_back(reinterpret_cast<CUgraphNode>(node));
  *id = stream->capture_id;
  *graph = stream->capture;
  *dependencies = stream->capture_info.data();
  *count = stream->capture_info.size();
  return CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

CUstreamCaptureStatus Device::capture_status(Stream* stream) {
  std::lock_guard lock(mutex_);
  if (stream->capture == nullptr) return CU_STREAM_CAPTURE_STATUS_NONE;
  return stream->capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

}  // namespace simcuda
