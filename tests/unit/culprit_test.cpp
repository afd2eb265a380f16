// Culprit decision: from the launches that can have failed when the first sticky error was seen to one named launch,
// with how sure firstassert is (culprit_decision.h). test::breadcrumbs stands in for the stream breadcrumbs (launches
// on a stream with seq below its mark completed; one pair per thread that launched onto it); the device's assertion
// lines come from device_message_log(), which findings() reads. That log is the process's and keeps what it is fed, so
// every test here starts from the same fixed set of messages (fed once, whatever the order tests run in), and each
// test chooses kernels (and grids) that these messages fit, or do not.
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
#include "core/culprit_decision.h"
#include "core/device_assert_line.h"
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

// In this order: when several name open launches, the first printed decides. gather_kernel's line is from block
// [0,2,0]: it fits only a launch whose grid has more than 2 blocks in y (gather() below), not kernel_launch()'s
// (4,1,1).
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

  // Launches accepted by the API, as the event source reports them: <<<(4,1,1), (128,1,1)>>>, or the grid given.
  uint64_t launch(const char* kernel, uintptr_t stream = 0) {
    return test::accepted(t, test::kernel_launch(kernel, stream), "cudaLaunchKernel");
  }
  uint64_t launch(const char* kernel, uintptr_t stream, Dim3 grid) {
    LaunchEvent e = test::kernel_launch(kernel, stream);
    e.grid = grid;
    return test::accepted(t, e, "cudaLaunchKernel");
  }
  // gather_kernel with a grid its device line's block [0,2,0] lies within.
  uint64_t gather(uintptr_t stream = 0) { return launch(kGather, stream, {4, 4, 1}); }

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

// The decision left one launch: exact, named, and the only candidate.
void expect_exact(const Findings& f, uint64_t seq) {
  EXPECT_THAT(seqs(f.candidates), ElementsAre(seq));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, seq);
  EXPECT_STREQ(f.confidence, "exact");
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

// One stream, one launching thread, breadcrumbs say launches below seq 2 completed: seq 2 is the first that did not,
// and nothing after it on the same stream from the same thread can have run (its breadcrumb, queued before them,
// never ran). It is the only launch that can have failed: exact, and the only candidate.
TEST_F(Culprit, OneStreamWithBreadcrumbsIsExactOnTheFirstOpenLaunch) {
  for (int i = 0; i < 5; ++i) launch(kQuiet, kStreamA);
  breadcrumbs({{kStreamA, 2}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2)) << "0 and 1 completed; 3 and 4 cannot have run";
  EXPECT_EQ(f.candidates_total, 1u);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs: every launch before this one on stream 0x5000a0 completed"));
  EXPECT_THAT(f.reason, HasSubstr("every launch on other streams had completed"));
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
  EXPECT_THAT(seqs(f.candidates), ElementsAre(0)) << "B's launches completed: not candidates";
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_STREQ(f.confidence, "exact");
}

