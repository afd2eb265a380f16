// The randomized launch schedule of the schedule property, replayable from its seed, and the code that carries it
// out through the CUDA runtime: shared by the simulator's job (schedule_job.cpp, whose kernels get simulated bodies)
// and the GPU's (tests/gpu/schedule_property.cu, real __global__ kernels), so that both run the very same plan.
//
// A plan is like a GPU-bound job's: several streams with deep queues (the host far ahead of the device), sometimes the
// legacy default stream among blocking ones or each thread's own default stream, one or two launching threads
// (sometimes sharing streams; launching at once, so that their calls overlap, or in turns, as a training step's
// forward and backward passes do, the second thread one for good or a new one each turn), host syncs of
// other streams and of the device, events (waited on by streams or by the host), streams made and destroyed, replays
// of CUDA graphs, and exactly one launch that asserts (a kernel, or a kernel node of a graph replay), with up to a
// hundred launches queued behind it on its stream. The device's assertion line names the kernel's function or is
// anonymous (operator(), as PyTorch's lambda kernels print), and its block and thread lie within the asserting
// launch's grid and block. Where the process has two or more GPUs, most plans spread the streams over two of them,
// each launch made with its stream's device current, as a model split over two GPUs is run (and with the legacy
// stream, each device's own legacy stream is one of the plan's streams): the other device keeps running its work
// after the assert, and the final sync is the failing device's.
//
// run() prints, before the final sync, what the oracle needs (the schedule is the seed's alone, whatever a tool does):
//   plan: streams S threads T steps N named|anonymous [graphs] [legacy] [per-thread] [turns of K, persistent|fresh]
//         [devices 2]
//   busy: B          (1: only the asserting launch's stream can have had work in flight at the fault, and every
//                    launch on it was queued after the one before it had returned)
//   asserting: stream 0x.. shared_mem M grid G block K [device D]
//   sync: <error name of the final cudaDeviceSynchronize>
// The asserting launch is the only one with its (stream, shared_mem) pair among the last 30,000 launches.
#ifndef FIRSTASSERT_SCHEDULE_PLAN_H
#define FIRSTASSERT_SCHEDULE_PLAN_H

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace schedule {

// The kernels a plan draws from, with PyTorch-like names; each program defines one kernel per name.
inline constexpr const char* kKernelNames[] = {"vectorized_elementwise_kernel", "reduce_kernel", "index_kernel",
                                               "gather_kernel", "softmax_warp_forward",
                                               "nll_loss_forward_reduce_cuda_kernel_2d"};
inline constexpr int kKernels = sizeof kKernelNames / sizeof kKernelNames[0];

// What cudaLaunchKernel is given for each kernel (its host stub), indexed as kKernelNames.
using KernelTable = std::array<const void*, kKernels>;

// The one argument of every kernel, passed by value.
struct KernelArgs {
  unsigned long long sleep_us;  // how long the kernel keeps its stream busy
  int asserts;                  // 0, or 1 for the asserting launch
  int anonymous;                // its line says operator() instead of the function
  unsigned block_x;             // the block and thread its line names
  unsigned thread_x;
  int kernel;
};

enum class Op { launch, sync_other, sync_device, record_wait, record_sync, churn, replay, replay_failing };

struct Step {
  Op op = Op::launch;
  int stream = 0;  // index into the streams
  int other = 0;   // record_wait: the waiting stream
  KernelArgs args{};
  unsigned grid = 1, block = 32, shared = 0;
};

struct Plan {
  int streams = 1;
  int threads = 1;
  bool anonymous = false;
  std::vector<Step> steps[2];  // per launching thread
  int failing_stream = 0;
  unsigned failing_shared = 0, failing_grid = 0, failing_block = 0;
  bool busy_one = false;
  bool graphs = false;    // some steps replay a captured graph of healthy kernels
  Step failing_node;      // when the assert is a graph's node: that node (the graph's second of three)
  bool failing_in_graph = false;
  bool legacy = false;    // stream 0 is the legacy default stream, the others blocking streams
  bool per_thread = false;  // stream 0 is each launching thread's own default stream (cudaStreamPerThread)
  // How two launching threads share the streams: at once (their calls overlap), or in turns of `turn` steps each,
  // the main thread first, the second thread one for good (persistent) or a new one each turn (fresh).
  enum class Sharing { at_once, persistent_turns, fresh_turns };
  Sharing sharing = Sharing::at_once;
  long turn = 0;
  // The GPUs the streams are spread over (1 or 2), and each stream's device.
  int devices = 1;
  std::vector<int> device_of;
};

// The seed's plan; launches_wanted > 0 fixes the number of launches (else drawn: 20 to 1,500). The order of the draws
// is the plan's identity: a seed names the same schedule in every program and every version of this file (on a
// process with one GPU; devices_available >= 2 adds the devices' draws after all the others).
inline Plan make_plan(uint64_t seed, long launches_wanted, int devices_available = 1) {
  std::mt19937_64 rng(seed);
  auto pick = [&](long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng); };
  Plan p;
  p.streams = static_cast<int>(pick(1, 8));
  p.threads = pick(0, 3) == 0 ? 2 : 1;
  p.anonymous = pick(0, 1) == 1;
  long launches = launches_wanted > 0 ? launches_wanted : pick(20, 1500);
  bool syncs = pick(0, 2) == 0, waits = p.streams > 1 && pick(0, 2) == 0, churn = pick(0, 3) == 0;
  p.graphs = pick(0, 2) == 0;
  p.legacy = pick(0, 3) == 0;
  bool device_syncs = pick(0, 3) == 0;
  p.failing_in_graph = p.graphs && pick(0, 1) == 1;
  p.failing_stream = static_cast<int>(pick(0, p.streams - 1));
  // The failing stream's launches, the assert among its last hundred and one.
  long on_failing =
      p.streams == 1 ? launches : std::max<long>(1, pick(launches / (2 * p.streams), launches / p.streams));
  long assert_at = pick(std::max<long>(0, on_failing - 101), on_failing - 1);
  long failing_seen = 0;
  unsigned short_sleep = static_cast<unsigned>(pick(5, 40));
  for (long i = 0, shared = 1; i < launches; ++i, shared = shared % 30000 + 1) {
    Step s;
    long left_failing = on_failing - failing_seen, left = launches - i;
    bool on_f = p.streams == 1 || (left_failing > 0 && pick(0, left - 1) < left_failing);
    s.stream = on_f ? p.failing_stream : static_cast<int>(pick(0, p.streams - 2));
    if (!on_f && s.stream >= p.failing_stream) ++s.stream;
    s.grid = static_cast<unsigned>(pick(1, 64));
    s.block = 32u << pick(0, 3);
    s.shared = static_cast<unsigned>(shared);
    s.args.kernel = static_cast<int>(pick(0, kKernels - 1));
    s.args.sleep_us = static_cast<unsigned long long>(pick(short_sleep, short_sleep * 4));
    if (on_f && failing_seen++ == assert_at) {
      s.args.asserts = 1;
      s.args.anonymous = p.anonymous ? 1 : 0;
      s.args.block_x = static_cast<unsigned>(pick(0, s.grid - 1));
      s.args.thread_x = static_cast<unsigned>(pick(0, s.block - 1));
      p.failing_shared = s.shared;
      p.failing_grid = s.grid;
      p.failing_block = s.block;
      if (p.failing_in_graph) {
        p.failing_node = s;
        s.op = Op::replay_failing;
      }
    } else if (p.graphs && pick(0, 25) == 0) {
      s.op = Op::replay;  // a replay of the healthy graph instead of this launch
    }
    int thread = p.threads == 2 && pick(0, 1) == 1 ? 1 : 0;
    p.steps[thread].push_back(s);
    if (syncs && pick(0, 60) == 0 && p.streams > 1) {
      Step sync;
      sync.op = Op::sync_other;
      sync.stream = static_cast<int>(pick(0, p.streams - 1));
      if (sync.stream != p.failing_stream) p.steps[thread].push_back(sync);
    }
    if (waits && pick(0, 40) == 0) {
      Step wait;
      wait.op = Op::record_wait;
      wait.stream = s.stream;
      wait.other = static_cast<int>(pick(0, p.streams - 1));
      if (wait.other != wait.stream) p.steps[thread].push_back(wait);
    }
    if (device_syncs && pick(0, 200) == 0) {
      Step sync;
      sync.op = Op::sync_device;
      p.steps[thread].push_back(sync);
    }
    if (waits && pick(0, 80) == 0) {
      Step host_wait;
      host_wait.op = Op::record_sync;
      host_wait.stream = s.stream;
      p.steps[thread].push_back(host_wait);
    }
    if (churn && pick(0, 30) == 0) {
      Step c;
      c.op = Op::churn;
      p.steps[thread].push_back(c);
    }
  }
  // Drawn after the steps, so that a seed keeps the steps it always had.
  p.per_thread = !p.legacy && pick(0, 4) == 0;
  if (p.threads == 2) {
    p.sharing = static_cast<Plan::Sharing>(pick(0, 2));
    p.turn = pick(1, 80);
  }
  // One busy stream: only the failing stream ever had launches, one after another: from one thread, or from two
  // taking turns on it (not on a per-thread stream, which is two streams then). Not with stream churn: a stream made
  // after the fault gets a launch that never runs, on a stream of its own, and its sync may report the fault.
  p.busy_one = p.streams == 1 && !churn &&
               (p.threads == 1 || (p.sharing != Plan::Sharing::at_once && !p.per_thread));
  p.device_of.assign(static_cast<size_t>(p.streams), 0);
  if (devices_available >= 2 && p.streams >= 2 && pick(0, 3) != 0) {
    p.devices = 2;
    for (int& d : p.device_of) d = static_cast<int>(pick(0, 1));
    // With the legacy stream, stream 1 is the other device's legacy stream: two streams under one handle.
    if (p.legacy) p.device_of[1] = 1 - p.device_of[0];
  }
  return p;
}

