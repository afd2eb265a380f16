// The simulated CUPTI's activity API (libcupti.so.13), driven as a tracer such as PyTorch's Kineto drives it: buffers
// handed out and taken back through the registered callbacks, records read with cuptiActivityGetNextRecord in the
// layouts cupti_activity.h defines, kernels correlated with the runtime calls that launched them.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernels/stock_kernels.h"

namespace {

const char* kBusyName = "_ZN10simkernels11busy_kernelEy";

// CUDA 13.1+'s kernel record (CUpti_ActivityKernel11): version 10 of these 13.0 headers with the launch priority and
// a padding word appended. What the simulated CUPTI writes, as CUPTI 13.1+ does.
constexpr size_t kKernel11Size = sizeof(CUpti_ActivityKernel10) + 8;

// One record as read back, copied out of the client's buffer.
struct Record {
  CUpti_ActivityKind kind;
  std::vector<unsigned char> bytes;
  template <typename T>
  const T& as() const {
    return *reinterpret_cast<const T*>(bytes.data());
  }
};

// The client side of the buffer protocol, as a tracer implements it: aligned buffers of a chosen size handed out on
// request, walked with cuptiActivityGetNextRecord when handed back.
struct Client {
  static inline std::mutex mutex;
  static inline size_t buffer_size = 1 << 20;
  static inline size_t max_records = 0;
  static inline bool decline = false;
  static inline std::set<uint8_t*> outstanding;  // handed out, not yet back
  static inline size_t requested = 0;
  static inline size_t completed = 0;
  static inline size_t completed_empty = 0;
  static inline bool foreign_buffer = false;  // a buffer came back that was never handed out
  static inline std::vector<Record> records;
  static inline CUptiResult walk_error = CUPTI_SUCCESS;

  static void reset(size_t size = 1 << 20, size_t max = 0) {
    std::lock_guard lock(mutex);
    buffer_size = size;
    max_records = max;
    decline = false;
    requested = completed = completed_empty = 0;
    foreign_buffer = false;
    outstanding.clear();  // any a finalized CUPTI kept
    records.clear();
    walk_error = CUPTI_SUCCESS;
  }

  static void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max) {
    std::lock_guard lock(mutex);
    ++requested;
    if (decline) {
      *buffer = nullptr;
      *size = 0;
      *max = 0;
      return;
    }
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, (buffer_size + 7) / 8 * 8));
    std::memset(*buffer, 0xA5, buffer_size);  // CUPTI zeroes it (ZEROED_OUT_ACTIVITY_BUFFER is 0)
    *size = buffer_size;
    *max = max_records;
    outstanding.insert(*buffer);
  }

  static void CUPTIAPI complete(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                                size_t valid_size) {
    std::lock_guard lock(mutex);
    ++completed;
    if (outstanding.erase(buffer) == 0 || context != nullptr || stream_id != 0 || size != buffer_size ||
        valid_size > size)
      foreign_buffer = true;
    if (valid_size == 0) ++completed_empty;
    CUpti_Activity* record = nullptr;
    for (;;) {
      CUptiResult r = cuptiActivityGetNextRecord(buffer, valid_size, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS) {
        walk_error = r;
        break;
      }
      size_t bytes = record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL
                         ? kKernel11Size
                     : record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER
                         ? sizeof(CUpti_ActivityAPI)
                     : record->kind == CUPTI_ACTIVITY_KIND_MEMCPY  ? sizeof(CUpti_ActivityMemcpy6)
                     : record->kind == CUPTI_ACTIVITY_KIND_MEMSET  ? sizeof(CUpti_ActivityMemset4)
                     : record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
                         ? sizeof(CUpti_ActivityExternalCorrelation)
                     : record->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? sizeof(CUpti_ActivitySynchronization2)
                     : record->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT      ? sizeof(CUpti_ActivityCudaEvent2)
                                                                           : sizeof(CUpti_Activity);
      auto* first = reinterpret_cast<unsigned char*>(record);
      records.push_back(Record{record->kind, std::vector<unsigned char>(first, first + bytes)});
    }
    std::free(buffer);
  }

  static std::vector<Record> all() {
    std::lock_guard lock(mutex);
    return records;
  }
  template <typename T>
  static std::vector<T> of(CUpti_ActivityKind kind) {
    std::vector<T> out;
    for (const Record& r : all())
      if (r.kind == kind) out.push_back(r.as<T>());
    return out;
  }
};

