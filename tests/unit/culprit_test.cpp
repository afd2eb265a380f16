// Culprit decision: from the candidates of the first sticky error to one named launch, with how sure firstassert is.
// A completion probe stands in for the stream breadcrumbs (launches on a stream with seq below its answer
// completed); the device's assertion lines come from device_message_log(), which findings() reads. That log is the
// process's and keeps what it is fed, so every test here starts from the same fixed set of messages (fed once,
// whatever the order tests run in), and each test chooses kernels that these messages name, or do not.
// Also the refused launches (record_launch_error): first of a kind, bounded, and the culprit without a sticky error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/device_messages.h"
#include "core/tracker.h"
#include "tracker_feed.h"

namespace firstassert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uintptr_t kStreamA = 0x5000a0;
constexpr uintptr_t kStreamB = 0x5000b0;

// Kernels the device messages below name, as PyTorch's CUDA_KERNEL_ASSERT prints them (the bare __func__)...
constexpr const char* kLabel = "_Z12label_kernelPi";    // label_kernel(int*)
constexpr const char* kGather = "_Z13gather_kernelPi";  // gather_kernel(int*)
// ...one named by a plain assert(), which prints __PRETTY_FUNCTION__ ("void plain_kernel(int *)")...
constexpr const char* kPlain = "_Z12plain_kernelPi";  // plain_kernel(int*)
// ...and kernels no message names.
constexpr const char* kQuiet = "_Z12quiet_kernelv";  // quiet_kernel()
constexpr const char* kBusy = "_Z11busy_kernelv";    // busy_kernel()

// In this order: when several name open launches, the first printed decides.
constexpr const char* kMessages =
    "train.cu:42: label_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.\n"
    "gather.cu:7: gather_kernel: block: [0,2,0], thread: [1,0,0] Assertion `idx < n` failed.\n"
    "plain.cu:3: void plain_kernel(int *): block: [0,0,0], thread: [0,0,0] Assertion `p[0] >= 0` failed.\n";

class Culprit : public ::testing::Test {
 protected:
  void SetUp() override {
    static const bool fed = [] {
      device_message_log().feed(kMessages, std::strlen(kMessages));
      return true;
    }();
    (void)fed;
    ASSERT_EQ(device_message_log().count(), 3u) << "nothing else in this binary may feed the process's log";
  }

  // Launches accepted by the API, as the event source reports them.
  uint64_t launch(const char* kernel, uintptr_t stream = 0) {
    return test::accepted(t, test::kernel_launch(kernel, stream), "cudaLaunchKernel");
  }

  void call(const char* api, int code, CallKind kind = CallKind::other, uintptr_t stream = 0) {
    t.record_call(test::call_of(api, code, kind, stream));
  }

  void fault() { call("cudaDeviceSynchronize", 710, CallKind::sync_device); }

  uint64_t launch_that_returned(int code, const char* kernel, uintptr_t stream);

  // Breadcrumbs: completed_before per stream key; streams absent from the map have none.
  void breadcrumbs(std::map<uint64_t, uint64_t> marks) { test::breadcrumbs(t, std::move(marks)); }

  Tracker t{256};
};

std::vector<uint64_t> seqs(const std::vector<LaunchRecord>& records) {
  std::vector<uint64_t> out;
  for (const LaunchRecord& r : records) out.push_back(r.seq);
  return out;
}

TEST_F(Culprit, TheProcessLogHoldsTheTestsMessages) {
  std::vector<DeviceMessage> m = device_message_log().messages();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_STREQ(m[0].function, "label_kernel");
  EXPECT_STREQ(m[2].function, "void plain_kernel(int *)");
  launch(kQuiet);
  fault();
  EXPECT_EQ(t.findings().device_messages.size(), 3u) << "findings carry every device message";
}