// Every launch completed by its stream's breadcrumbs: the failure was not a recorded launch. No launch can have
// failed, so none is named (a window naming the newest launch would claim more than the breadcrumbs bear out).
TEST_F(Culprit, EveryStreamCompletedLeavesNoCulprit) {
  launch(kQuiet, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  breadcrumbs({{kStreamA, 1}, {kStreamB, 2}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(f.candidates, IsEmpty());
  EXPECT_EQ(f.candidates_total, 0u);
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_FALSE(f.culprit_message.has_value());
  EXPECT_STREQ(f.confidence, "unknown");
  EXPECT_THAT(f.reason, HasSubstr("every launch firstassert recorded had completed when cudaDeviceSynchronize"));
  EXPECT_THAT(f.reason, HasSubstr("the failing work was not a recorded launch"));
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
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  EXPECT_THAT(f.reason, HasSubstr("2 launches (the first unfinished launch of each launching thread on 2 streams)"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel, block [1,0,0], "
                                  "thread [5,0,0])"));
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
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 1, 0)) << "no breadcrumbs: every launch not synced";
  EXPECT_THAT(f.reason, HasSubstr("3 launches not seen to complete when cudaDeviceSynchronize reported "
                                  "cudaErrorAssert"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel"));
}

// Several open launches (on three streams, no breadcrumbs) run the function the device's line names, and each one's
// grid holds the line's block: the line does not tell them apart. Claiming the oldest as likely (it ran first) was an
// over-claim, since launches on other streams run side by side: the honest answer is the window of the three that
// fit, listed first, with the oldest of them shown, not claimed.
TEST_F(Culprit, SeveralLaunchesOfTheNamedFunctionLeaveAWindowShowingTheOldest) {
  launch(kBusy, kStreamA);  // 0
  gather(kStreamA);         // 1
  launch(kBusy, kStreamB);  // 2
  gather(kStreamB);         // 3
  gather();                 // 4
  fault();
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(seqs(f.candidates), ElementsAre(4, 3, 1, 2, 0)) << "those that fit the line first";
  EXPECT_EQ(f.candidates_total, 5u);
  EXPECT_EQ(f.candidates_fitting, 3u) << "the window proper: the first three";
  EXPECT_THAT(f.reason, HasSubstr("one of 5 launches not seen to complete"));
  EXPECT_THAT(f.reason, HasSubstr("3 of them fit the device's assertion line (gather_kernel, block [0,2,0]"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest that fits is shown, not claimed"));
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->condition, "idx < n");
}

// Only open launches count: the named function's launch that breadcrumbs show complete is not picked, and of the two
// that can have failed only B's runs gather_kernel.
TEST_F(Culprit, ACompletedLaunchOfTheNamedFunctionIsNotPicked) {
  gather(kStreamA);         // 0: completed
  launch(kBusy, kStreamA);  // 1: A's first open launch
  gather(kStreamB);         // 2: B's first open launch
  breadcrumbs({{kStreamA, 1}, {kStreamB, 0}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 1));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 2u);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (gather_kernel"));
}

// Messages are printed in the order the device failed; the first one naming an open launch decides, even when a
// later one names another open launch.
TEST_F(Culprit, TheFirstMessageNamingAnOpenLaunchDecides) {
  gather();        // 0: fits the second message
  launch(kLabel);  // 1: fits the first
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

// No breadcrumbs, and no device line fits any of the three launches: the window of all three, the oldest shown (not
// the newest, as before: the oldest has been queued longest), and nothing claimed.
TEST_F(Culprit, NoBreadcrumbsAndNoFittingMessageLeaveTheWindowOldestShown) {
  launch(kQuiet, kStreamA);  // 0
  launch(kBusy, kStreamB);   // 1
  launch(kQuiet, kStreamA);  // 2
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 1, 0));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("one of 3 launches not seen to complete when cudaDeviceSynchronize reported "
                                  "cudaErrorAssert"));
  EXPECT_THAT(f.reason, HasSubstr("none of them fits the device's assertion line"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest is shown, not claimed"));
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
  EXPECT_THAT(seqs(f.candidates), ElementsAre(4, 2, 1)) << "B's two and A's first open one";
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u) << "the oldest, shown";
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("one of 3 launches"));
  EXPECT_THAT(f.reason, HasSubstr("on 2 streams"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest is shown, not claimed"));
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
  EXPECT_THAT(f.reason, HasSubstr("the only launch not seen to complete when cudaDeviceSynchronize reported "
                                  "cudaErrorAssert"));
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
  t.set_launch_blocking(true);
  launch(kLabel, kStreamA);                                        // 0
  launch(kQuiet, kStreamB);                                        // 1
  uint64_t blocking = launch_that_returned(710, kLabel, kStreamA);  // 2
  breadcrumbs({{kStreamA, 2}, {kStreamB, 2}});
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, blocking) << "not the earlier launch of the message's function";
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(seqs(f.candidates), ElementsAre(blocking));
  EXPECT_THAT(f.reason, HasSubstr("this launch returned cudaErrorAssert itself, under CUDA_LAUNCH_BLOCKING=1"));
  EXPECT_THAT(f.reason, HasSubstr("every other recorded launch had completed (stream breadcrumbs)"));
}

// Without CUDA_LAUNCH_BLOCKING a launch call returns before its kernel runs: one that returned the sticky error only
// learned of an earlier fault (here, of work firstassert never recorded) and never ran. It is no candidate, and
// nothing is named.
TEST_F(Culprit, WithoutLaunchBlockingALaunchThatReturnedTheFaultNeverRan) {
  launch(kLabel, kStreamA);                     // 0
  launch(kQuiet, kStreamB);                     // 1
  launch_that_returned(710, kLabel, kStreamA);  // 2
  breadcrumbs({{kStreamA, 2}, {kStreamB, 2}});
  Findings f = t.findings();
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "unknown");
  EXPECT_THAT(seqs(f.candidates), IsEmpty());
}

// An earlier launch on another stream never left its breadcrumb. Under CUDA_LAUNCH_BLOCKING=1 the launch that
// returned the error may have run to its own fault (B's launch still running beside it): it is the first unfinished
// launch of its (stream, thread), so both can have failed, and returning the error does not make it the culprit. The
// device's line names label_kernel, which only B's launch runs.
TEST_F(Culprit, UnderLaunchBlockingALaunchThatReturnedTheFaultIsOneCandidateBesideAnUnfinishedOne) {
  t.set_launch_blocking(true);
  launch(kQuiet, kStreamA);                                         // 0: completed
  uint64_t failed = launch(kLabel, kStreamB);                       // 1: never completed
  uint64_t returned = launch_that_returned(710, kQuiet, kStreamA);  // 2
  breadcrumbs({{kStreamA, 1}, {kStreamB, 1}});
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(returned, failed));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, failed) << "not the launch that returned the error";
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("2 launches (the first unfinished launch of each launching thread on 2 streams)"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel"));
}

// The same without a line that tells them apart (both run kernels no line names): the window of the two, the older
// (B's unfinished launch) shown, not claimed.
TEST_F(Culprit, UnderLaunchBlockingALaunchThatReturnedTheFaultAndAnUnfinishedOneLeaveAWindow) {
  t.set_launch_blocking(true);
  launch(kQuiet, kStreamA);                                         // 0: completed
  uint64_t failed = launch(kBusy, kStreamB);                        // 1: never completed
  uint64_t returned = launch_that_returned(710, kQuiet, kStreamA);  // 2
  breadcrumbs({{kStreamA, 1}, {kStreamB, 1}});
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(returned, failed));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, failed);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("none of them fits the device's assertion line"));
}

