#include "python_stack_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace firstassert {
namespace {

// Static, so only what is used is ever touched: 1.5 MB of frames and 192 KB of index at most.
constexpr size_t kPoolFrames = size_t{1} << 16;
constexpr size_t kStacks = size_t{1} << 13;
constexpr size_t kProbes = 32;  // a stack is looked for, and placed, within this many slots of its hash

struct Kept {
  std::atomic<const PythonFrame*> frames{nullptr};  // published last: count and hash are set before
  uint32_t count = 0;
  uint64_t hash = 0;
};

PythonFrame pool[kPoolFrames];
size_t pool_used = 0;  // under keep_mutex
Kept kept[kStacks];
std::mutex keep_mutex;

uint64_t hash_of(const PythonFrame* frames, size_t count) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ count;
  for (size_t i = 0; i < count; ++i) {
    for (uint64_t word : {reinterpret_cast<uintptr_t>(frames[i].file), reinterpret_cast<uintptr_t>(frames[i].function),
                          static_cast<uint64_t>(static_cast<uint32_t>(frames[i].line))}) {
      h = (h ^ word) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
  }
  return h;
}

bool same_frames(const PythonFrame* a, const PythonFrame* b, size_t count) {
  return std::equal(a, a + count, b, [](const PythonFrame& x, const PythonFrame& y) {
    return x.file == y.file && x.function == y.function && x.line == y.line;
  });
}

// The kept copy of the stack, or nullptr; then *empty is the first free slot within reach (kStacks: none).
const PythonFrame* find(const PythonFrame* frames, size_t count, uint64_t hash, size_t start, size_t* empty) {
  for (size_t i = 0; i < kProbes; ++i) {
    const size_t slot = (start + i) % kStacks;
    const Kept& k = kept[slot];
    const PythonFrame* seen = k.frames.load(std::memory_order_acquire);
    if (seen == nullptr) {
      *empty = slot;
      return nullptr;
    }
    if (k.hash == hash && k.count == count && same_frames(seen, frames, count)) return seen;
  }
  *empty = kStacks;
  return nullptr;
}

}  // namespace

const PythonFrame* lasting_python_frames(const PythonFrame* frames, size_t count) {
  if (count == 0) return nullptr;
  const uint64_t hash = hash_of(frames, count);
  const size_t start = static_cast<size_t>(hash >> 51) % kStacks;
  size_t empty = kStacks;
  if (const PythonFrame* found = find(frames, count, hash, start, &empty)) return found;
  if (empty == kStacks) return nullptr;
  std::lock_guard lock(keep_mutex);
  if (const PythonFrame* found = find(frames, count, hash, start, &empty)) return found;  // kept meanwhile
  if (empty == kStacks || pool_used + count > kPoolFrames) return nullptr;
  // Slots are filled only under the lock, so the free one found under it stays free.
  PythonFrame* copy = pool + pool_used;
  std::copy_n(frames, count, copy);
  pool_used += count;
  Kept& k = kept[empty];
  k.count = static_cast<uint32_t>(count);
  k.hash = hash;
  k.frames.store(copy, std::memory_order_release);
  return copy;
}

}  // namespace firstassert
