#include "sync_policy.h"

#include <functional>

#include "demangle.h"

namespace firstassert {

SyncPolicy::SyncPolicy(SyncMode mode) : mode_(std::move(mode)) {
  if (mode_.kind == SyncMode::Kind::kernel) {
    try {
      pattern_ = std::make_unique<std::regex>(mode_.kernel_regex, std::regex::ECMAScript | std::regex::optimize);
      cache_.reset(new Decision[kCache]);
    } catch (const std::exception&) {
      mode_.kind = SyncMode::Kind::off;  // parse_config already refused such patterns
    }
  }
}

bool SyncPolicy::sync_after(uint64_t seq, const char* kernel) {
  switch (mode_.kind) {
    case SyncMode::Kind::off: return false;
    case SyncMode::Kind::all: return true;
    case SyncMode::Kind::every: return (seq + 1) % mode_.every == 0;
    case SyncMode::Kind::kernel: return kernel != nullptr && matches(kernel);
  }
  return false;
}

bool SyncPolicy::matches(const char* kernel) {
  size_t start = std::hash<const void*>{}(kernel) % kCache;
  for (size_t i = 0; i < kCache; ++i) {
    const Decision& d = cache_[(start + i) % kCache];
    const char* seen = d.kernel.load(std::memory_order_acquire);
    if (seen == kernel) return d.sync.load(std::memory_order_relaxed);
    if (seen == nullptr) break;
  }
  // First launch of this kernel: decide on its demangled name, then remember.
  bool sync = false;
  try {
    sync = std::regex_search(demangle(kernel), *pattern_);
  } catch (const std::exception&) {
  }
  std::lock_guard lock(insert_mutex_);
  for (size_t i = 0; i < kCache; ++i) {
    Decision& d = cache_[(start + i) % kCache];
    const char* seen = d.kernel.load(std::memory_order_relaxed);
    if (seen == kernel) return d.sync.load();
    if (seen == nullptr) {
      d.sync.store(sync, std::memory_order_relaxed);
      d.kernel.store(kernel, std::memory_order_release);
      break;
    }
  }
  return sync;  // a full cache decides again next time: correct, only slower
}

}  // namespace firstassert