class CuptiActivity : public ::testing::Test {
 protected:
  void SetUp() override {
    busy_ = simkernels_host_stub("busy");
    ASSERT_NE(busy_, nullptr);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the runtime initialized, as a tracer finds it
    Client::reset();
    ASSERT_EQ(cuptiActivityRegisterCallbacks(Client::request, Client::complete), CUPTI_SUCCESS);
  }
  void TearDown() override {
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    EXPECT_EQ(cuptiFinalize(), CUPTI_SUCCESS);  // every kind off and settings forgotten for the next test
    EXPECT_FALSE(Client::foreign_buffer);
    EXPECT_EQ(Client::walk_error, CUPTI_SUCCESS);
  }

  cudaError_t launch_busy(cudaStream_t stream, unsigned long long us, dim3 grid = dim3{1}, dim3 block = dim3{32}) {
    void* args[] = {&us};
    return cudaLaunchKernel(busy_, grid, block, args, 0, stream);
  }

  static void flush(uint32_t flag = 0) { ASSERT_EQ(cuptiActivityFlushAll(flag), CUPTI_SUCCESS); }

  static std::vector<CUpti_ActivityAPI> api_records(CUpti_ActivityKind kind, CUpti_CallbackId cbid) {
    std::vector<CUpti_ActivityAPI> out;
    for (const CUpti_ActivityAPI& a : Client::of<CUpti_ActivityAPI>(kind))
      if (a.cbid == cbid) out.push_back(a);
    return out;
  }

  const void* busy_ = nullptr;
};

uint32_t stream_id(cudaStream_t stream) {
  unsigned long long id = 0;
  EXPECT_EQ(cudaStreamGetId(stream, &id), cudaSuccess);
  return static_cast<uint32_t>(id);
}

