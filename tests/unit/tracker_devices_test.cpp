// Tracker across the GPUs of one process: each context has its own sticky error, so after the first error the calls
// on other contexts are those devices' own (still working, or failed too), never secondary errors of the first; the
// findings name the devices the job used, the failing one first, and the decision says that only the failing
// context's launches were candidates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/stream_key.h"
#include "core/tracker.h"
#include "tracker_feed.h"

namespace firstassert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uintptr_t kContext0 = 0xc000;  // cuda:0's primary context
constexpr uintptr_t kContext1 = 0xc001;  // cuda:1's

DeviceIdentity identity(uintptr_t context, int32_t ordinal) {
  DeviceIdentity d;
  d.context = context;
  d.ordinal = ordinal;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-0000000" + std::to_string(ordinal) + "-aaaa-bbbb-cccc-dddddddddddd";
  d.pci_bus_id = "00000000:1" + std::to_string(ordinal) + ":00.0";
  return d;
}

uint64_t launch_on(Tracker& t, uintptr_t context, int32_t device, const char* kernel, uintptr_t stream = 0x5000) {
  LaunchEvent e = test::kernel_launch(kernel, stream);
  e.context = context;
  e.device = device;
  return test::accepted(t, e, "cudaLaunchKernel");
}

ApiCall on(uintptr_t context, const char* api, int code, CallKind kind, uintptr_t stream = 0x5000,
           int32_t device = -1) {
  ApiCall c = test::call_of(api, code, kind, stream);
  c.context = context;
  c.device = device;
  return c;
}

std::vector<uint64_t> candidates(const Tracker& t) {
  std::vector<uint64_t> seqs;
  for (const LaunchRecord& r : t.findings().candidates) seqs.push_back(r.seq);
  return seqs;
}

// Two GPUs: the probe names them in the order they were first seen (cuda:0 first).
void two_gpus(Tracker& t) {
  t.set_device_probe([] { return std::vector<DeviceIdentity>{identity(kContext0, 0), identity(kContext1, 1)}; });
}

TEST(TrackerDevices, TheFailingDeviceComesFirstWithItsIdentity) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext0, 0, "_Z7healthyv");
  uint64_t culprit = launch_on(t, kContext1, 1, "_Z6faultyv");
  t.record_call(on(kContext1, "cudaStreamSynchronize", 710, CallKind::sync_stream));
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_TRUE(f.devices[0].failed_first);
  EXPECT_EQ(f.devices[0].identity.ordinal, 1);
  EXPECT_EQ(f.devices[0].identity.uuid, identity(kContext1, 1).uuid);
  EXPECT_FALSE(f.devices[1].failed_first);
  EXPECT_EQ(f.devices[1].identity.ordinal, 0);
  ASSERT_TRUE(f.culprit);
  EXPECT_EQ(f.culprit->seq, culprit);  // cuda:0's launch, never synchronized, is not a candidate
  EXPECT_EQ(f.candidates_total, 1u);
  EXPECT_THAT(f.reason, HasSubstr("only launches made in the context that returned the error (cuda:1)"));
}

TEST(TrackerDevices, OneDeviceAddsNothingToTheReason) {
  Tracker t(64);
  t.set_device_probe([] { return std::vector<DeviceIdentity>{identity(kContext0, 0)}; });
  launch_on(t, kContext0, 0, "_Z6faultyv");
  t.record_call(on(kContext0, "cudaDeviceSynchronize", 710, CallKind::sync_device));
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_TRUE(f.devices[0].failed_first);
  EXPECT_THAT(f.reason, Not(HasSubstr("context")));
}

TEST(TrackerDevices, StickyErrorsOfAnotherContextAreThatDevicesNotSecondary) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext0, 0, "_Z6faultyv");
  launch_on(t, kContext1, 1, "_Z6faultyv");
  t.record_call(on(kContext1, "cudaStreamSynchronize", 710, CallKind::sync_stream));
  t.record_call(on(kContext1, "cudaLaunchKernel", 710, CallKind::launch));           // the failing context's: secondary
  t.record_call(on(kContext0, "cudaDeviceSynchronize", 710, CallKind::sync_device));  // cuda:0's own
  t.record_call(on(kContext0, "cudaMemcpyAsync", 710, CallKind::other));
  Findings f = t.findings();
  EXPECT_EQ(f.secondary_count, 1u);
  ASSERT_EQ(f.devices.size(), 2u);
  const AfterFirstError& other = f.devices[1].after;
  EXPECT_EQ(other.sticky_errors, 2u);
  EXPECT_EQ(other.first_api, "cudaDeviceSynchronize");
  EXPECT_EQ(other.first_code, 710);
  EXPECT_STREQ(after_state(other), "failed");
}