// Carries a plan out with the kernels of a table.
class Executor {
 public:
  explicit Executor(const KernelTable& kernels) : kernels_(kernels) {}

  cudaError_t launch(const Step& s, cudaStream_t stream) const {
    KernelArgs args = s.args;
    void* argv[] = {&args};
    return cudaLaunchKernel(kernels_[args.kernel], dim3{s.grid}, dim3{s.block}, argv, s.shared, stream);
  }

  // With several devices, the device of the step's stream is made current first (a default stream is the current
  // device's, and a graph replays on the device it was made on).
  void to_device_of(int stream) const {
    if (plan_->devices > 1) cudaSetDevice(plan_->device_of[static_cast<size_t>(stream)]);
  }

  // Three kernels captured on a stream of their own; the middle one is `middle` when given (the asserting node).
  cudaGraphExec_t capture(const Step* middle) const {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    Step healthy;
    healthy.args.sleep_us = 20;
    healthy.grid = 8;
    healthy.block = 64;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    launch(healthy, s);
    launch(middle != nullptr ? *middle : healthy, s);
    launch(healthy, s);
    cudaStreamEndCapture(s, &graph);
    if (graph != nullptr) cudaGraphInstantiate(&exec, graph, 0);
    cudaStreamDestroy(s);
    return exec;
  }