TEST_F(CuptiActivity, KernelsOnTwoStreamsCarryNameStreamTimesAndTheirLaunchCallsCorrelationId) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  cudaStream_t a, b;
  ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  const auto before = std::chrono::system_clock::now();
  ASSERT_EQ(launch_busy(a, 20000, dim3{3, 2, 1}, dim3{64, 2, 1}), cudaSuccess);
  ASSERT_EQ(launch_busy(b, 20000), cudaSuccess);
  ASSERT_EQ(launch_busy(a, 1000), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto after = std::chrono::system_clock::now();
  flush();

  auto kernels = Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 3u);
  auto launches = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_EQ(launches.size(), 3u);
  // Records come back in the order the kernels finished: match them to their launches by correlation id.
  std::map<uint32_t, CUpti_ActivityKernel10> by_correlation;
  for (const auto& k : kernels) by_correlation[k.correlationId] = k;
  ASSERT_EQ(by_correlation.size(), 3u);
  const uint32_t streams[] = {stream_id(a), stream_id(b), stream_id(a)};
  EXPECT_NE(streams[0], streams[1]);
  std::vector<CUpti_ActivityKernel10> in_launch_order;
  for (size_t i = 0; i < 3; ++i) {
    const CUpti_ActivityAPI& launch = launches[i];
    ASSERT_EQ(by_correlation.count(launch.correlationId), 1u) << "no kernel for launch " << i;
    const CUpti_ActivityKernel10& k = by_correlation[launch.correlationId];
    in_launch_order.push_back(k);
    EXPECT_STREQ(k.name, kBusyName);
    EXPECT_EQ(k.streamId, streams[i]);
    EXPECT_EQ(k.deviceId, 0u);
    EXPECT_EQ(k.contextId, 1u);
    EXPECT_LT(k.start, k.end);
    EXPECT_GE(k.start, launch.start) << "a kernel starts after its launch call began";
    EXPECT_LE(launch.start, launch.end);
    EXPECT_EQ(launch.returnValue, static_cast<uint32_t>(cudaSuccess));
    EXPECT_EQ(launch.processId, static_cast<uint32_t>(getpid()));
  }
  uint32_t cupti_stream = 0;
  ASSERT_EQ(cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(b), 0, &cupti_stream), CUPTI_SUCCESS);
  EXPECT_EQ(cupti_stream, streams[1]) << "cuptiGetStreamIdEx gives the ids records carry";
  uint64_t now = 0;
  ASSERT_EQ(cuptiGetTimestamp(&now), CUPTI_SUCCESS);
  for (const auto& k : kernels) EXPECT_LT(k.end, now) << "cuptiGetTimestamp is on the records' scale";
  EXPECT_EQ(in_launch_order[0].gridX, 3);
  EXPECT_EQ(in_launch_order[0].gridY, 2);
  EXPECT_EQ(in_launch_order[0].blockX, 64);
  EXPECT_EQ(in_launch_order[0].blockY, 2);
  EXPECT_EQ(in_launch_order[1].gridX, 1);
  EXPECT_EQ(in_launch_order[1].blockX, 32);
  // Stream order on a, concurrency across a and b, durations as long as the kernels kept their streams busy.
  EXPECT_LE(in_launch_order[0].end, in_launch_order[2].start);
  EXPECT_LT(in_launch_order[0].start, in_launch_order[1].end);
  EXPECT_LT(in_launch_order[1].start, in_launch_order[0].end);
  EXPECT_GE(in_launch_order[0].end - in_launch_order[0].start, 20000000u);
  // CUPTI's default timestamps are CLOCK_REALTIME's, in ns.
  const auto ns = [](std::chrono::system_clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  for (const auto& k : kernels) {
    EXPECT_GE(k.start, ns(before));
    EXPECT_LE(k.end, ns(after));
  }
  // Grid ids are unique per kernel execution.
  std::set<int64_t> grids;
  for (const auto& k : kernels) grids.insert(k.gridId);
  EXPECT_EQ(grids.size(), 3u);

  // The runtime's own driver calls belong to the runtime call: no DRIVER records (not enabled), and the launch
  // records' correlation ids are those of the runtime calls.
  EXPECT_TRUE(Client::of<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER).empty());
  const auto this_thread = static_cast<uint32_t>(pthread_self());  // CUPTI's thread ids: pthread_self's low bits
  for (const auto& launch : launches) EXPECT_EQ(launch.threadId, this_thread);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST_F(CuptiActivity, KernelRecordsHaveTheLayoutOfCuda13Point1sVersion11) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  std::vector<Record> records = Client::all();
  ASSERT_EQ(records.size(), 2u);
  for (const Record& r : records) {
    ASSERT_EQ(r.bytes.size(), kKernel11Size);
    int32_t priority = -1;
    uint32_t padding = 1;
    std::memcpy(&priority, r.bytes.data() + sizeof(CUpti_ActivityKernel10), sizeof priority);
    std::memcpy(&padding, r.bytes.data() + sizeof(CUpti_ActivityKernel10) + 4, sizeof padding);
    EXPECT_EQ(priority, 0);
    EXPECT_EQ(padding, 0u);
    const auto& k = r.as<CUpti_ActivityKernel10>();
    EXPECT_EQ(k.queued, CUPTI_TIMESTAMP_UNKNOWN);
    EXPECT_EQ(k.completed, k.end);
    EXPECT_EQ(k.launchType, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
    EXPECT_EQ(k.isDeviceLaunched, 0);
  }
}

TEST_F(CuptiActivity, BuffersAreRequestedAndCompletedFullOrFlushed) {
  Client::reset(1 << 20, /*max_records=*/2);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  // Five launch records at two a buffer: two buffers came back full, before any flush.
  EXPECT_EQ(Client::completed, 2u);
  EXPECT_EQ(Client::requested, 3u);
  EXPECT_EQ(Client::all().size(), 4u);
  flush();  // the third, holding one record
  EXPECT_EQ(Client::completed, 3u);
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).size(), 5u);
  EXPECT_TRUE(Client::outstanding.empty());
}

TEST_F(CuptiActivity, EachFlushHandsBackTheRecordsWrittenSinceTheLastOne) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  ASSERT_EQ(Client::completed, 1u);
  ASSERT_EQ(Client::all().size(), 1u);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  ASSERT_EQ(Client::completed, 2u);
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // into a third buffer
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  flush();
  EXPECT_EQ(Client::completed, 3u);
  EXPECT_EQ(Client::completed_empty, 0u);
  EXPECT_EQ(Client::requested, 3u);
  // Nothing was recorded since: a default flush has no buffer to return, a forced one neither (none is held).
  flush();
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  EXPECT_EQ(Client::completed, 3u);
}

TEST_F(CuptiActivity, AForcedFlushHandsBackABufferThatHoldsNoRecord) {
  // A buffer too small for a kernel record is handed out, and kept for smaller records.
  Client::reset(/*size=*/64);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  EXPECT_EQ(Client::requested, 1u);
  EXPECT_EQ(Client::completed, 0u);  // holds nothing: not returned by a default flush
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  EXPECT_EQ(Client::completed, 1u);
  EXPECT_EQ(Client::completed_empty, 1u);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 1u);
}

