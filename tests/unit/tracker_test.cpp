// Tracker: the primary error is the first sticky one; everything after it is secondary; the candidates are the
// launches not proven complete when it was seen. Each test plays a sequence of launches and call results, as the
// event sources would, and checks the findings.
#include "core/tracker.h"
#include "tracker_feed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"

namespace firstassert {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uintptr_t kStreamA = 0x5000a0;
constexpr uintptr_t kStreamB = 0x5000b0;
constexpr uintptr_t kLegacy = 0x1;     // cudaStreamLegacy
constexpr uintptr_t kPerThread = 0x2;  // cudaStreamPerThread

struct Launch {
  uintptr_t stream = 0;
  uintptr_t context = 0;
  bool ptds = false;
  const char* kernel = "_Z6kernelPi";
};

uint64_t launch(Tracker& t, Launch l = {}) {
  LaunchEvent e = test::kernel_launch(l.kernel, l.stream);
  e.context = l.context;
  e.per_thread_default_stream = l.ptds;
  e.grid = {4, 2, 1};
  return test::accepted(t, e, "cudaLaunchKernel");
}

ApiCall call(const char* api, int code, CallKind kind = CallKind::other, uintptr_t stream = 0) {
  return test::call_of(api, code, kind, stream);
}

void device_sync(Tracker& t, int code = 0) { t.record_call(call("cudaDeviceSynchronize", code, CallKind::sync_device)); }

std::vector<uint64_t> seqs(const std::vector<LaunchRecord>& records) {
  std::vector<uint64_t> out;
  for (const LaunchRecord& r : records) out.push_back(r.seq);
  return out;
}

std::vector<uint64_t> candidates(const Tracker& t) { return seqs(t.findings().candidates); }

const ErrorSite* site(const std::vector<ErrorSite>& sites, const std::string& api, int code) {
  for (const ErrorSite& s : sites) {
    if (s.api == api && s.code == code) return &s;
  }
  return nullptr;
}

TEST(Tracker, NoErrorMeansNoPrimary) {
  Tracker t(64);
  for (int i = 0; i < 5; ++i) launch(t);
  device_sync(t);
  EXPECT_FALSE(t.has_primary());
  Findings f = t.findings();
  EXPECT_FALSE(f.has_primary);
  EXPECT_THAT(f.candidates, IsEmpty());
  EXPECT_EQ(f.secondary_count, 0u);
  EXPECT_EQ(f.launches_recorded, 5u);
  EXPECT_THAT(seqs(f.recent), ElementsAre(4, 3, 2, 1, 0));
}

// What the exit handler asks before it reads the whole ring for a report.
TEST(Tracker, HasFindingsOnlyAfterAStickyErrorOrARefusedLaunch) {
  Tracker healthy(64);
  for (int i = 0; i < 5; ++i) launch(healthy);
  device_sync(healthy);
  healthy.record_call(call("cudaMalloc", 2));  // out of memory: not a finding of ours
  EXPECT_FALSE(healthy.has_findings());

  Tracker refused(64);
  LaunchEvent e;
  e.kernel = "_Z6kernelPi";
  e.block = {2048, 1, 1};
  refused.record_launch_error(e, ApiDomain::runtime, 9);
  EXPECT_TRUE(refused.has_findings());

  Tracker faulted(64);
  launch(faulted);
  device_sync(faulted, 710);
  EXPECT_TRUE(faulted.has_findings());
}

TEST(Tracker, LaunchRecordKeepsTheLaunch) {
  Tracker t(64);
  char name[32];
  std::strcpy(name, "_Z6kernelPi");
  LaunchEvent e;
  e.api = LaunchApi::cuLaunchKernel;
  e.kernel = name;
  e.grid = {7, 8, 9};
  e.block = {32, 4, 2};
  e.shared_mem = 4096;
  e.stream = kStreamA;
  e.context = 0xc0;
  e.device = 3;
  e.correlation_id = 77;
  EXPECT_EQ(t.record_launch(e), 0u);
  std::strcpy(name, "overwritten");

  LaunchRecord r;
  ASSERT_TRUE(t.ring().find(0, r));
  EXPECT_STREQ(r.kernel, "_Z6kernelPi") << "the name must be a copy that outlives the driver's buffer";
  EXPECT_EQ(r.grid.x, 7u);
  EXPECT_EQ(r.grid.z, 9u);
  EXPECT_EQ(r.block.y, 4u);
  EXPECT_EQ(r.shared_mem, 4096u);
  EXPECT_EQ(r.stream, kStreamA);
  EXPECT_EQ(r.context, 0xc0u);
  EXPECT_EQ(r.device, 3);
  EXPECT_EQ(r.correlation_id, 77u);
  EXPECT_EQ(r.api, LaunchApi::cuLaunchKernel);
  EXPECT_EQ(r.thread, current_thread_id());
  EXPECT_GT(r.mono_ns, 0);
  EXPECT_EQ(r.wall_ns, 0) << "the launch path keeps one clock";
  int64_t before = wall_ns();
  Findings f = t.findings();
  ASSERT_EQ(f.recent.size(), 1u);
  EXPECT_LE(std::llabs(f.recent[0].wall_ns - before), 1'000'000'000LL)
      << "a record read from the tracker has its wall time, worked out from the monotonic one";
}

TEST(Tracker, FirstStickyErrorIsPrimary) {
  Tracker t(64);
  for (int i = 0; i < 3; ++i) launch(t);
  t.record_call(call("cudaStreamSynchronize", 710, CallKind::sync_stream));
  t.record_call(call("cudaMemcpy", 700));

  Findings f = t.findings();
  ASSERT_TRUE(f.has_primary);
  EXPECT_EQ(f.primary.api, "cudaStreamSynchronize");
  EXPECT_EQ(f.primary.code, 710);
  EXPECT_EQ(f.primary.domain, ApiDomain::runtime);
  EXPECT_EQ(f.primary.launches_before, 3u);
  EXPECT_EQ(f.primary.thread, current_thread_id());
  EXPECT_GT(f.primary.wall_ns, 0);
  EXPECT_EQ(f.secondary_count, 1u);
  ASSERT_NE(site(f.secondary, "cudaMemcpy", 700), nullptr);
}

TEST(Tracker, HookRunsOnceWithTheFindingsAndMayQueryTheTracker) {
  Tracker t(64);
  int calls = 0;
  Findings seen;
  bool primary_visible = false;
  t.on_primary([&](const Findings& f) {
    ++calls;
    seen = f;
    primary_visible = t.has_primary();
    (void)t.findings();  // outside the tracker's locks: must not deadlock
  });
  launch(t);
  launch(t, {.stream = kStreamA});
  t.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(call("cudaFree", 719));

  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(primary_visible);
  EXPECT_TRUE(seen.has_primary);
  EXPECT_EQ(seen.primary.code, 710);
  EXPECT_THAT(seqs(seen.candidates), ElementsAre(1, 0));
  EXPECT_EQ(seen.secondary_count, 0u) << "the hook runs when the primary error is seen, before any secondary one";
}

TEST(Tracker, SecondaryErrorsAreCountedPerApiAndCode) {
  Tracker t(64);
  launch(t);
  t.record_call(call("cudaDeviceSynchronize", 710));
  for (int i = 0; i < 3; ++i) t.record_call(call("cudaMemcpy", 710));
  for (int i = 0; i < 2; ++i) t.record_call(call("cudaFree", 710));
  t.record_call(call("cudaMemcpy", 700));
  ApiCall driver = call("cuCtxSynchronize", 710);
  driver.domain = ApiDomain::driver;
  t.record_call(driver);

  Findings f = t.findings();
  EXPECT_EQ(f.primary.api, "cudaDeviceSynchronize");
  EXPECT_EQ(f.secondary_count, 7u);
  ASSERT_EQ(f.secondary.size(), 4u);
  ASSERT_NE(site(f.secondary, "cudaMemcpy", 710), nullptr);
  EXPECT_EQ(site(f.secondary, "cudaMemcpy", 710)->count, 3u);
  EXPECT_EQ(site(f.secondary, "cudaFree", 710)->count, 2u);
  EXPECT_EQ(site(f.secondary, "cudaMemcpy", 700)->count, 1u);
  ASSERT_NE(site(f.secondary, "cuCtxSynchronize", 710), nullptr);
  EXPECT_EQ(site(f.secondary, "cuCtxSynchronize", 710)->domain, ApiDomain::driver);
  const ErrorSite* memcpy_site = site(f.secondary, "cudaMemcpy", 710);
  EXPECT_LE(memcpy_site->first_wall_ns, memcpy_site->last_wall_ns);
}

TEST(Tracker, SecondarySitesAreBoundedButTheTotalIsKept) {
  Tracker t(64);
  t.record_call(call("cudaDeviceSynchronize", 710));
  std::vector<std::string> apis;
  for (int i = 0; i < 100; ++i) apis.push_back("api" + std::to_string(i));
  for (const std::string& api : apis) t.record_call(call(api.c_str(), 710));
  Findings f = t.findings();
  EXPECT_EQ(f.secondary_count, 100u);
  EXPECT_LE(f.secondary.size(), Tracker::kMaxSites);
  uint64_t sum = 0;
  for (const ErrorSite& s : f.secondary) sum += s.count;
  EXPECT_EQ(sum, 100u);
}

TEST(Tracker, NonStickyErrorsAreNeverPrimary) {
  Tracker t(64);
  int hooks = 0;
  t.on_primary([&](const Findings&) { ++hooks; });
  launch(t);
  t.record_call(call("cudaLaunchKernel", 701, CallKind::launch));
  t.record_call(call("cudaLaunchKernel", 9, CallKind::launch));
  t.record_call(call("cudaMalloc", 2));
  t.record_call(call("cudaMalloc", 2));
  t.record_call(call("cudaMemcpy", 1));
  t.record_call(call("cudaStreamQuery", 600, CallKind::query_stream));  // "not ready" is a state, not an error

  EXPECT_FALSE(t.has_primary());
  EXPECT_EQ(hooks, 0);
  Findings f = t.findings();
  EXPECT_FALSE(f.has_primary);
  EXPECT_EQ(f.secondary_count, 0u);
  EXPECT_EQ(f.other_errors.size(), 4u);
  ASSERT_NE(site(f.other_errors, "cudaMalloc", 2), nullptr);
  EXPECT_EQ(site(f.other_errors, "cudaMalloc", 2)->count, 2u);
  EXPECT_NE(site(f.other_errors, "cudaLaunchKernel", 701), nullptr);
  EXPECT_NE(site(f.other_errors, "cudaLaunchKernel", 9), nullptr);
  EXPECT_EQ(site(f.other_errors, "cudaStreamQuery", 600), nullptr);

  t.record_call(call("cudaDeviceSynchronize", 719));
  t.record_call(call("cudaMalloc", 2));
  f = t.findings();
  EXPECT_EQ(hooks, 1);
  EXPECT_EQ(f.primary.code, 719);
  EXPECT_EQ(f.secondary_count, 0u) << "a non-sticky error after the primary one is not secondary";
  EXPECT_EQ(site(f.other_errors, "cudaMalloc", 2)->count, 3u);
}

TEST(Tracker, CandidatesAreLaunchesSinceTheLastDeviceSyncNewestFirst) {
  Tracker t(64);
  for (int i = 0; i < 3; ++i) launch(t);
  device_sync(t);
  for (int i = 0; i < 2; ++i) launch(t);
  device_sync(t, 710);
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(4, 3));
  EXPECT_EQ(f.primary.launches_before, 5u);
  EXPECT_NE(f.reason.find("2 launches"), std::string::npos) << f.reason;
}

TEST(Tracker, FailedDeviceSyncProvesNothing) {
  Tracker t(64);
  launch(t);
  t.record_call(call("cudaDeviceSynchronize", 1, CallKind::sync_device));  // a non-sticky failure
  launch(t);
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(1, 0));
}