  // A stream made, given one short launch, synchronized and destroyed, as a server does for hours.
  void churn_stream() const {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
    Step step;
    step.args.sleep_us = 1;
    launch(step, s);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }

  void run_steps(const std::vector<Step>& steps, const std::vector<cudaStream_t>& streams) const {
    size_t from = 0;
    run_turn(steps, from, steps.size(), streams);
  }

  // Steps [from, from + count) of a thread's, or as many as are left; from moves past them.
  void run_turn(const std::vector<Step>& steps, size_t& from, size_t count,
                const std::vector<cudaStream_t>& streams) const {
    size_t end = std::min(steps.size(), from + count);
    for (; from < end; ++from) {
      const Step& s = steps[from];
      if (s.op != Op::sync_device && s.op != Op::churn) to_device_of(s.stream);
      switch (s.op) {
        case Op::launch:
          launch(s, streams[s.stream]);
          break;
        case Op::sync_other:
          cudaStreamSynchronize(streams[s.stream]);
          break;
        case Op::sync_device:
          cudaDeviceSynchronize();
          break;
        case Op::record_sync: {
          cudaEvent_t e = nullptr;
          if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) break;
          cudaEventRecord(e, streams[s.stream]);
          cudaEventSynchronize(e);
          cudaEventDestroy(e);
          break;
        }
        case Op::record_wait: {
          cudaEvent_t e = nullptr;
          if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) break;
          cudaEventRecord(e, streams[s.stream]);
          to_device_of(s.other);  // a default stream is the current device's; the event may be another device's
          cudaStreamWaitEvent(streams[s.other], e, 0);
          cudaEventDestroy(e);
          break;
        }
        case Op::churn:
          churn_stream();
          break;
        case Op::replay:
          cudaGraphLaunch(healthy_graphs_[static_cast<size_t>(plan_->device_of[static_cast<size_t>(s.stream)])],
                          streams[s.stream]);
          break;
        case Op::replay_failing:
          cudaGraphLaunch(failing_graph_, streams[s.stream]);
          break;
      }
    }
  }

  // Two threads' steps in turns, the main thread first: one thread launches while the other waits for its turn,
  // handed over through a mutex (persistent) or by starting a new thread and joining it (fresh).
  void run_in_turns(const Plan& plan, const std::vector<cudaStream_t>& streams) const {
    const std::vector<Step>&mine = plan.steps[0], &theirs = plan.steps[1];
    size_t at_mine = 0, at_theirs = 0;
    size_t turn = static_cast<size_t>(plan.turn);
    std::mutex m;
    std::condition_variable cv;
    bool their_turn = false, finished = false;
    std::thread persistent;
    if (plan.sharing == Plan::Sharing::persistent_turns) {
      persistent = std::thread([&] {
        std::unique_lock lock(m);
        for (;;) {
          cv.wait(lock, [&] { return their_turn || finished; });
          if (!their_turn) return;
          lock.unlock();
          run_turn(theirs, at_theirs, turn, streams);
          lock.lock();
          their_turn = false;
          cv.notify_all();
        }
      });
    }
    while (at_mine < mine.size() || at_theirs < theirs.size()) {
      run_turn(mine, at_mine, turn, streams);
      if (at_theirs >= theirs.size()) continue;
      if (plan.sharing == Plan::Sharing::fresh_turns) {
        std::thread([&] { run_turn(theirs, at_theirs, turn, streams); }).join();
        continue;
      }
      std::unique_lock lock(m);
      their_turn = true;
      cv.notify_all();
      cv.wait(lock, [&] { return !their_turn; });
    }
    if (persistent.joinable()) {
      {
        std::lock_guard lock(m);
        finished = true;
      }
      cv.notify_all();
      persistent.join();
    }
  }

  // The whole job: the plan's streams and graphs, the oracle on stdout, the steps (on two threads where the plan has
  // two, at once or in turns), the final device sync. Returns the process's exit status: 0, or 4 when CUDA cannot
  // start.
  int run(uint64_t seed, long launches) {
    if (cudaFree(nullptr) != cudaSuccess) return 4;
    int devices_available = 1;
    if (cudaGetDeviceCount(&devices_available) != cudaSuccess) devices_available = 1;
    Plan plan = make_plan(seed, launches, devices_available);
    plan_ = &plan;
    std::vector<cudaStream_t> streams(plan.streams);
    for (int i = 0; i < plan.streams; ++i) {
      to_device_of(i);
      cudaStreamCreateWithFlags(&streams[i], plan.legacy ? cudaStreamDefault : cudaStreamNonBlocking);
    }
    if (plan.legacy) {
      // The legacy default stream, which waits for the blocking streams and they for it: each device's own.
      for (int i = 0; i < (plan.devices > 1 ? 2 : 1); ++i) {
        cudaStreamDestroy(streams[i]);
        streams[i] = nullptr;
      }
    } else if (plan.per_thread) {
      cudaStreamDestroy(streams[0]);
      streams[0] = cudaStreamPerThread;  // each launching thread's own
    }
    for (int d = 0; d < plan.devices && plan.graphs; ++d) {
      if (plan.devices > 1) cudaSetDevice(d);
      healthy_graphs_.push_back(capture(nullptr));
    }
    to_device_of(plan.failing_stream);
    if (plan.failing_in_graph) failing_graph_ = capture(&plan.failing_node);
    size_t total = plan.steps[0].size() + plan.steps[1].size();
    std::printf("plan: streams %d threads %d steps %zu %s%s%s%s%s", plan.streams, plan.threads, total,
                plan.anonymous ? "anonymous" : "named", plan.graphs ? " graphs" : "",
                plan.failing_in_graph ? " (the assert in a graph's node)" : "", plan.legacy ? " legacy" : "",
                plan.per_thread ? " per-thread" : "");
    if (plan.sharing != Plan::Sharing::at_once)
      std::printf(" turns of %ld, %s", plan.turn,
                  plan.sharing == Plan::Sharing::persistent_turns ? "persistent" : "fresh");
    if (plan.devices > 1) std::printf(" devices %d", plan.devices);
    std::printf("\n");
    std::printf("busy: %d\n", plan.busy_one ? 1 : 0);
    std::printf("asserting: stream 0x%llx shared_mem %u grid %u block %u",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(streams[plan.failing_stream])),
                plan.failing_shared, plan.failing_grid, plan.failing_block);
    if (plan.devices > 1) std::printf(" device %d", plan.device_of[static_cast<size_t>(plan.failing_stream)]);
    std::printf("\n");
    std::fflush(stdout);
    if (plan.threads == 2 && plan.sharing != Plan::Sharing::at_once) {
      run_in_turns(plan, streams);
    } else {
      std::thread second;
      if (plan.threads == 2)
        second = std::thread(&Executor::run_steps, this, std::cref(plan.steps[1]), std::cref(streams));
      run_steps(plan.steps[0], streams);
      if (second.joinable()) second.join();
    }
    to_device_of(plan.failing_stream);  // the failing device's sync
    cudaError_t sync = cudaDeviceSynchronize();
    std::printf("sync: %s\n", cudaGetErrorName(sync));
    plan_ = nullptr;
    return 0;
  }

 private:
  KernelTable kernels_;
  const Plan* plan_ = nullptr;
  std::vector<cudaGraphExec_t> healthy_graphs_;  // one per device
  cudaGraphExec_t failing_graph_ = nullptr;
};

}  // namespace schedule

#endif