TEST_F(CuptiActivity, RecordsThatNoBufferCanTakeAreCountedAsDropped) {
  Client::reset(/*size=*/64);  // room for one API record (40 bytes), never for a kernel record
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1), CUPTI_SUCCESS);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // the buffer in use too, empty or not
  // One API record per 64-byte buffer; the four kernel records dropped.
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).size(), 4u);
  EXPECT_TRUE(Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 4u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u) << "the count restarts at each query";

  // A client that declines buffers loses every record.
  {
    std::lock_guard lock(Client::mutex);
    Client::decline = true;
  }
  const size_t requested = Client::requested;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 6u);  // three launch records, three kernel records
  EXPECT_GT(Client::requested, requested);
  EXPECT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(CuptiActivity, ExternalCorrelationRecordsPrecedeTheApiRecordsOfCallsInsideThePushedRange) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  uint64_t last = 0;
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last), CUPTI_SUCCESS);
  EXPECT_EQ(last, 7u);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 43), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);  // the innermost id of a kind
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last), CUPTI_SUCCESS);
  EXPECT_EQ(last, 42u);
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
            CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);  // outside any range
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();

  // The launch records, each with the external records just before it.
  struct Seen {
    uint32_t correlation;
    std::vector<std::pair<CUpti_ExternalCorrelationKind, uint64_t>> external;
  };
  std::vector<Seen> seen;
  std::vector<std::pair<CUpti_ExternalCorrelationKind, uint64_t>> pending;
  std::vector<uint32_t> pending_correlations;
  for (const Record& r : Client::all()) {
    if (r.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto& e = r.as<CUpti_ActivityExternalCorrelation>();
      pending.emplace_back(e.externalKind, e.externalId);
      pending_correlations.push_back(e.correlationId);
    } else if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto& a = r.as<CUpti_ActivityAPI>();
      for (uint32_t c : pending_correlations) EXPECT_EQ(c, a.correlationId);
      if (a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) seen.push_back(Seen{a.correlationId, pending});
      pending.clear();
      pending_correlations.clear();
    }
  }
  ASSERT_EQ(seen.size(), 4u);
  using E = std::vector<std::pair<CUpti_ExternalCorrelationKind, uint64_t>>;
  EXPECT_EQ(seen[0].external,
            (E{{CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42}, {CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 7}}));
  EXPECT_EQ(seen[1].external, (E{{CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42}}));
  EXPECT_EQ(seen[2].external, (E{{CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 43}}));
  EXPECT_TRUE(seen[3].external.empty());
  // Each kernel carries the correlation id of its launch, and so reaches the external id through it.
  std::set<uint32_t> kernel_correlations;
  for (const auto& k : Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    kernel_correlations.insert(k.correlationId);
  EXPECT_EQ(kernel_correlations, (std::set<uint32_t>{seen[0].correlation, seen[1].correlation, seen[2].correlation,
                                                      seen[3].correlation}));
}

TEST_F(CuptiActivity, ExternalIdsAreKeptPerThread) {
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1), CUPTI_SUCCESS);
  CUptiResult other = CUPTI_SUCCESS;
  std::thread([&] { other = cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr); })
      .join();
  EXPECT_EQ(other, CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr), CUPTI_SUCCESS);
}

TEST_F(CuptiActivity, DisabledKindsProduceNothing) {
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 256), cudaSuccess);
  std::vector<char> host(256, 1);
  // Nothing enabled: no record, not even a buffer asked for.
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  EXPECT_EQ(Client::requested, 0u);
  EXPECT_TRUE(Client::all().empty());

  // Kernels only: no API record, no memcpy record.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  std::vector<Record> records = Client::all();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

  // Disabled again: kernels launched from then on have no record.
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  EXPECT_EQ(Client::all().size(), 1u);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
}