TEST(TrackerDevices, SyncsThatSucceedOnAnotherContextShowItStillWorks) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext1, 1, "_Z6faultyv");
  t.record_call(on(kContext1, "cudaDeviceSynchronize", 710, CallKind::sync_device));
  launch_on(t, kContext0, 0, "_Z7healthyv");
  t.record_call(on(kContext0, "cudaStreamSynchronize", 0, CallKind::sync_stream));
  t.record_call(on(kContext0, "cudaDeviceSynchronize", 0, CallKind::sync_device));
  t.record_call(on(kContext0, "cudaGetDevice", 0, CallKind::other));  // touches no work: proves nothing
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_EQ(f.devices[1].after.syncs_succeeded, 2u);
  EXPECT_STREQ(after_state(f.devices[1].after), "working");
  EXPECT_EQ(f.devices[0].after.syncs_succeeded, 0u);  // the failing one's own calls are not counted
}

// With breadcrumbs a sync that succeeds is not even recorded (they prove what it would): another device's launches
// made after the error that the breadcrumbs prove complete show it still works; its launches from before, not.
TEST(TrackerDevices, BreadcrumbsShowAnotherDeviceRanWorkAfterTheError) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext0, 0, "_Z5layerv", 0);  // 0: complete, but before the error
  launch_on(t, kContext1, 1, "_Z4lossv", 0);   // 1: faults
  t.record_call(on(kContext1, "cudaDeviceSynchronize", 710, CallKind::sync_device, 0, 1));
  launch_on(t, kContext0, 0, "_Z5layerv", 0);  // 2
  launch_on(t, kContext0, 0, "_Z5layerv", 0);  // 3: not complete yet
  const int32_t thread = current_thread_id();
  test::breadcrumbs(t, {{stream_key(0, false, thread, 0), 3}, {stream_key(0, false, thread, 1), 1}});
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_EQ(f.devices[1].after.launches_completed, 1u);
  EXPECT_STREQ(after_state(f.devices[1].after), "working");
  EXPECT_EQ(f.devices[0].after.launches_completed, 0u);
}

TEST(TrackerDevices, AnotherDeviceNotWaitedForSinceIsNotClaimedToWork) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext1, 1, "_Z6faultyv");
  launch_on(t, kContext0, 0, "_Z7healthyv");
  t.record_call(on(kContext0, "cudaDeviceSynchronize", 0, CallKind::sync_device));  // before the error: not after it
  t.record_call(on(kContext1, "cudaDeviceSynchronize", 710, CallKind::sync_device));
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_STREQ(after_state(f.devices[1].after), "not_synchronized");
}