// Without CUDA_LAUNCH_BLOCKING the launch that returned the error never ran: B's unfinished launch is the only one
// that can have failed.
TEST_F(Culprit, WithoutLaunchBlockingTheUnfinishedLaunchBesideOneThatReturnedTheFaultIsExact) {
  launch(kQuiet, kStreamA);                     // 0: completed
  uint64_t failed = launch(kBusy, kStreamB);    // 1: never completed
  launch_that_returned(710, kQuiet, kStreamA);  // 2
  breadcrumbs({{kStreamA, 1}, {kStreamB, 1}});
  Findings f = t.findings();
  expect_exact(f, failed);
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
  t.set_launch_blocking(true);
  launch(kQuiet, kStreamA);                                        // 0
  uint64_t blocking = launch_that_returned(710, kLabel, kStreamA);  // 1
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, blocking);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  EXPECT_THAT(f.reason, HasSubstr("2 launches not seen to complete when cudaLaunchKernel reported cudaErrorAssert"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel"));
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
  EXPECT_STREQ(f.confidence, "unknown");
  EXPECT_THAT(f.reason, HasSubstr("every launch firstassert recorded had completed when cudaMemcpy reported "
                                  "cudaErrorAssert"));
  EXPECT_THAT(f.reason, HasSubstr("the failing work was not a recorded launch"));
}

// A whole graph launch (its kernel nodes unknown: no graph probe) has no kernel name, and any of its kernels may have
// printed the device's line: it fits every line, so two of them are never told apart by one. busy_kernel fits none.
// The window lists the two graph launches first and shows the older, not claimed.
TEST_F(Culprit, WholeGraphLaunchesFitAnyMessageAndLeaveAWindow) {
  LaunchEvent graph;
  graph.api = LaunchApi::cudaGraphLaunch;
  graph.graph = true;
  graph.stream = kStreamA;
  t.record_launch(graph);  // 0
  launch(kBusy, kStreamB);  // 1
  t.record_launch(graph);  // 2
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 0, 1));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_TRUE(f.culprit->graph);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("2 of them fit the device's assertion line (label_kernel"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest that fits is shown, not claimed"));
  ASSERT_TRUE(f.culprit_message.has_value()) << "the line the shown graph launch may have printed";
  EXPECT_STREQ(f.culprit_message->function, "label_kernel");
}

// ---- Per (stream, launching thread) ---------------------------------------------------------------------------

// Two threads launch onto one stream (PyTorch's autograd thread and the main thread share the current stream). Their
// sequence numbers are taken after their launches were queued, so across threads the numbers do not give the order
// on the stream: only each thread's own launches are known to reach it in order, each followed by its breadcrumb.
// Breadcrumbs say launches below 1 completed: the main thread's first unfinished launch is 3, the other thread's is
// 1, and either can have failed. No line fits either kernel: the window of the two, the older shown.
TEST_F(Culprit, TwoThreadsOnOneStreamEachKeepTheirFirstUnfinishedLaunch) {
  launch(kQuiet, kStreamA);  // 0: main thread, completed
  int32_t other = 0;
  std::thread([&] {
    launch(kBusy, kStreamA);  // 1: other thread
    launch(kBusy, kStreamA);  // 2: other thread, after its 1
    other = current_thread_id();
  }).join();
  launch(kQuiet, kStreamA);  // 3: main thread
  ASSERT_NE(other, current_thread_id());
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(3, 1)) << "0 completed; 2 waits for 1 on its thread";
  ASSERT_EQ(f.candidates.size(), 2u);
  EXPECT_EQ(f.candidates[0].thread, current_thread_id());
  EXPECT_EQ(f.candidates[1].thread, other);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("one of 2 launches (the first unfinished launch of each launching thread on "
                                  "1 stream)"));
  EXPECT_THAT(f.reason, HasSubstr("the oldest is shown, not claimed"));
}

// The same, with the other thread's first unfinished launch running the kernel the device's line names: of the two
// candidates only it fits, so it is likely. The other thread's later label_kernel launch fits too but cannot have run.
TEST_F(Culprit, TwoThreadsOnOneStreamAndALineThatFitsOneOfThemIsLikely) {
  launch(kQuiet, kStreamA);  // 0: main thread, completed
  std::thread([&] {
    launch(kLabel, kStreamA);  // 1: other thread
    launch(kLabel, kStreamA);  // 2: other thread
  }).join();
  launch(kQuiet, kStreamA);  // 3: main thread
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(3, 1));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 1u);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("2 launches (the first unfinished launch of each launching thread on 1 stream)"));
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel"));
  ASSERT_TRUE(f.culprit_message.has_value());
  EXPECT_STREQ(f.culprit_message->function, "label_kernel");
}

// ---- Launch calls that did not overlap: in stream order, whichever thread made them ---------------------------