// One stream, breadcrumbs say launches below seq 2 completed: seq 2 is the first that did not, and nothing after it
// on the same stream could run before it. Exact, even though later launches are candidates too.
TEST_F(Culprit, OneStreamWithBreadcrumbsIsExactOnTheFirstOpenLaunch) {
  for (int i = 0; i < 5; ++i) launch(kQuiet, kStreamA);
  breadcrumbs({{kStreamA, 2}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(4, 3, 2, 1, 0)) << "breadcrumbs narrow the culprit, not the window";
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs"));
  EXPECT_THAT(f.reason, HasSubstr("0x5000a0"));
  EXPECT_FALSE(f.culprit_message.has_value()) << "no message names quiet_kernel";
}

TEST_F(Culprit, BreadcrumbBetweenTwoLaunchesOfTheStreamPicksTheNextOne) {
  launch(kQuiet, kStreamA);  // 0
  launch(kQuiet, kStreamB);  // 1
  launch(kQuiet, kStreamA);  // 2
  launch(kQuiet, kStreamB);  // 3
  launch(kQuiet, kStreamA);  // 4
  // A's seq 0 and 2 completed (below 3); all of B completed: B drops out, and A's first open launch is 4.
  breadcrumbs({{kStreamA, 3}, {kStreamB, 4}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 4u);
  EXPECT_EQ(f.culprit->stream, kStreamA);
  EXPECT_STREQ(f.confidence, "exact");
}

// B's breadcrumbs show all its work completed, so only A can hold the failure, though neither was synchronized.
TEST_F(Culprit, AStreamWhoseLaunchesAllCompletedDropsOut) {
  launch(kQuiet, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  launch(kBusy, kStreamB);   // 2
  breadcrumbs({{kStreamA, 0}, {kStreamB, 3}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 1, 0));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_STREQ(f.confidence, "exact");
}

// Every candidate completed by its stream's breadcrumbs: the failure was not a recorded launch. A launch is still
// named (the newest candidate), but only as a window.
TEST_F(Culprit, EveryStreamCompletedLeavesOnlyTheWindow) {
  launch(kQuiet, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  breadcrumbs({{kStreamA, 1}, {kStreamB, 2}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("every pending launch completed"));
}

// Two streams each with an open launch: breadcrumbs cannot tell which failed; the device's assertion names
// label_kernel, which only the launch on A runs.
TEST_F(Culprit, TwoStreamsOpenTheDeviceMessagePicksTheLaunch) {
  launch(kLabel, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  breadcrumbs({{kStreamA, 0}, {kStreamB, 0}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("2 launches on 2 streams"));
  EXPECT_THAT(f.reason, HasSubstr("label_kernel, which only this one runs"));
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->function, "label_kernel");
  EXPECT_STREQ(f.culprit_message->condition, "label < n_classes");
  EXPECT_STREQ(f.culprit_message->file, "train.cu");
  EXPECT_EQ(f.culprit_message->line, 42u);
  EXPECT_EQ(f.culprit_message->block[0], 1u);
  EXPECT_EQ(f.culprit_message->thread[0], 5u);
}

// Without breadcrumbs every candidate is open; the message still picks its function's launch.
TEST_F(Culprit, WithoutBreadcrumbsTheMessagePicksAmongAllCandidates) {
  launch(kBusy);   // 0
  launch(kLabel);  // 1
  launch(kQuiet);  // 2
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("3 launches on 1 streams"));
}

// Several open launches run the named function: the oldest is named, since the device stops at the first failure
// and an older launch of the same kernel ran first.
TEST_F(Culprit, OldestOfSeveralLaunchesOfTheNamedFunction) {
  launch(kBusy, kStreamA);    // 0
  launch(kGather, kStreamA);  // 1
  launch(kBusy, kStreamB);    // 2
  launch(kGather, kStreamB);  // 3
  launch(kGather);            // 4
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("gather_kernel, and this is the oldest of them"));
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->condition, "idx < n");
}

// Only open launches count: the named function's launch that breadcrumbs show complete is not picked.
TEST_F(Culprit, ACompletedLaunchOfTheNamedFunctionIsNotPicked) {
  launch(kGather, kStreamA);  // 0: completed
  launch(kBusy, kStreamA);    // 1: A's first open launch
  launch(kGather, kStreamB);  // 2: B's first open launch
  breadcrumbs({{kStreamA, 1}, {kStreamB, 0}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "likely");
}

// Messages are printed in the order the device failed; the first one naming an open launch decides, even when a
// later one names another open launch.
TEST_F(Culprit, TheFirstMessageNamingAnOpenLaunchDecides) {
  launch(kGather);  // 0: named by the second message
  launch(kLabel);   // 1: named by the first
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "likely");
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->function, "label_kernel");
}

// A plain assert() in CUDA C++ prints __PRETTY_FUNCTION__ ("void plain_kernel(int *)", checked with nvcc 13's
// preprocessor: glibc's assert passes __ASSERT_FUNCTION = __PRETTY_FUNCTION__). That message names plain_kernel
// as surely as a bare name does.
TEST_F(Culprit, AMessageFromAPlainAssertNamesItsKernel) {
  launch(kPlain, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u) << f.confidence << ": " << f.reason;
  EXPECT_STREQ(f.confidence, "likely");
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->condition, "p[0] >= 0");
}

TEST_F(Culprit, NoBreadcrumbsAndNoMessageLeaveTheWindowNewestNamed) {
  launch(kQuiet, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  launch(kQuiet, kStreamA);  // 2
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("3 launches had not been seen to complete when cudaDeviceSynchronize"));
  EXPECT_FALSE(f.culprit_message.has_value());
}

// Streams without breadcrumbs keep all their launches, beside the first open one of a stream that has them.
TEST_F(Culprit, StreamsWithoutBreadcrumbsKeepAllTheirLaunches) {
  launch(kQuiet, kStreamA);  // 0: completed
  launch(kQuiet, kStreamB);  // 1: B has no breadcrumbs
  launch(kQuiet, kStreamA);  // 2: A's first open
  launch(kQuiet, kStreamA);  // 3: after it on A: cannot be the first failure
  launch(kBusy, kStreamB);   // 4
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 4u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("3 launches")) << "B's two and A's first open one";
}