TEST(Tracker, NoPendingLaunchMeansNoCandidates) {
  Tracker t(64);
  launch(t);
  device_sync(t);
  t.record_call(call("cudaMemcpy", 710));
  Findings f = t.findings();
  EXPECT_TRUE(f.has_primary);
  EXPECT_THAT(f.candidates, IsEmpty());
}

TEST(Tracker, StreamSyncExcludesOnlyThatStream) {
  Tracker t(64);
  launch(t, {.stream = kStreamA});  // 0
  launch(t, {.stream = kStreamB});  // 1
  launch(t, {.stream = kStreamA});  // 2
  launch(t);                        // 3, default stream
  t.record_call(call("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA));
  launch(t, {.stream = kStreamA});  // 4: after the sync, still pending
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(4, 3, 1));
}

TEST(Tracker, SuccessfulQueryAndBlockingCopyProveTheirStreamComplete) {
  Tracker t(64);
  launch(t, {.stream = kStreamA});  // 0
  launch(t, {.stream = kStreamB});  // 1
  launch(t);                        // 2
  t.record_call(call("cudaStreamQuery", 0, CallKind::query_stream, kStreamA));
  t.record_call(call("cudaStreamQuery", 600, CallKind::query_stream, kStreamB));  // still running: proves nothing
  t.record_call(call("cudaMemcpy", 0, CallKind::blocking_copy, 0));
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(1));
}