// The plain training loop: the main thread queues the forward pass, autograd's thread the backward pass, on one
// stream, taking turns (neither launches while the other's call is running). The main thread's loss kernel (1) did
// not complete; the backward pass's launches (2, 3) were queued after its call, and with it its breadcrumb, had
// returned, so they wait behind that breadcrumb, which never ran: only 1 can have failed, and the reason says what
// ordered them.
TEST_F(Culprit, TwoThreadsTakingTurnsOnOneStreamAreInStreamOrder) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: forward, completed
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 1: the loss, did not complete
  std::thread([&] {
    test::queued(t, test::kernel_launch(kBusy, kStreamA));  // 2: backward
    test::queued(t, test::kernel_launch(kBusy, kStreamA));  // 3: backward
  }).join();
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 4: the optimizer, main thread again
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  expect_exact(f, 1);
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs: every launch before this one on stream 0x5000a0 completed"));
  EXPECT_THAT(f.reason, HasSubstr("1 launch cannot have run: each call began after the call of an unfinished launch "
                                  "on the same stream had returned"));
}

// A pair given back and its slot used again (a stream made, used and destroyed meanwhile) says its launches, all
// numbered below some seq, completed: that says nothing of the launches of pairs still followed, whose own slots do.
// The loss kernel (1) still holds back the other thread's launch (2).
TEST_F(Culprit, AGivenBackPairSaysNothingOfTheFollowedPairsLaunches) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: completed
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 1: did not complete
  int32_t other = 0;
  std::thread([&] {
    test::queued(t, test::kernel_launch(kBusy, kStreamA));  // 2
    other = current_thread_id();
  }).join();
  int32_t main_thread = current_thread_id();
  t.set_progress_probe([&]() -> std::optional<StreamProgressView> {
    StreamProgressView view;
    view.pairs.push_back({kStreamA, main_thread, 1, 2, 0, StreamProgress::kLive});
    view.pairs.push_back({kStreamA, other, 1, 3, 0, StreamProgress::kLive});
    view.unlisted_complete_before = 3;  // a pair given back, whose launches were numbered below 3
    return view;
  });
  fault();
  expect_exact(t.findings(), 1);
}

// The same with the other thread's launch first: its call returned before the main thread's began.
TEST_F(Culprit, TheOtherThreadsEarlierLaunchIsTheOneThatRan) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: completed
  std::thread([&] { test::queued(t, test::kernel_launch(kBusy, kStreamA)); }).join();  // 1: did not complete
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 2
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 3
  breadcrumbs({{kStreamA, 1}});
  fault();
  expect_exact(t.findings(), 1);
}

// Calls that overlapped in time (each began before the other had returned) are queued in an order nothing records:
// both stay candidates, as when nothing ordered them. A launch whose call began after both had returned is behind
// both breadcrumbs.
TEST_F(Culprit, LaunchCallsThatOverlappedStayUnordered) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: completed
  test::LaunchCall main_call(t, test::kernel_launch(kQuiet, kStreamA));
  test::LaunchCall other_call(t, test::kernel_launch(kBusy, kStreamA));
  uint64_t main_seq = main_call.end();  // 1
  uint64_t other_seq = 0;
  std::thread([&] { other_seq = other_call.end(); }).join();  // 2
  std::thread([&] { test::queued(t, test::kernel_launch(kQuiet, kStreamA)); }).join();  // 3: a third thread, after both
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(other_seq, main_seq));
  EXPECT_STREQ(f.confidence, "window");
  EXPECT_THAT(f.reason, HasSubstr("one of 2 launches"));
  EXPECT_THAT(f.reason, HasSubstr("1 launch cannot have run")) << "3 is behind them both";
}

// A launch followed by no breadcrumb (FIRSTASSERT_SYNC synchronized it instead) orders nothing: a launch whose call
// began after it returned may have run once it completed, which nothing recorded (its sync did not return).
TEST_F(Culprit, ALaunchWithoutABreadcrumbOrdersNothing) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));                 // 0: completed
  test::LaunchCall(t, test::kernel_launch(kQuiet, kStreamA)).end(false);  // 1: no breadcrumb
  std::thread([&] { test::queued(t, test::kernel_launch(kBusy, kStreamA)); }).join();  // 2
  breadcrumbs({{kStreamA, 1}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 1));
  EXPECT_STREQ(f.confidence, "window");
}

// A launch call whose beginning was not seen (the queue marks unknown) is behind nothing; one that completed orders
// nothing either: only an unfinished launch's breadcrumb holds back what follows it.
TEST_F(Culprit, OnlyAnUnfinishedLaunchHoldsBackTheCallsAfterIt) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: completed
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 1: completed
  std::thread([&] { test::queued(t, test::kernel_launch(kBusy, kStreamA)); }).join();  // 2: after 1, not held back
  breadcrumbs({{kStreamA, 2}});
  fault();
  expect_exact(t.findings(), 2);
  Tracker unseen{64};
  test::queued(unseen, test::kernel_launch(kQuiet, kStreamA));  // 0: did not complete
  std::thread([&] {
    LaunchEvent e = test::kernel_launch(kBusy, kStreamA);  // 1: its call's beginning unknown
    unseen.number_launch(e);
    unseen.store_launch(e, true);
  }).join();
  test::breadcrumbs(unseen, {{kStreamA, 0}});
  unseen.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = unseen.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
}

