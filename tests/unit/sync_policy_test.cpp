// SyncPolicy: which launches firstassert synchronizes after. off never, all always, every:N every Nth launch,
// kernel:REGEX the launches whose demangled name matches. The kernel decision is made once per interned name
// pointer and then only looked up, so a test can see the cache by changing the bytes behind a pointer already
// decided; graph launches (no kernel name) never match a kernel pattern.
#include "core/sync_policy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace firstassert {
namespace {

SyncMode mode(SyncMode::Kind kind, uint64_t every = 0, std::string regex = {}) {
  SyncMode m;
  m.kind = kind;
  m.every = every;
  m.kernel_regex = std::move(regex);
  return m;
}

SyncMode kernel_mode(std::string regex) { return mode(SyncMode::Kind::kernel, 0, std::move(regex)); }

TEST(SyncPolicy, OffNeverSyncs) {
  SyncPolicy p(mode(SyncMode::Kind::off));
  EXPECT_FALSE(p.active());
  for (uint64_t seq = 0; seq < 10; ++seq) EXPECT_FALSE(p.sync_after(seq, "_Z6kernelPi"));
  EXPECT_FALSE(p.sync_after(0, nullptr));
}

TEST(SyncPolicy, AllSyncsEveryLaunchGraphsIncluded) {
  SyncPolicy p(mode(SyncMode::Kind::all));
  EXPECT_TRUE(p.active());
  for (uint64_t seq = 0; seq < 10; ++seq) EXPECT_TRUE(p.sync_after(seq, "_Z6kernelPi"));
  EXPECT_TRUE(p.sync_after(10, nullptr));
}

// seq is 0-based: every:3 syncs after the 3rd, 6th, 9th launch (seq 2, 5, 8), whatever the kernel.
TEST(SyncPolicy, EveryNSyncsAfterEachNthLaunch) {
  SyncPolicy p(mode(SyncMode::Kind::every, 3));
  EXPECT_TRUE(p.active());
  std::vector<uint64_t> synced;
  for (uint64_t seq = 0; seq < 10; ++seq) {
    if (p.sync_after(seq, seq % 2 == 0 ? "_Z1av" : nullptr)) synced.push_back(seq);
  }
  EXPECT_EQ(synced, (std::vector<uint64_t>{2, 5, 8}));
}

TEST(SyncPolicy, EveryOneIsEveryLaunch) {
  SyncPolicy p(mode(SyncMode::Kind::every, 1));
  for (uint64_t seq = 0; seq < 5; ++seq) EXPECT_TRUE(p.sync_after(seq, "_Z1av"));
}

TEST(SyncPolicy, KernelPatternSearchesTheDemangledName) {
  SyncPolicy p(kernel_mode("nll_loss"));
  EXPECT_TRUE(p.active());
  EXPECT_TRUE(p.sync_after(0, "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dEPfPKl"));
  EXPECT_FALSE(p.sync_after(1, "_Z6kernelPi"));
  EXPECT_TRUE(p.sync_after(2, "triton_nll_loss_0")) << "an unmangled name is matched as it is";
}

// Matching is on what a person reads, not on the mangled symbol: "int\*" is in "kernel(int*)" and nowhere in
// "_Z6kernelPi"; "^at::native::" anchors on the demangled qualified name.
TEST(SyncPolicy, KernelPatternSeesTypesAndQualifiersNotTheMangling) {
  SyncPolicy p(kernel_mode("\\(int\\*\\)"));
  EXPECT_TRUE(p.sync_after(0, "_Z6kernelPi"));
  EXPECT_FALSE(p.sync_after(1, "_Z6kernelPf"));
  SyncPolicy anchored(kernel_mode("^at::native::"));
  EXPECT_TRUE(anchored.sync_after(0, "_ZN2at6native6reduceEPf"));
  EXPECT_FALSE(anchored.sync_after(1, "_ZN5other6native6reduceEPf"));
  SyncPolicy mangled(kernel_mode("^_Z"));
  EXPECT_FALSE(mangled.sync_after(0, "_Z6kernelPi")) << "the mangled prefix is not in the demangled name";
}

TEST(SyncPolicy, GraphLaunchesNeverMatchAKernelPattern) {
  SyncPolicy p(kernel_mode(".*"));
  EXPECT_FALSE(p.sync_after(0, nullptr));
  EXPECT_TRUE(p.sync_after(1, "_Z1av"));
}

// The decision belongs to the pointer (interned names never change): once made it is not made again, even if the
// bytes behind the pointer were to change; another pointer to the same name gets its own, equal, decision.
TEST(SyncPolicy, DecisionIsMadeOncePerNamePointer) {
  SyncPolicy p(kernel_mode("^matched"));
  char name[32];
  std::strcpy(name, "matched_kernel");
  EXPECT_TRUE(p.sync_after(0, name));
  std::strcpy(name, "other_kernel");
  EXPECT_TRUE(p.sync_after(1, name)) << "the cached decision is used, not a new match";

  char unmatched[32];
  std::strcpy(unmatched, "other_kernel");
  EXPECT_FALSE(p.sync_after(2, unmatched));
  std::strcpy(unmatched, "matched_kernel");
  EXPECT_FALSE(p.sync_after(3, unmatched)) << "a 'no' is cached too";

  char copy[32];
  std::strcpy(copy, "matched_again");
  EXPECT_TRUE(p.sync_after(4, copy)) << "a new pointer is decided on its own name";
}

// More names than the cache holds: decisions stay right (the ones that found no place are made again).
TEST(SyncPolicy, MoreNamesThanTheCacheHoldsStillDecideCorrectly) {
  SyncPolicy p(kernel_mode("_sync$"));
  constexpr size_t kNames = 5000;
  std::vector<std::string> names;
  names.reserve(kNames);
  for (size_t i = 0; i < kNames; ++i) names.push_back("kernel_" + std::to_string(i) + (i % 7 == 0 ? "_sync" : ""));
  for (int round = 0; round < 2; ++round) {
    size_t wrong = 0;
    for (size_t i = 0; i < kNames; ++i) {
      if (p.sync_after(i, names[i].c_str()) != (i % 7 == 0)) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "round " << round;
  }
}

// parse_config refuses a pattern that does not compile; a policy given one anyway does nothing rather than throw.
TEST(SyncPolicy, InvalidPatternTurnsThePolicyOff) {
  SyncPolicy p(kernel_mode("(unclosed"));
  EXPECT_FALSE(p.active());
  EXPECT_EQ(p.mode().kind, SyncMode::Kind::off);
  EXPECT_FALSE(p.sync_after(0, "_Z6kernelPi"));
}

TEST(SyncPolicy, KeepsItsMode) {
  SyncPolicy p(mode(SyncMode::Kind::every, 4));
  EXPECT_EQ(p.mode().kind, SyncMode::Kind::every);
  EXPECT_EQ(p.mode().every, 4u);
  SyncPolicy k(kernel_mode("abc"));
  EXPECT_EQ(k.mode().kernel_regex, "abc");
}

}  // namespace
}  // namespace firstassert