TEST(Tracker, EventSyncNarrowsNothing) {
  Tracker t(64);
  launch(t, {.stream = kStreamA});
  launch(t);
  t.record_call(call("cudaEventSynchronize", 0, CallKind::sync_event, kStreamA));
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(1, 0));
}

TEST(Tracker, LegacyStreamHandleIsStreamZero) {
  Tracker t(64);
  launch(t);                        // 0 on stream 0
  launch(t, {.stream = kStreamA});  // 1
  t.record_call(call("cudaStreamSynchronize", 0, CallKind::sync_stream, kLegacy));
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(1));
}

// A sync proves complete only what was launched before it was entered; launches other threads made while it
// blocked stay candidates.
TEST(Tracker, LaunchesAfterASyncWasEnteredRemainCandidates) {
  Tracker t(64);
  launch(t);  // 0
  launch(t);  // 1
  ApiCall sync = call("cudaDeviceSynchronize", 0, CallKind::sync_device);
  sync.launches_at_entry = t.launch_count();
  launch(t);  // 2, while the sync blocked
  launch(t);  // 3
  t.record_call(sync);
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(3, 2));
}

TEST(Tracker, StreamSyncHonoursLaunchesAtEntry) {
  Tracker t(64);
  launch(t, {.stream = kStreamA});  // 0
  ApiCall sync = call("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA);
  sync.launches_at_entry = t.launch_count();
  launch(t, {.stream = kStreamA});  // 1
  t.record_call(sync);
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(1));
}