// Launches on different streams are never ordered by their calls: each stream runs on its own.
TEST_F(Culprit, CallsOrderOnlyTheLaunchesOfOneStream) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: did not complete
  std::thread([&] { test::queued(t, test::kernel_launch(kBusy, kStreamB)); }).join();  // 1: did not complete
  breadcrumbs({{kStreamA, 0}, {kStreamB, 0}});
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  EXPECT_STREQ(f.confidence, "window");
}

// A deep queue: 300 launches on one stream, the breadcrumbs say the first 10 completed. Launch 10 is the only one
// that can have failed however far it lies behind the newest (further than the 64 candidates a report lists), as
// long as the ring still holds it.
TEST_F(Culprit, ADeepQueueIsExactOnItsFirstUnfinishedLaunch) {
  Tracker deep{512};
  for (int i = 0; i < 300; ++i) test::accepted(deep, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  test::breadcrumbs(deep, {{kStreamA, 10}});
  deep.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = deep.findings();
  EXPECT_EQ(f.launches_recorded, 300u);
  EXPECT_THAT(seqs(f.candidates), ElementsAre(10));
  EXPECT_EQ(f.candidates_total, 1u);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 10u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs: every launch before this one on stream 0x5000a0 completed"));
}

// ---- Events and stream waits ---------------------------------------------------------------------------------

constexpr uintptr_t kEvent = 0xe1;

// An event's record or a wait on it, as the event sources report its return; a record carries the queue marks when
// its call began (launches queued before it).
ApiCall event_call(Tracker& t, CallKind kind, uintptr_t stream) {
  const char* api = kind == CallKind::record_event ? "cudaEventRecord" : "cudaStreamWaitEvent";
  ApiCall c = test::call_of(api, 0, kind, stream);
  c.event = kEvent;
  if (kind == CallKind::record_event) c.marks_at_entry = t.queue_marks();
  return c;
}

// B waited on an event recorded on A after A's launch 0, which its breadcrumbs show unfinished: B's launch never
// started, so A's launch alone can have failed.
TEST_F(Culprit, ALaunchThatWaitedOnAnUnfinishedLaunchsEventIsSetAside) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));         // 0: unfinished
  t.record_call(event_call(t, CallKind::record_event, kStreamA));  // stands for launch 0
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));  // 1: waits for launch 0
  breadcrumbs({{kStreamA, 0}, {kStreamB, 0}});
  fault();
  Findings f = t.findings();
  expect_exact(f, 0);
  EXPECT_THAT(f.reason, HasSubstr("1 launch on other streams waited (through an event) on unfinished work"));
}

// The same with each call on a thread of its own, one after another (a data-loading thread records, the training
// thread waits and launches): the calls order them as one thread's would.
TEST_F(Culprit, AnEventRecordedAndWaitedOnByOtherThreadsInTurnSetsTheWaitingLaunchAside) {
  std::thread([&] { test::queued(t, test::kernel_launch(kQuiet, kStreamA)); }).join();  // 0: unfinished
  std::thread([&] { t.record_call(event_call(t, CallKind::record_event, kStreamA)); }).join();
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));  // 1
  breadcrumbs({{kStreamA, 0}, {kStreamB, 0}});
  fault();
  expect_exact(t.findings(), 0);
}

// Launches 0 on A and 1 on B, both shown unfinished by the breadcrumbs: nothing set aside leaves the window of both.
void expect_both_candidates(Tracker& t) {
  test::breadcrumbs(t, {{kStreamA, 0}, {kStreamB, 0}});
  t.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  EXPECT_STREQ(f.confidence, "window");
}

// The event was recorded before launch 0: it stands for nothing unfinished, and B's launch may have run.
TEST_F(Culprit, AWaitOnAnEventRecordedBeforeTheUnfinishedLaunchSetsNothingAside) {
  t.record_call(event_call(t, CallKind::record_event, kStreamA));
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: unfinished, after the record
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));  // 1
  expect_both_candidates(t);
}

// The record's call began while launch 0's call was still running (another thread): the record may have reached
// stream A before launch 0's breadcrumb, so launch 0 may have completed and B's launch run. Nothing is set aside.
TEST_F(Culprit, AnEventRecordedWhileTheLaunchsCallRanSetsNothingAside) {
  test::LaunchCall launch0(t, test::kernel_launch(kQuiet, kStreamA));
  ApiCall record = event_call(t, CallKind::record_event, kStreamA);  // began before launch 0's call returned
  launch0.end();                                                     // 0
  std::thread([&] { t.record_call(record); }).join();
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));  // 1
  expect_both_candidates(t);
}

// The waiting launch's call began before the wait's had returned: it may be queued ahead of the wait.
TEST_F(Culprit, ALaunchWhoseCallBeganBeforeTheWaitReturnedIsNotSetAside) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));  // 0: unfinished
  t.record_call(event_call(t, CallKind::record_event, kStreamA));
  test::LaunchCall launch1(t, test::kernel_launch(kBusy, kStreamB));  // began before the wait returned
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  launch1.end();  // 1
  expect_both_candidates(t);
}

// Without breadcrumbs nothing shows launch 0 unfinished (only not seen to complete): nothing is set aside.
TEST_F(Culprit, WithoutBreadcrumbsAWaitSetsNothingAside) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));
  t.record_call(event_call(t, CallKind::record_event, kStreamA));
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  EXPECT_STREQ(f.confidence, "window");
}