TEST_F(Culprit, OneLaunchWithoutBreadcrumbsIsExact) {
  launch(kQuiet);
  launch(kLabel);
  call("cudaDeviceSynchronize", 0, CallKind::sync_device);
  launch(kLabel);  // 2: the only one pending
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("the only launch not yet seen to complete when cudaDeviceSynchronize"));
  ASSERT_TRUE(f.culprit_message.has_value()) << "the message matches the exact culprit";
  EXPECT_STREQ(f.culprit_message->function, "label_kernel");
}

// A launch that returned the sticky error itself, as the event source records it (the primary is then claimed by
// that same call).
uint64_t Culprit::launch_that_returned(int code, const char* kernel, uintptr_t stream) {
  LaunchEvent e;
  e.kernel = kernel;
  e.stream = stream;
  e.returned = code;
  uint64_t seq = t.record_launch(e);
  call("cudaLaunchKernel", code, CallKind::launch, stream);
  return seq;
}

// CUDA_LAUNCH_BLOCKING=1: the launch ran to the fault and returned it; everything before it completed.
TEST_F(Culprit, ALaunchThatReturnedTheFaultWithEverythingElseCompleteIsExact) {
  launch(kLabel, kStreamA);                                        // 0
  launch(kQuiet, kStreamB);                                        // 1
  uint64_t blocking = launch_that_returned(710, kLabel, kStreamA);  // 2
  breadcrumbs({{kStreamA, 2}, {kStreamB, 2}});
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, blocking) << "not the earlier launch of the message's function";
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("returned cudaErrorAssert itself"));
  EXPECT_THAT(f.reason, HasSubstr("breadcrumbs show every earlier launch completed"));
}

// Asynchronous as usual: an earlier launch on another stream never left its breadcrumb, so the launch that
// returned the error only learned of that fault.
TEST_F(Culprit, ALaunchThatOnlyLearnedOfAnEarlierFaultIsNotTheCulprit) {
  launch(kQuiet, kStreamA);                    // 0: completed
  uint64_t failed = launch(kQuiet, kStreamB);  // 1: never completed
  launch_that_returned(710, kLabel, kStreamA);  // 2
  breadcrumbs({{kStreamA, 1}, {kStreamB, 1}});
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, failed) << "even though the device's message names the launch that returned it";
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs"));
}