TEST(Tracker, UnknownEntryCountMeansEverythingBeforeTheResult) {
  Tracker t(64);
  launch(t);
  launch(t);
  device_sync(t);  // launches_at_entry = kUnknown
  launch(t);
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(2));
}

// Stream 0 of a _ptsz entry point, and cudaStreamPerThread, are the calling thread's own stream: a sync on one
// thread says nothing about another thread's.
TEST(Tracker, PerThreadDefaultStreamsDifferPerThread) {
  Tracker t(64);
  std::thread other([&] { launch(t, {.stream = 0, .ptds = true}); });  // 0
  other.join();
  launch(t, {.stream = 0, .ptds = true});  // 1, this thread's own stream
  launch(t, {.stream = kPerThread});       // 2, the same stream by its handle
  launch(t, {.stream = 0});                // 3, the legacy stream
  ApiCall sync = call("cudaStreamSynchronize_ptsz", 0, CallKind::sync_stream, 0);
  sync.per_thread_default_stream = true;
  t.record_call(sync);
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(3, 0));
}

TEST(Tracker, PerThreadStreamSyncFromAnotherThreadDoesNotCover) {
  Tracker t(64);
  launch(t, {.stream = kPerThread});  // 0 on this thread's stream
  std::thread other([&] { t.record_call(call("cudaStreamSynchronize", 0, CallKind::sync_stream, kPerThread)); });
  other.join();
  device_sync(t, 710);
  EXPECT_THAT(candidates(t), ElementsAre(0));
}