// The same event destroyed before the wait (its handle made again for an event never recorded): CUDA's wait then
// waits for nothing, and B's launch may have run.
TEST_F(Culprit, AWaitOnADestroyedEventSetsNothingAside) {
  test::queued(t, test::kernel_launch(kQuiet, kStreamA));         // 0: unfinished
  t.record_call(event_call(t, CallKind::record_event, kStreamA));  // stands for launch 0
  t.record_call(event_call(t, CallKind::destroy_event, kStreamA));
  t.record_call(event_call(t, CallKind::wait_event, kStreamB));
  test::queued(t, test::kernel_launch(kBusy, kStreamB));  // 1
  expect_both_candidates(t);
}

// ---- Default streams of several devices -----------------------------------------------------------------------

// One thread launches onto the legacy stream of two devices: their launches share a stream key, and a breadcrumb
// written on device 1 says nothing of device 0's stream. Device 0's launch 0 asserts while device 1's launch 2 ran;
// the breadcrumb slot of the key says launches below 3 completed. Nothing may be claimed from it: every launch of
// device 0 not proven by a sync can have failed.
LaunchEvent on_context(const char* kernel, uintptr_t context) {
  LaunchEvent e = test::kernel_launch(kernel, 0);
  e.context = context;
  return e;
}

TEST_F(Culprit, TheLegacyStreamsOfTwoDevicesAreNotOneStream) {
  constexpr uintptr_t kDevice0 = 0xc0, kDevice1 = 0xc1;
  test::accepted(t, on_context(kLabel, kDevice0), "cudaLaunchKernel");  // 0: asserts
  test::accepted(t, on_context(kBusy, kDevice0), "cudaLaunchKernel");   // 1: behind it
  test::accepted(t, on_context(kQuiet, kDevice1), "cudaLaunchKernel");  // 2: ran, wrote 3 into the key's slot
  test::accepted(t, on_context(kQuiet, kDevice0), "cudaLaunchKernel");  // 3
  breadcrumbs({{0, 3}});
  ApiCall sync = test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0);
  sync.context = kDevice0;
  t.record_call(sync);
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(3, 1, 0)) << "device 0's launches, none proven complete";
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 0u);
  EXPECT_STREQ(f.confidence, "likely") << f.reason;  // only launch 0 runs label_kernel
}

// A sync of device 1's legacy stream proves nothing of device 0's.
TEST_F(Culprit, ASyncOfOneDevicesLegacyStreamProvesNothingOfAnothers) {
  constexpr uintptr_t kDevice0 = 0xc0, kDevice1 = 0xc1;
  test::accepted(t, on_context(kQuiet, kDevice0), "cudaLaunchKernel");  // 0: asserts
  test::accepted(t, on_context(kQuiet, kDevice1), "cudaLaunchKernel");  // 1
  ApiCall sync = test::call_of("cudaStreamSynchronize", 0, CallKind::sync_stream, 0);
  sync.context = kDevice1;
  sync.launches_at_entry = t.launch_count();
  t.record_call(sync);
  test::accepted(t, on_context(kBusy, kDevice0), "cudaLaunchKernel");  // 2
  ApiCall fault = test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0);
  fault.context = kDevice0;
  t.record_call(fault);
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(2, 0));
  EXPECT_STREQ(f.confidence, "window");
}

// ---- Launches numbered after the error was seen ------------------------------------------------------------------

// Thread B's launch was queued before the fault but numbered only after thread A's sync saw the error (a launch is
// numbered once its call returned): it is a candidate, and nothing is claimed of the launch the breadcrumbs leave.
TEST_F(Culprit, ALaunchNumberedAfterTheErrorWasSeenIsACandidate) {
  launch(kQuiet, kStreamA);  // 0: A's long innocent kernel
  breadcrumbs({{kStreamA, 0}, {kStreamB, 0}});
  fault();  // A's sync sees B's kernel's assert
  uint64_t late = 0;
  std::thread([&] { late = test::accepted(t, test::kernel_launch(kBusy, kStreamB), "cudaLaunchKernel"); }).join();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(late, 0));
  EXPECT_STREQ(f.confidence, "window") << f.reason;
}

// ---- The launch ring ------------------------------------------------------------------------------------------

