// gpu-check probes 7, 8 and 9, on the real driver and without the shim: three facts a design choice waits on.
//   probe7  Is pinned host memory (cudaHostAlloc, mapped) that kernels wrote before a device-side assert readable,
//           with the values written, once the context has the sticky error? Two streams: the failing one (a kernel
//           before the assert, the asserting kernel's own fenced write, a kernel queued after it) and another one
//           that finished before the assert. A report could then carry values the device wrote, not only which
//           launch completed.
//   probe8  What does CUPTI itself cost per call when a subscriber enables the runtime and driver API domains with an
//           empty callback? The shim's callbacks cost that on top of their own work (docs/performance.md counts only
//           the shim's instructions). Timed: cudaGetDevice, cudaStreamQuery on an idle stream, cudaLaunchKernel of
//           an empty kernel, each without a subscriber and with one.
//   probe9  Can cuStreamWriteValue64 (the stream breadcrumb) be made on a stream that is capturing a graph, in each
//           capture mode? Its result, whether the capture stays valid, and whether the graph it leaves holds a memop
//           node that writes the value when replayed.
//
// usage: probe_facts LIBCUPTI
// Prints "probe7: ...", "probe8: ...", "probe9: ..." lines, each probe ending with an "answer:" line; a call that
// fails is printed with its error name. Probe 7 runs last: the assert leaves the context unusable. Exit status 0 when
// it probed, 2 when a driver entry point is missing, 5 when there is no usable device.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_support.h"