TEST(Tracker, CandidatesAreLimitedToTheErrorsContext) {
  Tracker t(64);
  launch(t, {.context = 0xA});  // 0
  launch(t, {.context = 0xB});  // 1
  launch(t, {.context = 0xA});  // 2
  ApiCall error = call("cudaDeviceSynchronize", 710, CallKind::sync_device);
  error.context = 0xA;
  t.record_call(error);
  EXPECT_THAT(candidates(t), ElementsAre(2, 0));
}

// cudaDeviceSynchronize completes the work of the current device only: a sync of context A proves nothing about
// a kernel still running in context B (another GPU of the same process).
TEST(Tracker, DeviceSyncOfOneContextKeepsAnotherContextsLaunches) {
  Tracker t(64);
  launch(t, {.context = 0xB});  // 0: will fault on device B
  launch(t, {.context = 0xA});  // 1
  ApiCall sync_a = call("cudaDeviceSynchronize", 0, CallKind::sync_device);
  sync_a.context = 0xA;
  t.record_call(sync_a);
  ApiCall error_b = call("cudaDeviceSynchronize", 710, CallKind::sync_device);
  error_b.context = 0xB;
  t.record_call(error_b);
  EXPECT_THAT(candidates(t), ElementsAre(0));
}

// 100 launches none of which is known complete: the report lists the oldest 64, newest first, says how many there
// are, and keeps the one it shows (the oldest, in a window) among those it lists.
TEST(Tracker, CandidatesAreCappedToTheOldestKeepingTheOneShown) {
  Tracker t(256);
  for (int i = 0; i < 100; ++i) launch(t);
  device_sync(t, 710);
  Findings f = t.findings();
  std::vector<uint64_t> c = candidates(t);
  ASSERT_EQ(c.size(), Tracker::kMaxCandidates);
  EXPECT_EQ(f.candidates_total, 100u);
  // The oldest are kept (the most likely to have run), listed newest first.
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], Tracker::kMaxCandidates - 1 - i);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_EQ(c.back(), 0u) << "the launch shown is listed";
}

TEST(Tracker, RecentLaunchesAreTheNewestFirst) {
  Tracker t(64);
  for (int i = 0; i < 40; ++i) launch(t);
  Findings f = t.findings();
  ASSERT_EQ(f.recent.size(), Tracker::kRecentLaunches);
  EXPECT_EQ(f.recent.front().seq, 39u);
  EXPECT_EQ(f.recent.back().seq, 39u - Tracker::kRecentLaunches + 1);
  EXPECT_EQ(f.launches_recorded, 40u);
}