// The same on one stream: the first unfinished launch decides, as for any other.
TEST_F(Culprit, ALaunchThatReturnedTheFaultAfterAnUnfinishedOneOnItsStreamIsNotTheCulprit) {
  uint64_t failed = launch(kQuiet, kStreamA);   // 0: never completed
  launch_that_returned(710, kLabel, kStreamA);  // 1
  breadcrumbs({{kStreamA, 0}});
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, failed);
  EXPECT_STREQ(f.confidence, "exact");
}

// Without breadcrumbs nothing shows which: the launch that returned it stays a candidate, and the device's message
// decides among them.
TEST_F(Culprit, WithoutBreadcrumbsALaunchThatReturnedTheFaultIsOneCandidateAmongOthers) {
  launch(kQuiet, kStreamA);                                        // 0
  uint64_t blocking = launch_that_returned(710, kLabel, kStreamA);  // 1
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, blocking);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("names label_kernel"));
}

TEST_F(Culprit, NoCandidatesNoCulprit) {
  launch(kLabel);
  call("cudaDeviceSynchronize", 0, CallKind::sync_device);
  call("cudaMemcpy", 710);
  Findings f = t.findings();
  ASSERT_TRUE(f.has_primary);
  EXPECT_THAT(f.candidates, IsEmpty());
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_FALSE(f.culprit_message.has_value());
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("no recorded launch was pending"));
}

// Graph launches have no kernel name: they never match a message, and can still be the culprit.
TEST_F(Culprit, GraphLaunchesAreCandidatesButNeverNamed) {
  LaunchEvent graph;
  graph.api = LaunchApi::cudaGraphLaunch;
  graph.graph = true;
  graph.stream = kStreamA;
  t.record_launch(graph);  // 0
  launch(kBusy, kStreamB);  // 1
  t.record_launch(graph);  // 2
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_FALSE(f.culprit_message.has_value());
}

// ---- Refused launches -------------------------------------------------------------------------------------------

LaunchEvent refused(const char* kernel, uint32_t correlation_id = 0) {
  LaunchEvent e;
  e.kernel = kernel;
  e.grid = {1, 1, 1};
  e.block = {2048, 1, 1};
  e.stream = kStreamA;
  e.correlation_id = correlation_id;
  return e;
}

TEST_F(Culprit, LaunchErrorHookSaysFirstOncePerKernelAndCode) {
  std::vector<std::pair<std::string, bool>> calls;
  t.on_launch_error([&](const LaunchError& e, bool first) {
    calls.emplace_back(std::string(e.launch.kernel) + "/" + std::to_string(e.code), first);
  });
  t.record_launch_error(refused(kQuiet), ApiDomain::runtime, 9);
  t.record_launch_error(refused(kQuiet), ApiDomain::runtime, 9);
  t.record_launch_error(refused(kQuiet), ApiDomain::runtime, 701);
  t.record_launch_error(refused(kBusy), ApiDomain::runtime, 9);
  t.record_launch_error(refused(kBusy), ApiDomain::runtime, 9);
  t.record_launch_error(refused(kQuiet), ApiDomain::runtime, 9);
  std::string q9 = std::string(kQuiet) + "/9";
  std::string b9 = std::string(kBusy) + "/9";
  EXPECT_THAT(calls, ElementsAre(std::pair{q9, true}, std::pair{q9, false},
                                 std::pair{std::string(kQuiet) + "/701", true}, std::pair{b9, true},
                                 std::pair{b9, false}, std::pair{q9, false}));
  EXPECT_EQ(t.findings().launch_errors.size(), 6u) << "every refusal is listed, first of its kind or not";
}