namespace {

struct Driver {
  decltype(&cuStreamWriteValue64) stream_write_value64 = nullptr;
  decltype(&cuGraphNodeGetType) graph_node_get_type = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
} driver;

std::string driver_result(CUresult r) {
  const char* name = nullptr;
  if (driver.get_error_name == nullptr || driver.get_error_name(r, &name) != CUDA_SUCCESS || name == nullptr)
    name = "an unknown CUresult";
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

std::string runtime_result(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + std::to_string(static_cast<int>(e)) + ")";
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

__global__ void probe_empty_kernel() {}

__global__ void probe_write_kernel(volatile unsigned long long* slots, unsigned long long first, int n) {
  int i = static_cast<int>(threadIdx.x);
  if (i < n) slots[i] = first + static_cast<unsigned long long>(i);
}

// Thread 0 writes and fences its write to the system (CUDA C++ Programming Guide, Memory Fence Functions:
// __threadfence_system orders it before the thread's later writes as seen by the host) before bad_thread asserts.
__global__ void probe_write_then_assert_kernel(volatile unsigned long long* slot, unsigned long long value,
                                               int bad_thread) {
  if (threadIdx.x == 0) {
    *slot = value;
    __threadfence_system();
  }
  __syncthreads();
  assert(static_cast<int>(threadIdx.x) != bad_thread);
}

namespace {

// ---- probe 8 ----------------------------------------------------------------------------------------------------

constexpr int kRounds = 9;
constexpr int kCalls = 20000;
constexpr int kLaunchesPerRound = 500;  // well under the launch queue's depth: a launch returns without waiting

void CUPTIAPI empty_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

template <typename Call>
double median_ns_per_call(int calls, Call call, cudaStream_t drain) {
  std::vector<double> rounds;
  for (int round = 0; round < kRounds + 1; ++round) {  // the first round warms up and is not kept
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    auto end = std::chrono::steady_clock::now();
    if (drain != nullptr) cudaStreamSynchronize(drain);  // not timed: the launches' own work on the device
    if (round > 0) rounds.push_back(std::chrono::duration<double, std::nano>(end - start).count() / calls);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

struct Timings {
  double get_device = 0, stream_query = 0, launch = 0;
};

Timings time_calls(cudaStream_t stream) {
  Timings t;
  int device = 0;
  t.get_device = median_ns_per_call(kCalls, [&] { cudaGetDevice(&device); }, nullptr);
  t.stream_query = median_ns_per_call(kCalls, [&] { cudaStreamQuery(stream); }, nullptr);
  t.launch = median_ns_per_call(
      kLaunchesPerRound,
      [&] { cudaLaunchKernel(reinterpret_cast<const void*>(probe_empty_kernel), dim3(1), dim3(1), nullptr, 0, stream); },
      stream);
  return t;
}

void print_cost(const char* what, double bare, double subscribed) {
  std::printf(
      "probe8: %s: %.1f ns per call without a CUPTI subscriber, %.1f ns with one (runtime and driver API domains, "
      "empty callback): %+.1f ns per call\n",
      what, bare, subscribed, subscribed - bare);
}

void probe_cupti_cost(const char* cupti_path, cudaStream_t stream) {
  Timings bare = time_calls(stream);
  cudaError_t launch_error = cudaGetLastError();
  std::printf("probe8: median of %d rounds, each of %d calls (%d launches, the stream drained between rounds "
              "outside the timing); the launches returned %s\n",
              kRounds, kCalls, kLaunchesPerRound, runtime_result(launch_error).c_str());
  void* cupti = dlopen(cupti_path, RTLD_NOW | RTLD_LOCAL);
  auto subscribe = cupti ? reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(cupti, "cuptiSubscribe")) : nullptr;
  auto enable = cupti ? reinterpret_cast<decltype(&cuptiEnableDomain)>(dlsym(cupti, "cuptiEnableDomain")) : nullptr;
  auto unsubscribe =
      cupti ? reinterpret_cast<decltype(&cuptiUnsubscribe)>(dlsym(cupti, "cuptiUnsubscribe")) : nullptr;
  auto result_string =
      cupti ? reinterpret_cast<decltype(&cuptiGetResultString)>(dlsym(cupti, "cuptiGetResultString")) : nullptr;
  if (subscribe == nullptr || enable == nullptr || unsubscribe == nullptr) {
    std::printf("probe8: CUPTI at %s cannot be used (%s); times without a subscriber only: cudaGetDevice %.1f ns, "
                "cudaStreamQuery %.1f ns, cudaLaunchKernel %.1f ns\n",
                cupti_path, cupti == nullptr ? dlerror() : "missing symbols", bare.get_device, bare.stream_query,
                bare.launch);
    std::printf("probe8: answer: unknown (no subscriber)\n");
    return;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r = subscribe(&subscriber, empty_callback, nullptr);
  if (r == CUPTI_SUCCESS) r = enable(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (r == CUPTI_SUCCESS) r = enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (r != CUPTI_SUCCESS) {
    const char* why = "?";
    if (result_string != nullptr) result_string(r, &why);
    std::printf("probe8: subscribing failed with %s (%d)\n", why, static_cast<int>(r));
    std::printf("probe8: answer: unknown (no subscriber)\n");
    return;
  }
  Timings subscribed = time_calls(stream);
  unsubscribe(subscriber);
  print_cost("cudaGetDevice", bare.get_device, subscribed.get_device);
  print_cost("cudaStreamQuery (an idle stream)", bare.stream_query, subscribed.stream_query);
  print_cost("cudaLaunchKernel (an empty kernel)", bare.launch, subscribed.launch);
  std::printf("probe8: answer: an enabled CUPTI subscriber adds %.1f ns to cudaGetDevice, %.1f ns to a launch "
              "(CUPTI at %s)\n",
              subscribed.get_device - bare.get_device, subscribed.launch - bare.launch, cupti_path);
}

// ---- probe 9 ----------------------------------------------------------------------------------------------------

const char* node_type_name(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "child graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "wait event";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch memop";
    default: return "another kind";
  }
}

const char* capture_status_name(cudaStreamCaptureStatus status) {
  switch (status) {
    case cudaStreamCaptureStatusNone: return "not capturing";
    case cudaStreamCaptureStatusActive: return "still active";
    case cudaStreamCaptureStatusInvalidated: return "invalidated";
    default: return "in an unknown state";
  }
}

// One capture in one mode: [kernel, cuStreamWriteValue64] captured, the graph replayed, the slot read.
bool capture_write(cudaStreamCaptureMode mode, const char* mode_name, volatile uint64_t* slot, CUdeviceptr device_slot,
                   uint64_t value) {
  std::string line = std::string(mode_name) + " capture: ";
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamBeginCapture(stream, mode);
  if (e != cudaSuccess) {
    std::printf("probe9: %scudaStreamBeginCapture returned %s\n", line.c_str(), runtime_result(e).c_str());
    cudaGetLastError();
    return false;
  }
  probe_empty_kernel<<<1, 1, 0, stream>>>();
  CUresult written = driver.stream_write_value64(reinterpret_cast<CUstream>(stream), device_slot, value, 0);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t asked = cudaStreamIsCapturing(stream, &status);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  line += "cuStreamWriteValue64 returned " + driver_result(written) + "; the capture was then " +
          (asked == cudaSuccess ? capture_status_name(status) : "not known (" + runtime_result(asked) + ")") +
          "; cudaStreamEndCapture returned " + runtime_result(ended);
  bool replayed_value = false;
  if (ended == cudaSuccess && graph != nullptr) {
    size_t count = 0;
    cudaGraphGetNodes(graph, nullptr, &count);
    std::vector<cudaGraphNode_t> nodes(count);
    if (count > 0) cudaGraphGetNodes(graph, nodes.data(), &count);
    std::string kinds;
    bool memop = false;
    for (cudaGraphNode_t node : nodes) {
      CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
      CUresult r = driver.graph_node_get_type(reinterpret_cast<CUgraphNode>(node), &type);
      kinds += (kinds.empty() ? "" : ", ") + std::string(r == CUDA_SUCCESS ? node_type_name(type) : "?");
      memop = memop || (r == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    }
    line += "; the graph holds " + std::to_string(count) + " node(s) (" + kinds + "), " +
            (memop ? "a memop node among them" : "no memop node");
    cudaGraphExec_t exec = nullptr;
    *slot = 0;
    cudaError_t r = cudaGraphInstantiate(&exec, graph, 0);
    if (r == cudaSuccess) r = cudaGraphLaunch(exec, stream);
    if (r == cudaSuccess) r = cudaStreamSynchronize(stream);
    uint64_t read = *slot;
    replayed_value = r == cudaSuccess && read == value;
    line += "; replayed (" + runtime_result(r) + "), the slot read " + hex(read) + " (the capture wrote " +
            hex(value) + ")";
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  std::printf("probe9: %s\n", line.c_str());
  cudaGetLastError();  // an invalidated capture's error is not the next call's
  cudaStreamDestroy(stream);
  return written == CUDA_SUCCESS && replayed_value;
}

void probe_capture_write(volatile uint64_t* slot, CUdeviceptr device_slot) {
  struct Mode {
    cudaStreamCaptureMode mode;
    const char* name;
  };
  const Mode modes[] = {{cudaStreamCaptureModeGlobal, "global"},
                        {cudaStreamCaptureModeThreadLocal, "thread-local"},
                        {cudaStreamCaptureModeRelaxed, "relaxed"}};
  std::string recorded;
  for (const Mode& m : modes) {
    if (capture_write(m.mode, m.name, slot, device_slot, 0x9000 + static_cast<uint64_t>(m.mode)))
      recorded += (recorded.empty() ? "" : ", ") + std::string(m.name);
  }
  std::printf("probe9: answer: %s\n",
              recorded.empty() ? "in no capture mode did a captured cuStreamWriteValue64 write its value on replay"
                               : ("a captured cuStreamWriteValue64 wrote its value on replay in the " + recorded +
                                  " mode(s)")
                                     .c_str());
}

// ---- probe 7 ----------------------------------------------------------------------------------------------------

constexpr int kValues = 8;
constexpr int kBadThread = 5;

// How many of slots[0..n) hold first, first+1, ...
int matching(volatile uint64_t* slots, uint64_t first, int n) {
  int same = 0;
  for (int i = 0; i < n; ++i) same += slots[i] == first + static_cast<uint64_t>(i) ? 1 : 0;
  return same;
}

std::string range(uint64_t first, int n) { return hex(first) + ".." + hex(first + static_cast<uint64_t>(n) - 1); }

void probe_pinned_after_assert() {
  // Slots: [0, 8) the failing stream's kernel before the assert, [8] the asserting kernel's own write, [9, 17) the
  // failing stream's kernel queued after the assert, [17, 25) the other stream's kernel.
  constexpr int kSlots = 3 * kValues + 1;
  constexpr uint64_t kBefore = 0x7a00, kOwn = 0x7aa0, kAfter = 0x7a10, kOther = 0x7b00;
  volatile uint64_t* host = nullptr;
  void* device = nullptr;
  cudaStream_t failing = nullptr, other = nullptr;
  cudaError_t e = cudaHostAlloc(const_cast<uint64_t**>(&host), kSlots * sizeof(uint64_t), cudaHostAllocMapped);
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&device, const_cast<uint64_t*>(host), 0);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&failing, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    std::printf("probe7: set-up failed with %s\n", runtime_result(e).c_str());
    std::printf("probe7: answer: unknown (no pinned memory to read)\n");
    return;
  }
  for (int i = 0; i < kSlots; ++i) host[i] = 0;
  auto* slots = static_cast<unsigned long long*>(device);

  probe_write_kernel<<<1, 32, 0, other>>>(slots + 2 * kValues + 1, kOther, kValues);
  cudaError_t other_sync = cudaStreamSynchronize(other);
  probe_write_kernel<<<1, 32, 0, failing>>>(slots, kBefore, kValues);
  probe_write_then_assert_kernel<<<1, 32, 0, failing>>>(slots + kValues, kOwn, kBadThread);
  probe_write_kernel<<<1, 32, 0, failing>>>(slots + kValues + 1, kAfter, kValues);
  cudaError_t failing_sync = cudaStreamSynchronize(failing);
  usleep(100000);  // a write still on its way would land by now
  cudaError_t later = cudaStreamQuery(other);

  int before = matching(host, kBefore, kValues);
  int after = 0;
  for (int i = 0; i < kValues; ++i) after += host[kValues + 1 + i] != 0 ? 1 : 0;
  int other_read = matching(host + 2 * kValues + 1, kOther, kValues);
  std::printf("probe7: the failing stream's sync returned %s; then cudaStreamQuery on the other stream "
              "returned %s (after an assert: the sticky error)\n",
              runtime_result(failing_sync).c_str(), runtime_result(later).c_str());
  std::printf("probe7: failing stream, a kernel before the assert wrote %d values %s: read %d of %d as written\n",
              kValues, range(kBefore, kValues).c_str(), before, kValues);
  std::printf("probe7: failing stream, the asserting kernel wrote %s and fenced it (__threadfence_system) before "
              "its assert: read %s\n",
              hex(kOwn).c_str(), hex(host[kValues]).c_str());
  std::printf("probe7: failing stream, a kernel queued after the assert would write %s: %d of %d slots written "
              "(0 expected: it never ran)\n",
              range(kAfter, kValues).c_str(), after, kValues);
  std::printf("probe7: other stream (synchronized before the assert, returned %s), a kernel wrote %d values %s: "
              "read %d of %d as written\n",
              runtime_result(other_sync).c_str(), kValues, range(kOther, kValues).c_str(), other_read, kValues);
  bool faulted = failing_sync == cudaErrorAssert;
  bool readable = before == kValues && other_read == kValues && after == 0;
  std::printf("probe7: answer: %s\n",
              !faulted   ? "unknown (the assert did not fire: the values above were read without a fault)"
              : readable ? "yes, pinned memory written before the assert reads back as written after the fault"
                         : "no, pinned memory written before the assert does not read back as written (see above)");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: probe_facts LIBCUPTI\n");
    return 2;
  }
  if (!have_device()) return kNoDevice;
  cudaFree(nullptr);
  if (!fetch("cuStreamWriteValue64", driver.stream_write_value64) ||
      !fetch("cuGraphNodeGetType", driver.graph_node_get_type) || !fetch("cuGetErrorName", driver.get_error_name))
    return 2;
  volatile uint64_t* slot = nullptr;
  void* device_slot = nullptr;
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaHostAlloc(const_cast<uint64_t**>(&slot), sizeof(uint64_t), cudaHostAllocMapped);
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&device_slot, const_cast<uint64_t*>(slot), 0);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    std::printf("probe: set-up failed with %s\n", runtime_result(e).c_str());
    return 2;
  }
  probe_cupti_cost(argv[1], stream);
  probe_capture_write(slot, reinterpret_cast<CUdeviceptr>(device_slot));
  probe_pinned_after_assert();
  return 0;
}