// After the primary error, a sync that claims success proves nothing; a launch numbered after it is a candidate (on
// another thread it may have been queued before the fault and numbered only after, as a launch is numbered once its
// call returned).
TEST(Tracker, AfterThePrimarySyncsProveNothingAndLaterLaunchesAreCandidates) {
  Tracker t(64);
  launch(t, {.stream = kStreamA});  // 0
  launch(t);                        // 1
  device_sync(t, 710);
  Findings before = t.findings();
  ASSERT_THAT(seqs(before.candidates), ElementsAre(1, 0));

  device_sync(t);  // cannot succeed on a real device now; if one claims to, it proves nothing
  t.record_call(call("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA));
  launch(t);  // 2
  t.record_call(call("cudaDeviceSynchronize", 700, CallKind::sync_device));

  Findings after = t.findings();
  EXPECT_THAT(seqs(after.candidates), ElementsAre(2, 1, 0));
  EXPECT_EQ(after.primary.code, 710);
  EXPECT_EQ(after.primary.launches_before, 2u);
  EXPECT_EQ(after.secondary_count, 1u);
  EXPECT_EQ(after.launches_recorded, 3u);
}

TEST(Tracker, MissingApiNameIsReportedAsUnknown) {
  Tracker t(64);
  t.record_call(call(nullptr, 710));
  t.record_call(call(nullptr, 710));
  Findings f = t.findings();
  EXPECT_EQ(f.primary.api, "unknown");
  ASSERT_EQ(f.secondary.size(), 1u);
  EXPECT_EQ(f.secondary[0].api, "unknown");
}

TEST(Tracker, ConcurrentStickyErrorsGiveExactlyOnePrimary) {
  constexpr int kThreads = 8;
  constexpr int kEach = 200;
  Tracker t(1024);
  for (int i = 0; i < 10; ++i) launch(t);
  std::atomic<int> hooks{0};
  t.on_primary([&](const Findings& f) {
    hooks.fetch_add(1);
    EXPECT_TRUE(f.has_primary);
  });
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  const char* apis[kThreads] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      for (int k = 0; k < kEach; ++k) t.record_call(call(apis[i], i % 2 == 0 ? 710 : 700));
    });
  }
  go = true;
  for (std::thread& th : threads) th.join();

  EXPECT_EQ(hooks.load(), 1);
  Findings f = t.findings();
  ASSERT_TRUE(f.has_primary);
  EXPECT_EQ(f.secondary_count, uint64_t{kThreads} * kEach - 1);
  uint64_t sum = 0;
  for (const ErrorSite& s : f.secondary) sum += s.count;
  EXPECT_EQ(sum, f.secondary_count);
  const ErrorSite* primary_site = site(f.secondary, f.primary.api, f.primary.code);
  ASSERT_NE(primary_site, nullptr);
  EXPECT_EQ(primary_site->count, uint64_t{kEach} - 1);
  EXPECT_THAT(seqs(f.candidates), ElementsAre(9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
}

// Launches into a capturing stream are graph nodes: they do not run, so they are never candidates.
TEST(Tracker, LaunchesIntoACapturingStreamAreNotRecorded) {
  Tracker t(64);
  t.record_call(call("cudaStreamBeginCapture", 0, CallKind::begin_capture, kStreamA));
  LaunchEvent captured;
  captured.kernel = "_Z8capturedv";
  captured.stream = kStreamA;
  EXPECT_EQ(t.record_launch(captured), Tracker::kNotRecorded);
  uint64_t other = launch(t, {.stream = kStreamB});
  EXPECT_EQ(other, 0u) << "another stream's launch is a launch";
  LaunchEvent graph;
  graph.stream = kStreamA;
  graph.graph = true;
  graph.api = LaunchApi::cudaGraphLaunch;
  EXPECT_NE(t.record_launch(graph), Tracker::kNotRecorded) << "a graph launch is recorded as such";

  // An invalidated capture ends with an error, and it ends all the same.
  t.record_call(call("cudaStreamEndCapture", 901, CallKind::end_capture, kStreamA));
  EXPECT_NE(t.record_launch(captured), Tracker::kNotRecorded);
  EXPECT_EQ(t.findings().launches_recorded, 3u);
}

}  // namespace
}  // namespace firstassert
