// A simulated GPU, one per visible device with its primary context: streams with their own worker threads (work in
// order per stream, streams concurrent), the legacy default stream's implicit synchronization, events, stream
// capture into graphs and graph replay, and the context's sticky error after a device fault. The driver API
// (driver_api.cpp, graph_api.cpp) is a thin layer over this class; graphs themselves are graph.h's.
//
// All devices share one lock and one condition: work on one device may wait for another device's stream (an event
// recorded there, cuStreamWaitEvent), and its worker must wake when that stream moves.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <deque>

#include "kernel_registry.h"
#include "tool_events.h"

namespace simcuda {

class Device;
struct Stream;
struct Graph;
struct GraphNode;
struct GraphExec;

struct Work {
  enum class Kind { Kernel, WriteValue32, WriteValue64, Copy, Fill, Marker, HostFunc };
  Kind kind = Kind::Marker;
  uint64_t seq = 0;
  std::vector<std::pair<Stream*, uint64_t>> waits;  // (stream, seq) that must complete first

  Kernel* kernel = nullptr;
  simcuda_kernel_fn body = nullptr;  // nullptr: a no-op that takes the default kernel time
  dim3 grid{}, block{};
  std::vector<unsigned char> arg_bytes;  // copies of the launch arguments
  std::vector<size_t> arg_offsets;

  void* address = nullptr;  // write value, copy or fill destination
  uint64_t value = 0;
  const void* source = nullptr;
  size_t bytes = 0;
  unsigned fill_width = 1;  // bytes of the fill pattern (cuMemsetD8 or cuMemsetD32)

  CUhostFn host_fn = nullptr;
  void* user_data = nullptr;

  std::shared_ptr<std::atomic<int64_t>> completed_at_ns;  // event markers

  ActivityTag activity;  // CUPTI activity records (tool_events.h)
};

// A kernel launch as the device runs it, with the checks a launch makes first (the function handle, the
// configuration, what the simulator cannot model) and its arguments copied, as the driver copies them at launch.
CUresult make_kernel_work(CUfunction function, dim3 grid, dim3 block, void** params, void** extra, Work* work);

struct Stream {
  Device* device = nullptr;  // whose context the stream was created in
  uint64_t id = 0;
  unsigned flags = 0;
  int priority = 0;  // recorded and reported; the simulated device does not schedule by it
  bool legacy = false;
  bool destroyed = false;
  // Guarded by Device::mutex_.
  std::deque<Work> queue;
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  bool busy = false;
  Graph* capture = nullptr;                         // the graph a capture in progress adds nodes to
  std::vector<GraphNode*> capture_dependencies;     // what the stream's next captured operation depends on
  uint64_t capture_id = 0;                          // of the capture in progress (unique in the process)
  std::vector<CUgraphNode> capture_info;            // what cuStreamGetCaptureInfo last handed out
  std::thread worker;
};

struct Event {
  Device* device = nullptr;  // whose context the event was created in
  unsigned flags = 0;
  Stream* stream = nullptr;  // last record
  uint64_t seq = 0;
  std::shared_ptr<std::atomic<int64_t>> completed_at_ns;
};

class Device {
 public:
  // The device of a visible ordinal (created on first use), and of the calling thread's current context (nullptr
  // when none is current).
  static Device& of(int ordinal);
  static Device* current();
  // The device whose stream worker runs the calling kernel body (nullptr off the workers).
  static Device* running();
  // A stream handle of any device's context (not the default-stream handles): nullptr when none is live.
  static Stream* find(CUstream handle);
  int ordinal() const { return ordinal_; }

  // The context's sticky error, or CUDA_SUCCESS (any call can learn it; only synchronizing calls, and the exit of
  // the process, print the device's pending assertion lines, as the driver does).
  CUresult observe_error();

  // Stream handles: nullptr is this device's legacy default stream (the calling thread's own stream on this device
  // when per_thread is set, as for the _ptsz entry points), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are the two
  // default streams; any other handle may be a stream of another device's context.
  Stream* resolve(CUstream handle, bool per_thread);
  CUstream create_stream(unsigned flags);
  void retire_per_thread_stream(Stream* stream);
  CUresult destroy_stream(Stream* stream);