TEST(TrackerDevices, ErrorsOfAnUnknownContextStaySecondary) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext1, 1, "_Z6faultyv");
  t.record_call(on(kContext1, "cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(on(0, "cudaGetLastError", 710, CallKind::other));  // no context current: cannot be told apart
  Findings f = t.findings();
  EXPECT_EQ(f.secondary_count, 1u);
  EXPECT_EQ(f.devices[1].after.sticky_errors, 0u);
}

TEST(TrackerDevices, AContextTheProbeDidNotNameIsStillListed) {
  Tracker t(64);
  t.set_device_probe([] { return std::vector<DeviceIdentity>{identity(kContext1, 1)}; });
  launch_on(t, kContext1, 1, "_Z6faultyv");
  t.record_call(on(kContext1, "cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(on(kContext0, "cudaDeviceSynchronize", 0, CallKind::sync_device));  // never launched on: unnamed
  Findings f = t.findings();
  ASSERT_EQ(f.devices.size(), 2u);
  EXPECT_EQ(f.devices[1].identity.context, kContext0);
  EXPECT_EQ(f.devices[1].identity.ordinal, -1);
  EXPECT_STREQ(after_state(f.devices[1].after), "working");
}

// Each context has its own legacy and per-thread default streams under the same handles: the keys tell them apart,
// and device 0's keys are those of a single-GPU process.
TEST(StreamKey, DefaultStreamsOfEachDeviceHaveTheirOwnKey) {
  const int32_t thread = 4242;
  EXPECT_EQ(stream_key(0, false, thread, 0), 0u);
  EXPECT_EQ(stream_key(0, false, thread, -1), 0u);  // a device not known: as device 0
  EXPECT_EQ(stream_key(kPerThreadStreamHandle, false, thread, 0), kPerThreadStreamHandle | (uint64_t{4242} << 32));
  std::vector<uint64_t> keys;
  for (int32_t device : {0, 1, 7}) {
    keys.push_back(stream_key(0, false, thread, device));
    keys.push_back(stream_key(kLegacyStreamHandle, false, thread, device));  // the legacy stream again
    keys.push_back(stream_key(0, true, thread, device));                     // the thread's own (_ptsz)
    keys.push_back(stream_key(0, true, thread + 1, device));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(is_default_stream_key(keys[i])) << i;
    EXPECT_EQ(is_per_thread_stream_key(keys[i]), i % 4 >= 2) << i;
    for (size_t j = 0; j < keys.size(); ++j) {
      bool same_stream = i / 4 == j / 4 && i % 4 < 2 && j % 4 < 2;  // 0 and CU_STREAM_LEGACY on one device
      if (i != j) {
        EXPECT_EQ(keys[i] == keys[j], same_stream) << i << " " << j;
      }
    }
  }
  const uintptr_t created = 0x7f3a5c001e40;  // a created stream: its handle, on any device
  EXPECT_EQ(stream_key(created, false, thread, 1), created);
  EXPECT_EQ(stream_key(created, true, thread, 1), created);
  EXPECT_FALSE(is_default_stream_key(created));
  EXPECT_FALSE(is_default_stream_key(0x7f3a00000010));  // low half small, high half not: an address
}

// A model split over two GPUs launches onto each device's legacy default stream from one thread: the breadcrumbs
// follow the two streams apart, so the failing device's unfinished launch is known exactly.
TEST(TrackerDevices, EachDevicesDefaultStreamIsFollowedApart) {
  Tracker t(64);
  two_gpus(t);
  launch_on(t, kContext0, 0, "_Z5layerv", 0);              // 0
  launch_on(t, kContext1, 1, "_Z5layerv", 0);              // 1
  launch_on(t, kContext0, 0, "_Z5layerv", 0);              // 2
  uint64_t loss = launch_on(t, kContext1, 1, "_Z4lossv", 0);  // 3: faults
  const int32_t thread = current_thread_id();
  test::breadcrumbs(t, {{stream_key(0, false, thread, 0), 3}, {stream_key(0, false, thread, 1), 2}});
  t.record_call(on(kContext1, "cudaStreamSynchronize", 710, CallKind::sync_stream, 0, 1));
  Findings f = t.findings();
  ASSERT_TRUE(f.culprit) << f.reason;
  EXPECT_EQ(f.culprit->seq, loss);
  EXPECT_STREQ(f.confidence, "exact") << f.reason;
}

// A sync of one device's default stream proves nothing of another device's default stream.
TEST(TrackerDevices, ASyncOfOneDevicesDefaultStreamLeavesTheOthers) {
  Tracker t(64);
  two_gpus(t);
  uint64_t culprit = launch_on(t, kContext1, 1, "_Z4lossv", 0);  // 0: faults on cuda:1
  launch_on(t, kContext0, 0, "_Z5layerv", 0);                    // 1
  t.record_call(on(kContext0, "cudaStreamSynchronize", 0, CallKind::sync_stream, 0, 0));
  t.record_call(on(kContext1, "cudaStreamSynchronize", 710, CallKind::sync_stream, 0, 1));
  EXPECT_THAT(candidates(t), ElementsAre(culprit));
}

}  // namespace
}  // namespace firstassert
