// FIRSTASSERT_SYNC: after which launches firstassert synchronizes the launch's stream itself, so that a failing
// kernel is caught before the program makes another call. The decision for kernel:REGEX is made once per kernel
// name (demangling and matching at its first launch) and cached; every later launch costs one lock-free probe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <regex>

#include "config.h"

namespace firstassert {

class SyncPolicy {
 public:
  explicit SyncPolicy(SyncMode mode);

  bool active() const { return mode_.kind != SyncMode::Kind::off; }
  // kernel: the interned mangled name (stable pointer), or nullptr for a graph launch.
  bool sync_after(uint64_t seq, const char* kernel);
  const SyncMode& mode() const { return mode_; }

 private:
  bool matches(const char* kernel);

  static constexpr size_t kCache = 4096;
  struct Decision {
    std::atomic<const char*> kernel{nullptr};
    std::atomic<bool> sync{false};
  };
  SyncMode mode_;
  std::unique_ptr<std::regex> pattern_;
  std::unique_ptr<Decision[]> cache_;
  std::mutex insert_mutex_;
};

}  // namespace firstassert