  // A kernel launch made by make_kernel_work; into a capturing stream, a kernel node.
  CUresult launch(Stream* stream, Work work, unsigned shared_bytes);
  // An instantiated graph's nodes, in its replay order, queued at once behind the stream's earlier work.
  CUresult launch_graph(Stream* stream, const GraphExec& exec);
  // Stream memory operations (already checked by check_mem_ops): each in the stream's order; into a capturing
  // stream, one batch memory-operation node holding them all.
  CUresult mem_ops(Stream* stream, std::vector<CUstreamBatchMemOpParams> ops);
  CUresult copy(Stream* stream, void* dst, const void* src, size_t bytes, bool blocking);
  CUresult fill(Stream* stream, void* dst, unsigned char value, size_t bytes, bool blocking);
  // count 32-bit words of value (cuMemsetD32Async).
  CUresult fill32(Stream* stream, void* dst, uint32_t value, size_t count);
  CUresult host_func(Stream* stream, CUhostFn fn, void* user_data);
  CUresult record_event(Event* event, Stream* stream);
  CUresult wait_event(Stream* stream, Event* event);

  CUresult synchronize(Stream* stream);
  CUresult synchronize_device();
  CUresult query(Stream* stream);
  CUresult query_event(Event* event);
  CUresult synchronize_event(Event* event);
  // What a synchronizing call returns once the context is known to be lost: the sticky error, after printing the
  // device's pending assertion lines (a sync is where the driver prints them).
  CUresult sticky_at_sync();
  // The same for a synchronizing call whose work was refused: a sticky error was learned there, as at a sync.
  CUresult learned_at_sync(CUresult refused);

  CUresult begin_capture(Stream* stream);
  CUresult end_capture(Stream* stream, Graph** graph);
  CUstreamCaptureStatus capture_status(Stream* stream);
  // cuStreamGetCaptureInfo: the status and, while a capture is active, its id, graph and the stream's current
  // dependencies (valid until the stream's next captured operation or the end of the capture, as CUDA documents).
  CUstreamCaptureStatus capture_info(Stream* stream, uint64_t* id, Graph** graph, const CUgraphNode** dependencies,
                                     size_t* count);

  // Device side, from a kernel body.
  void raise_fault(int code, std::string message);
  bool faulted() const { return sticky_.load(std::memory_order_acquire) != 0; }
  // True once the process is exiting: kernels stop at their next simcuda_sleep_us, nothing new runs.
  bool shutting_down() const { return shutting_down_.load(std::memory_order_acquire); }

 private:
  explicit Device(int ordinal);
  Stream* new_stream_locked(unsigned flags, bool legacy);
  CUresult enqueue(Stream* stream, Work work, uint64_t* seq_out = nullptr);
  CUresult enqueue_locked(Stream* stream, Work work, uint64_t* seq_out = nullptr);
  // The capturing stream's next node, depending on its previous operation; nullptr when the capture was invalidated.
  GraphNode* capture_locked(Stream* stream, CUgraphNodeType type);
  CUresult wait_for(Stream* stream, uint64_t seq);
  CUresult sync_result_locked();
  void flush_messages_locked();
  // The sticky error `code`: queued work on every stream is dropped; for a code whose documentation says the
  // whole process is left inconsistent, on every device (lose_process_locked).
  void lose_context_locked(int code);
  void lose_one_context_locked(int code);
  bool ready_locked(const Work& work) const;
  void worker_loop(Stream* stream);
  void execute(Work& work);
  void shut_down();
  static void shut_down_at_exit();

  const int ordinal_;
  bool launch_blocking_ = false;  // CUDA_LAUNCH_BLOCKING=1, read once as the driver does
  std::mutex& mutex_;                 // shared by all devices (above)
  std::condition_variable& changed_;  // shared by all devices
  std::vector<Stream*> streams_;  // live streams; Stream objects are never freed: waits and events may name them
  Stream* legacy_ = nullptr;
  std::atomic<int> sticky_{0};
  std::atomic<bool> shutting_down_{false};
  int async_error_ = 0;  // a non-sticky device error, reported once by the next synchronizing call
  std::vector<std::string> pending_messages_;
  uint64_t next_stream_id_ = 1;
};

}  // namespace simcuda