TEST_F(CuptiActivity, PerCallbackIdFiltersRefineTheApiKinds) {
  // All runtime calls but one, as Kineto asks (cudaGetDevice is too frequent to be worth its records).
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0), CUPTI_SUCCESS);
  int ordinal = -1;
  ASSERT_EQ(cudaGetDevice(&ordinal), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  EXPECT_TRUE(api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020).empty());
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020).size(),
            1u);
  // The kind, enabled after, overrides the filter; disabled, it clears every id.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cudaGetDevice(&ordinal), cudaSuccess);
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cudaGetDevice(&ordinal), cudaSuccess);
  flush();
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020).size(), 1u);

  // One driver call alone, without the kind.
  ASSERT_EQ(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 1), CUPTI_SUCCESS);
  CUcontext context = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&context), CUDA_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent).size(), 1u);
  EXPECT_EQ(Client::of<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER).size(), 1u);
  EXPECT_EQ(cuptiActivityEnableDriverApi(0, 1), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_SIZE, 1), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(CuptiActivity, DriverRecordsAreForDriverCallsMadeDirectly) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);  // cudaLaunchKernel, implemented with cuLaunchKernel
  static const char image[] = "simulated cubin";
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, image), CUDA_SUCCESS);
  CUfunction busy = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&busy, module, kBusyName), CUDA_SUCCESS);
  unsigned long long us = 1;
  void* args[] = {&us};
  ASSERT_EQ(cuLaunchKernel(busy, 2, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);  // as Triton does
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
  flush();

  auto runtime_launches = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  auto driver_launches = api_records(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  ASSERT_EQ(runtime_launches.size(), 1u);
  ASSERT_EQ(driver_launches.size(), 1u) << "only the direct cuLaunchKernel";
  EXPECT_NE(runtime_launches[0].correlationId, driver_launches[0].correlationId);
  EXPECT_EQ(api_records(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction).size(), 1u);
  auto kernels = Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  std::map<uint32_t, CUpti_ActivityKernel10> by_correlation;
  for (const auto& k : kernels) by_correlation[k.correlationId] = k;
  ASSERT_EQ(by_correlation.count(runtime_launches[0].correlationId), 1u);
  ASSERT_EQ(by_correlation.count(driver_launches[0].correlationId), 1u);
  EXPECT_EQ(by_correlation[driver_launches[0].correlationId].gridX, 2);
  EXPECT_EQ(by_correlation[driver_launches[0].correlationId].blockX, 128);
  // Every API record's correlation id is distinct: one per outermost call.
  std::set<uint32_t> ids;
  auto api = Client::of<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  auto drv = Client::of<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  api.insert(api.end(), drv.begin(), drv.end());
  for (const auto& a : api) ids.insert(a.correlationId);
  EXPECT_EQ(ids.size(), api.size());
}

TEST_F(CuptiActivity, CopiesAndFillsHaveMemcpyAndMemsetRecords) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 4096), cudaSuccess);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 4096), cudaSuccess);
  std::vector<char> pageable(4096, 3);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, pageable.data(), 4096, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(device, 7, 1024, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, device, 2048, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  flush();

  auto copies = Client::of<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  auto fills = Client::of<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(fills.size(), 1u);
  auto memcpy_calls = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  auto async_calls = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  auto memset_calls = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
  ASSERT_EQ(memcpy_calls.size(), 1u);
  ASSERT_EQ(async_calls.size(), 1u);
  ASSERT_EQ(memset_calls.size(), 1u);

  const CUpti_ActivityMemcpy6& up = copies[0];
  EXPECT_EQ(up.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(up.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(up.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(up.bytes, 4096u);
  EXPECT_EQ(up.correlationId, memcpy_calls[0].correlationId);
  EXPECT_EQ(up.runtimeCorrelationId, memcpy_calls[0].correlationId);
  EXPECT_LE(up.start, up.end);
  EXPECT_GE(up.start, memcpy_calls[0].start);
  EXPECT_LE(up.end, memcpy_calls[0].end) << "a synchronous copy is done when its call returns";

  const CUpti_ActivityMemcpy6& down = copies[1];
  EXPECT_EQ(down.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  EXPECT_EQ(down.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(down.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  EXPECT_EQ(down.bytes, 2048u);
  EXPECT_EQ(down.correlationId, async_calls[0].correlationId);
  EXPECT_EQ(down.streamId, stream_id(stream));

  const CUpti_ActivityMemset4& fill = fills[0];
  EXPECT_EQ(fill.value, 7u);
  EXPECT_EQ(fill.bytes, 1024u);
  EXPECT_EQ(fill.memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(fill.correlationId, memset_calls[0].correlationId);
  EXPECT_EQ(fill.streamId, stream_id(stream));
  EXPECT_LE(fill.end, down.start) << "in stream order";

  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
}

TEST_F(CuptiActivity, KernelsOfAGraphLaunchShareItsCorrelationId) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(launch_busy(stream, 1), cudaSuccess);
  ASSERT_EQ(launch_busy(stream, 1), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  flush();
  EXPECT_TRUE(Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty())
      << "captured launches run nothing";
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  flush();
  auto graph_launches = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  ASSERT_EQ(graph_launches.size(), 1u);
  auto kernels = Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  for (const auto& k : kernels) {
    EXPECT_EQ(k.correlationId, graph_launches[0].correlationId);
    EXPECT_EQ(k.streamId, stream_id(stream));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(CuptiActivity, SynchronizationsAndEventRecordsNameTheirStreamsAndEvents) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  cudaStream_t a, b;
  ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t event;
  ASSERT_EQ(cudaEventCreate(&event), cudaSuccess);
  ASSERT_EQ(launch_busy(a, 1000), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, a), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(b, event, 0), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(event), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, b), cudaSuccess);  // recorded again: a new sync id
  ASSERT_EQ(cudaEventSynchronize(event), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(b), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();

  auto events = Client::of<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  auto syncs = Client::of<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  auto records = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
  ASSERT_EQ(events.size(), 2u);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(events[0].eventId, events[1].eventId) << "one id per CUDA event";
  EXPECT_EQ(events[0].streamId, stream_id(a));
  EXPECT_EQ(events[1].streamId, stream_id(b));
  EXPECT_EQ(events[0].correlationId, records[0].correlationId);
  EXPECT_EQ(events[1].correlationId, records[1].correlationId);
  EXPECT_LT(events[0].cudaEventSyncId, events[1].cudaEventSyncId);
  EXPECT_EQ(events[0].deviceTimestamp, 0u);

  ASSERT_EQ(syncs.size(), 5u);
  const uint32_t none = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  EXPECT_EQ(syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(syncs[0].streamId, stream_id(b));
  EXPECT_EQ(syncs[0].cudaEventId, events[0].eventId);
  EXPECT_EQ(syncs[0].cudaEventSyncId, events[0].cudaEventSyncId);
  EXPECT_EQ(syncs[1].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
  EXPECT_EQ(syncs[1].streamId, none);
  EXPECT_EQ(syncs[1].cudaEventSyncId, events[0].cudaEventSyncId);
  EXPECT_EQ(syncs[2].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
  EXPECT_EQ(syncs[2].cudaEventSyncId, events[1].cudaEventSyncId) << "the latest record of the event";
  EXPECT_EQ(syncs[3].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(syncs[3].streamId, stream_id(b));
  EXPECT_EQ(syncs[3].cudaEventId, none);
  EXPECT_EQ(syncs[4].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(syncs[4].streamId, none);
  // A synchronization spans its call: the same times and correlation id as the call's API record.
  auto waits = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(syncs[1].correlationId, waits[0].correlationId);
  EXPECT_EQ(syncs[1].start, waits[0].start);
  EXPECT_EQ(syncs[1].end, waits[0].end);
  EXPECT_EQ(syncs[1].returnValue, 0u);
  EXPECT_LE(syncs[1].start, syncs[1].end);

  ASSERT_EQ(cudaEventDestroy(event), cudaSuccess);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

std::atomic<uint64_t> fake_clock{0};
uint64_t CUPTIAPI fake_timestamp() { return fake_clock.fetch_add(1000) + 1'000'000'000'000ull; }

TEST_F(CuptiActivity, ARegisteredTimestampCallbackIsTheSourceOfEveryTimestamp) {
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(fake_timestamp), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  const uint64_t first = fake_timestamp();
  ASSERT_EQ(launch_busy(nullptr, 2000), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  const uint64_t last = fake_timestamp();
  auto launches = api_records(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_GT(launches[0].start, first);
  EXPECT_LT(launches[0].end, last);
  EXPECT_LT(launches[0].start, launches[0].end);
  // The kernel's GPU timestamps are brought onto the callback's scale: within the callback's range, 2 ms apart.
  auto kernels = Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_GE(kernels[0].end - kernels[0].start, 2'000'000u);
  EXPECT_LT(kernels[0].end, last);
}

TEST_F(CuptiActivity, GetNextRecordWalksOnlyWholeRecordsWithinTheValidBytes) {
  alignas(8) uint8_t buffer[2 * sizeof(CUpti_ActivityAPI)] = {};
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  std::memcpy(buffer, &api, sizeof api);
  std::memcpy(buffer + sizeof api, &api, sizeof api);
  CUpti_Activity* record = nullptr;
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, sizeof buffer, &record), CUPTI_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(record), buffer);
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, sizeof buffer, &record), CUPTI_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(record), buffer + sizeof api);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof buffer, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
  record = nullptr;
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, sizeof buffer - 8, &record), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof buffer - 8, &record), CUPTI_ERROR_INVALID_KIND)
      << "a record cut by the valid size is incomplete";
  record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
  uint8_t zeros[64] = {};
  record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(zeros, sizeof zeros, &record), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityGetNextRecord(nullptr, 8, &record), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(CuptiActivity, TheAttributesKinetoSetsAreKeptAndReadBack) {
  size_t size = 8 << 20;
  size_t value_size = sizeof size;
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &value_size, &size), CUPTI_SUCCESS);
  size_t limit = 16;
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &value_size, &limit),
            CUPTI_SUCCESS);
  uint8_t per_thread = 0;
  size_t byte_size = sizeof per_thread;
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &byte_size, &per_thread),
            CUPTI_SUCCESS);

  size_t read = 0;
  value_size = sizeof read;
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &value_size, &read), CUPTI_SUCCESS);
  EXPECT_EQ(read, size_t{8} << 20);
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &value_size, &read),
            CUPTI_SUCCESS);
  EXPECT_EQ(read, 16u);
  uint8_t flag = 1;
  byte_size = sizeof flag;
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &byte_size, &flag),
            CUPTI_SUCCESS);
  EXPECT_EQ(flag, 0);

  size_t small = 4;
  EXPECT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &small, &size),
            CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  EXPECT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, nullptr, &size),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivitySetAttribute(static_cast<CUpti_ActivityAttribute>(1000), &value_size, &size),
            CUPTI_ERROR_INVALID_PARAMETER);

  // cuptiFinalize (TearDown of the test before) restores the defaults.
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  value_size = sizeof read;
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &value_size, &read), CUPTI_SUCCESS);
  EXPECT_EQ(read, 3200000u);
}