// A ring of 16 and 20 launches on one stream: launches 0-3 are gone. The breadcrumbs say launches below 2 completed,
// so the stream's first unfinished launch is 2 or 3 (or, were those on another stream, 4): the ring no longer holds
// what may have failed, and nothing can be named. The launch of the stream the ring still holds is listed as one
// that may have failed.
TEST_F(Culprit, AFirstUnfinishedLaunchTheRingDroppedLeavesTheCulpritUnknown) {
  Tracker small{16};
  for (int i = 0; i < 20; ++i) test::accepted(small, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  test::breadcrumbs(small, {{kStreamA, 2}});
  small.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = small.findings();
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_FALSE(f.culprit_message.has_value());
  EXPECT_STREQ(f.confidence, "unknown");
  EXPECT_THAT(f.reason, HasSubstr("the failing launch cannot be named"));
  EXPECT_THAT(f.reason, HasSubstr("is no longer in the launch ring (it holds the last 16 launches"));
  EXPECT_THAT(f.reason, HasSubstr("FIRSTASSERT_RING"));
  EXPECT_THAT(seqs(f.candidates), ElementsAre(4));
}

// The same ring, but the breadcrumbs say launches below 5 completed: the launches the ring dropped had all completed,
// and the first unfinished one (5) is still there. Exact.
TEST_F(Culprit, LaunchesTheRingDroppedAfterTheyCompletedDoNotMatter) {
  Tracker small{16};
  for (int i = 0; i < 20; ++i) test::accepted(small, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  test::breadcrumbs(small, {{kStreamA, 5}});
  small.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = small.findings();
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 5u);
  EXPECT_STREQ(f.confidence, "exact");
  EXPECT_THAT(seqs(f.candidates), ElementsAre(5));
}

// Without breadcrumbs every launch not proven complete can have failed: launches the ring dropped unsynced leave the
// set incomplete (unknown). A device sync after them proves them complete, and the window is whole again.
TEST_F(Culprit, WithoutBreadcrumbsDroppedUnsyncedLaunchesLeaveTheCulpritUnknown) {
  Tracker small{16};
  for (int i = 0; i < 20; ++i) test::accepted(small, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  small.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = small.findings();
  EXPECT_FALSE(f.culprit.has_value());
  EXPECT_STREQ(f.confidence, "unknown");
  EXPECT_THAT(f.reason, HasSubstr("no sync proved complete the launches the launch ring no longer holds (it holds "
                                  "the last 16 launches"));
  EXPECT_EQ(f.candidates_total, 16u) << "those the ring holds (4-19) are listed";
}

TEST_F(Culprit, ADeviceSyncAfterTheDroppedLaunchesKeepsTheWindowWhole) {
  Tracker small{16};
  for (int i = 0; i < 10; ++i) test::accepted(small, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  small.record_call(test::call_of("cudaDeviceSynchronize", 0, CallKind::sync_device, 0));  // 0-9 completed
  for (int i = 0; i < 10; ++i) test::accepted(small, test::kernel_launch(kQuiet, kStreamA), "cudaLaunchKernel");
  small.record_call(test::call_of("cudaDeviceSynchronize", 710, CallKind::sync_device, 0));
  Findings f = small.findings();
  EXPECT_STREQ(f.confidence, "window") << "the ring dropped 0-3, which the sync proved complete";
  EXPECT_EQ(f.candidates_total, 10u);
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, 10u) << "the oldest of 10-19, shown";
}

// ---- Stream generations ------------------------------------------------------------------------------------------

// A stream destroyed with a launch still unfinished, and its handle handed out again: the new stream is another one.
// A sync of the new stream proves its own launches (1, 2) complete, and nothing of the old stream's launch 0.
TEST_F(Culprit, ASyncOfAStreamMadeAgainDoesNotProveTheDestroyedStreamsLaunches) {
  launch(kQuiet, kStreamA);  // 0: the first stream at this handle, never synchronized
  t.stream_ended(kStreamA, t.launch_count());  // cudaStreamDestroy, at its entry (the event source's part)
  launch(kBusy, kStreamA);  // 1: the handle made again
  launch(kBusy, kStreamA);  // 2
  ApiCall sync = test::call_of("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA);
  sync.launches_at_entry = t.launch_count();
  t.record_call(sync);
  fault();
  Findings f = t.findings();
  expect_exact(f, 0);
  EXPECT_THAT(f.reason, HasSubstr("the only launch not seen to complete when cudaDeviceSynchronize"));
}

// The other way round: a sync of the old stream, before it was destroyed, proved its launch complete, and still does
// once the handle is made again; the new stream's launch is the only one that can have failed.
TEST_F(Culprit, ASyncOfTheDestroyedStreamStillProvesItsLaunches) {
  launch(kQuiet, kStreamA);  // 0
  ApiCall sync = test::call_of("cudaStreamSynchronize", 0, CallKind::sync_stream, kStreamA);
  sync.launches_at_entry = t.launch_count();
  t.record_call(sync);
  t.stream_ended(kStreamA, t.launch_count());  // cudaStreamDestroy, at its entry
  uint64_t fresh = launch(kBusy, kStreamA);  // 1: the handle made again
  fault();
  Findings f = t.findings();
  expect_exact(f, fresh);
}

// The same with breadcrumbs, as the breadcrumb slots report them: the old stream's pair ended with its stream (at
// launch 1) and says nothing completed; the new stream's pair says all its launches (below 3) completed. A
// breadcrumb of the new stream numbered 3 must not prove the old stream's launch 0 complete.
TEST_F(Culprit, BreadcrumbsOfAStreamMadeAgainDoNotProveTheDestroyedStreamsLaunches) {
  launch(kQuiet, kStreamA);  // 0
  t.stream_ended(kStreamA, t.launch_count());  // cudaStreamDestroy, at its entry
  launch(kBusy, kStreamA);  // 1
  launch(kBusy, kStreamA);  // 2
  int32_t me = current_thread_id();
  t.set_progress_probe([me]() -> std::optional<StreamProgressView> {
    StreamProgressView view;
    view.pairs.push_back({kStreamA, me, /*completed_before=*/0, /*launched_before=*/1, /*born_at=*/0,
                          /*ended_at=*/1});
    view.pairs.push_back(
        {kStreamA, me, /*completed_before=*/3, /*launched_before=*/3, /*born_at=*/1, StreamProgress::kLive});
    return view;
  });
  fault();
  Findings f = t.findings();
  expect_exact(f, 0);
  EXPECT_THAT(f.reason, HasSubstr("stream breadcrumbs"));
}

// ---- fits_message --------------------------------------------------------------------------------------------------

DeviceMessage device_line(const char* text) {
  DeviceMessage m;
  EXPECT_TRUE(parse_device_assert(text, m)) << text;
  return m;
}

LaunchRecord launch_record(const char* kernel, Dim3 grid, Dim3 block) {
  LaunchRecord r;
  r.kernel = kernel;
  r.grid = grid;
  r.block = block;
  return r;
}

// A line fits a launch of the function it names whose grid holds the line's block and whose block holds its thread,
// in each dimension.
TEST(FitsMessage, TheLinesBlockAndThreadMustLieWithinTheLaunch) {
  DeviceMessage label =
      device_line("train.cu:42: label_kernel: block: [1,0,0], thread: [5,0,0] Assertion `label < n_classes` failed.");
  EXPECT_TRUE(fits_message(launch_record(kLabel, {2, 1, 1}, {8, 1, 1}), label));
  EXPECT_FALSE(fits_message(launch_record(kLabel, {1, 1, 1}, {8, 1, 1}), label)) << "block 1 of a grid of 1";
  EXPECT_FALSE(fits_message(launch_record(kLabel, {2, 1, 1}, {5, 1, 1}), label)) << "thread 5 of a block of 5";
  EXPECT_TRUE(fits_message(launch_record(kLabel, {2, 1, 1}, {6, 1, 1}), label));
  EXPECT_FALSE(fits_message(launch_record(kQuiet, {2, 1, 1}, {8, 1, 1}), label)) << "another function";
  EXPECT_TRUE(fits_message(launch_record(kLabel, {0, 0, 0}, {0, 0, 0}), label)) << "dimensions not known";

  DeviceMessage gather =
      device_line("gather.cu:7: gather_kernel: block: [0,2,0], thread: [1,0,0] Assertion `idx < n` failed.");
  EXPECT_FALSE(fits_message(launch_record(kGather, {4, 2, 1}, {2, 1, 1}), gather)) << "y: block 2 of 2";
  EXPECT_TRUE(fits_message(launch_record(kGather, {1, 3, 1}, {2, 1, 1}), gather));
  DeviceMessage deep = device_line("k.cu:1: gather_kernel: block: [0,0,1], thread: [0,0,3] Assertion `z` failed.");
  EXPECT_FALSE(fits_message(launch_record(kGather, {1, 1, 1}, {1, 1, 4}), deep)) << "z: block 1 of 1";
  EXPECT_FALSE(fits_message(launch_record(kGather, {1, 1, 2}, {1, 1, 3}), deep)) << "z: thread 3 of 3";
  EXPECT_TRUE(fits_message(launch_record(kGather, {1, 1, 2}, {1, 1, 4}), deep));
}

// A line that names no kernel (operator(): the body of a lambda, as PyTorch's elementwise kernels print it) fits a
// launch of any function whose dimensions hold its block and thread.
TEST(FitsMessage, AnOperatorCallLineFitsAnyKernelWhoseDimensionsAllowIt) {
  DeviceMessage lambda = device_line(
      "IndexKernel.cu:92: operator(): block: [3,0,0], thread: [7,0,0] Assertion `index >= -sizes[i]` failed.");
  EXPECT_TRUE(fits_message(launch_record(kQuiet, {4, 1, 1}, {128, 1, 1}), lambda));
  EXPECT_TRUE(fits_message(launch_record(kBusy, {4, 1, 1}, {8, 1, 1}), lambda));
  EXPECT_FALSE(fits_message(launch_record(kQuiet, {3, 1, 1}, {128, 1, 1}), lambda)) << "block 3 of a grid of 3";
  EXPECT_FALSE(fits_message(launch_record(kQuiet, {4, 1, 1}, {7, 1, 1}), lambda)) << "thread 7 of a block of 7";
}

// Through the tracker: two launches of the function the line names, on two streams without breadcrumbs. Only the one
// whose grid holds the line's block [1,0,0] can have printed it: likely.
TEST_F(Culprit, TheLinesBlockTellsTwoLaunchesOfItsFunctionApart) {
  launch(kLabel, kStreamA, {1, 1, 1});                  // 0: a grid of one block
  uint64_t wide = launch(kLabel, kStreamB, {4, 1, 1});  // 1
  fault();
  Findings f = t.findings();
  EXPECT_THAT(seqs(f.candidates), ElementsAre(1, 0));
  ASSERT_TRUE(f.culprit.has_value());
  EXPECT_EQ(f.culprit->seq, wide);
  EXPECT_STREQ(f.confidence, "likely");
  EXPECT_THAT(f.reason, HasSubstr("only this one fits the device's assertion line (label_kernel, block [1,0,0]"));
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
