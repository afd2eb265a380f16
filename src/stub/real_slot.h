// Where a real CUDA entry point is kept once found, shared by the preloaded stub's hooks (stub_hooks.cpp) and the
// recorder's kernel-name lookups (interpose.cpp). Header-only, with nothing that needs the C++ runtime: the stub
// links only libc.
#pragma once

#include <atomic>

namespace firstassert {

struct RealSlot {
  std::atomic<void*> fn{nullptr};
  std::atomic<unsigned long long> missed_at{0};  // loader generation + 1 at the last failed search; 0: none
};

// The entry point kept in slot, else what find() returns, kept. A miss is remembered with the loader's generation
// (how many objects it has loaded) and not searched for again until that grows, so a name this CUDA lacks costs no
// search per call.
template <typename Find>
void* resolve_kept(RealSlot& slot, unsigned long long (*loaded_generation)(), Find&& find) {
  void* fn = slot.fn.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  unsigned long long generation = loaded_generation() + 1;
  if (slot.missed_at.load(std::memory_order_relaxed) == generation) return nullptr;
  fn = find();
  if (fn != nullptr) {
    slot.fn.store(fn, std::memory_order_release);
  } else {
    slot.missed_at.store(generation, std::memory_order_relaxed);
  }
  return fn;
}

}  // namespace firstassert