TEST_F(CuptiActivity, EnableAcceptsTheKindsItRecordsAndRefusesOthers) {
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_KERNEL,
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_CUDA_EVENT}) {
    EXPECT_EQ(cuptiActivityEnable(kind), CUPTI_SUCCESS) << kind;
    EXPECT_EQ(cuptiActivityDisable(kind), CUPTI_SUCCESS) << kind;
  }
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING), CUPTI_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuptiActivityEnableCudaEventDeviceTimestamps(1), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityRegisterCallbacks(nullptr, Client::complete), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(CuptiActivity, TheKernelKindNamesItsRecordsKernel) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  auto kernels = Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_KERNEL);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_STREQ(kernels[0].name, kBusyName);
}

TEST_F(CuptiActivity, FinalizeForgetsCallbacksKindsAndPendingRecords) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 5), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION) << "no callbacks registered any more";
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr),
            CUPTI_ERROR_QUEUE_EMPTY);
  ASSERT_EQ(cuptiActivityRegisterCallbacks(Client::request, Client::complete), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  EXPECT_TRUE(Client::all().empty()) << "kinds are off after cuptiFinalize, and the earlier record was dropped";
  // Attached again, it records again.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(launch_busy(nullptr, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  flush();
  EXPECT_EQ(Client::of<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 1u);
  Client::outstanding.clear();  // the buffer cuptiFinalize kept is the client's to free
}

TEST(CuptiNames, CallbackNamesAndResultStringsComeFromTheToolkitTables) {
  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaLaunchKernel_v7000");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cuLaunchKernel");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cuMemcpyHtoD_v2");
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 0, &name), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, &name),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &name),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 1, nullptr), CUPTI_ERROR_INVALID_PARAMETER);

  const char* text = nullptr;
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_QUEUE_EMPTY, &text), CUPTI_SUCCESS);
  EXPECT_STREQ(text, "CUPTI_ERROR_QUEUE_EMPTY");
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_MAX_LIMIT_REACHED, &text), CUPTI_SUCCESS);
  EXPECT_STREQ(text, "CUPTI_ERROR_MAX_LIMIT_REACHED");
  EXPECT_EQ(cuptiGetResultString(static_cast<CUptiResult>(12345), &text), CUPTI_ERROR_INVALID_PARAMETER);
}

}  // namespace