// The kind is the kernel, i.e. its name: the same kernel's name can reach the tracker from another buffer (its module
// loaded again, or in a second context on another GPU), and its refusal with the same code is not news.
TEST_F(Culprit, LaunchErrorKindIsTheKernelsNameNotTheNamesBuffer) {
  std::vector<bool> firsts;
  t.on_launch_error([&](const LaunchError&, bool first) { firsts.push_back(first); });
  char other_module[32];
  std::strcpy(other_module, kQuiet);
  t.record_launch_error(refused(kQuiet), ApiDomain::runtime, 9);
  t.record_launch_error(refused(other_module), ApiDomain::runtime, 9);
  EXPECT_THAT(firsts, ElementsAre(true, false));
}

TEST_F(Culprit, LaunchErrorKeepsTheLaunchOutsideTheLaunchOrder) {
  LaunchEvent e = refused(kQuiet, 55);
  e.api = LaunchApi::cuLaunchKernel;
  e.grid = {3, 2, 1};
  e.shared_mem = 1 << 20;
  e.device = 2;
  t.record_launch_error(e, ApiDomain::driver, 701);
  Findings f = t.findings();
  ASSERT_EQ(f.launch_errors.size(), 1u);
  const LaunchError& le = f.launch_errors[0];
  EXPECT_EQ(le.code, 701);
  EXPECT_EQ(le.domain, ApiDomain::driver);
  EXPECT_STREQ(le.launch.kernel, kQuiet);
  EXPECT_EQ(le.launch.seq, ~uint64_t{0}) << "never queued";
  EXPECT_EQ(le.launch.api, LaunchApi::cuLaunchKernel);
  EXPECT_EQ(le.launch.grid.y, 2u);
  EXPECT_EQ(le.launch.block.x, 2048u);
  EXPECT_EQ(le.launch.shared_mem, 1u << 20);
  EXPECT_EQ(le.launch.device, 2);
  EXPECT_EQ(le.launch.correlation_id, 55u);
  EXPECT_EQ(le.launch.thread, current_thread_id());
  EXPECT_EQ(f.launches_recorded, 0u) << "a refused launch is not in the ring";
}

TEST_F(Culprit, LaunchErrorsAreBoundedToTheFirstOnes) {
  for (uint32_t i = 0; i < Tracker::kMaxLaunchErrors + 30; ++i)
    t.record_launch_error(refused(kQuiet, i), ApiDomain::runtime, 9);
  Findings f = t.findings();
  ASSERT_EQ(f.launch_errors.size(), Tracker::kMaxLaunchErrors);
  for (uint32_t i = 0; i < f.launch_errors.size(); ++i) EXPECT_EQ(f.launch_errors[i].launch.correlation_id, i);
}

// No sticky error, but the API refused a launch: that launch is the first error, known exactly.
TEST_F(Culprit, WithoutAStickyErrorTheFirstRefusedLaunchIsTheCulprit) {
  launch(kLabel);
  t.record_launch_error(refused(kBusy, 1), ApiDomain::runtime, 9);
  t.record_launch_error(refused(kQuiet, 2), ApiDomain::runtime, 701);
  Findings f = t.findings();
  EXPECT_FALSE(f.has_primary);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.culprit->kernel, kBusy);
  EXPECT_EQ(f.culprit->correlation_id, 1u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_EQ(f.reason, "cudaLaunchKernel refused this launch with cudaErrorInvalidConfiguration; it never ran");
  EXPECT_FALSE(f.culprit_message.has_value()) << "a launch that never ran printed nothing";
}

// A sticky error later outranks the refusal: the culprit is decided among the candidates again.
TEST_F(Culprit, AStickyErrorOutranksARefusedLaunch) {
  t.record_launch_error(refused(kBusy), ApiDomain::runtime, 9);
  launch(kQuiet);
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.has_primary);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_STREQ(f.culprit->kernel, kQuiet);
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_EQ(f.launch_errors.size(), 1u) << "the refusal is still listed";
}

TEST_F(Culprit, NoErrorAtAllNoCulprit) {
  launch(kLabel);
  Findings f = t.findings();
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_THAT(f.launch_errors, IsEmpty());
}

}  // namespace
}  // namespace firstassert
