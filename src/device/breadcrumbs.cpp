#include "breadcrumbs.h"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

#include "core/clock.h"
#include "core/cuda_errors.h"
#include "core/log.h"
#include "core/stream_key.h"

namespace firstassert {
namespace {

constexpr size_t kSlotsPerPage = 512;  // one 4 KiB pinned page

// One word for a (stream, thread) pair, compared in one load on the launch path (never 0: 0 marks a free slot).
uint64_t identity(uint64_t stream_key, int32_t thread) {
  uint64_t x = stream_key * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(static_cast<uint32_t>(thread)) + 1) *
                                                       0xc2b2ae3d27d4eb4full;
  x ^= x >> 31;
  return x | 1;
}

size_t home(uint64_t ident) { return (ident >> 7) % (2 * Breadcrumbs::kMaxSlots); }

bool context_lost(CUresult r) {
  return r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED;
}

// A thread that made launches gives its slots back when it ends (a thread_local's destructor runs then). Not in a
// forked child: a lost parent thread may hold the locks it would take.
struct ThreadEnd {
  Breadcrumbs* owner = nullptr;
  pid_t process = 0;
  ~ThreadEnd() {
    Breadcrumbs* ending = owner;
    owner = nullptr;  // a launch from a later destructor of this thread registers again
    if (ending != nullptr && process == getpid()) ending->thread_ended(current_thread_id());
  }
};
thread_local ThreadEnd thread_end;

}  // namespace

void Breadcrumbs::disable(const char* why) {
  if (enabled_.exchange(false)) say("stream breadcrumbs are off: %s", why);
}

Breadcrumbs::Slot* Breadcrumbs::find(uint64_t ident) const {
  for (size_t i = 0, at = home(ident); i < kIndexSize; ++i, at = (at + 1) % kIndexSize) {
    uint32_t entry = index_[at].load(std::memory_order_acquire);
    if (entry == 0) return nullptr;
    if (entry == kTombstone) continue;
    Slot* slot = const_cast<Slot*>(&slots_[entry - 1]);
    if (slot->ident.load(std::memory_order_acquire) == ident) return slot;
  }
  return nullptr;
}

void Breadcrumbs::insert_locked(uint32_t index, uint64_t ident) {
  for (size_t i = 0, at = home(ident); i < kIndexSize; ++i, at = (at + 1) % kIndexSize) {
    uint32_t entry = index_[at].load(std::memory_order_relaxed);
    if (entry != 0 && entry != kTombstone) continue;
    if (entry == kTombstone) --tombstones_;
    index_[at].store(index + 1, std::memory_order_release);
    return;
  }
}

void Breadcrumbs::remove_locked(uint64_t ident) {
  for (size_t i = 0, at = home(ident); i < kIndexSize; ++i, at = (at + 1) % kIndexSize) {
    uint32_t entry = index_[at].load(std::memory_order_relaxed);
    if (entry == 0) return;
    if (entry != kTombstone && slots_[entry - 1].ident.load(std::memory_order_relaxed) == ident) {
      index_[at].store(kTombstone, std::memory_order_release);
      ++tombstones_;
      return;
    }
  }
}

// Lookups that miss while the index is rebuilt fall to slot_for's locked path, which finds the slot again.
void Breadcrumbs::rebuild_index_locked() {
  for (auto& entry : index_) entry.store(0, std::memory_order_release);
  tombstones_ = 0;
  for (size_t i = 0; i < slots_used_; ++i) {
    const Slot& slot = slots_[i];
    if (!slot.given_back && slot.ident.load(std::memory_order_relaxed) != 0)
      insert_locked(static_cast<uint32_t>(i), slot.ident.load(std::memory_order_relaxed));
  }
}

// A slot with host memory: one given back whose writes all ran, else a new one.
Breadcrumbs::Slot* Breadcrumbs::take_slot_locked() {
  for (size_t i = 0; i < slots_used_; ++i) {
    Slot& slot = slots_[i];
    if (slot.ident.load(std::memory_order_relaxed) == 0) return &slot;
    if (slot.given_back && drained(slot)) {
      recycled_below_ = std::max(recycled_below_, slot.last_launched.load(std::memory_order_relaxed));
      slot.ident.store(0, std::memory_order_release);
      return &slot;
    }
  }
  if (slots_used_ == kMaxSlots) return nullptr;
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->mem_host_alloc == nullptr || calls->mem_host_get_device_pointer == nullptr) {
    disable("the driver offers no cuMemHostAlloc");
    return nullptr;
  }
  if (page_ == nullptr || page_used_ == kSlotsPerPage) {
    void* page = nullptr;
    CUdeviceptr device = 0;
    CUresult r = map_host_memory(*calls, kSlotsPerPage * sizeof(uint64_t), &page, &device);
    if (context_lost(r)) return nullptr;  // nothing more to follow, nothing to say
    // No context current on this thread yet (a runtime launch makes its own current inside the call): the launch's
    // exit, which has one, allocates instead.
    if (r == CUDA_ERROR_INVALID_CONTEXT) return nullptr;
    if (r != CUDA_SUCCESS) {
      char why[160];
      std::snprintf(why, sizeof why, "no host-mapped memory for them (cuMemHostAlloc/cuMemHostGetDevicePointer: %d)",
                    static_cast<int>(r));
      disable(why);
      return nullptr;
    }
    page_ = static_cast<uint64_t*>(page);
    page_device_ = device;
    page_used_ = 0;
  }
  Slot& slot = slots_[slots_used_++];
  slot.host = page_ + page_used_;
  slot.device = page_device_ + page_used_ * sizeof(uint64_t);
  ++page_used_;
  return &slot;
}

Breadcrumbs::Slot* Breadcrumbs::slot_for(uint64_t stream_key, int32_t thread, uint64_t born_by) {
  uint64_t ident = identity(stream_key, thread);
  if (Slot* slot = find(ident)) return slot;
  std::lock_guard lock(mutex_);
  if (Slot* slot = find(ident)) return slot;
  if (!enabled()) return nullptr;
  Slot* slot = take_slot_locked();
  if (slot == nullptr) {
    if (enabled() && slots_used_ == kMaxSlots) {
      char why[160];
      std::snprintf(why, sizeof why,
                    "more than %zu (stream, launching thread) pairs at once (a pair lasts until its stream is "
                    "destroyed or its thread ends)",
                    kMaxSlots);
      disable(why);
    }
    return nullptr;
  }
  if (tombstones_ > kIndexSize / 4) rebuild_index_locked();
  slot->stream_key = stream_key;
  slot->thread = thread;
  slot->given_back = false;
  slot->ended_at = StreamProgress::kLive;
  slot->born_at = std::min(born_by, launch_count_ != nullptr ? launch_count_() : 0);
  slot->last_launched.store(0, std::memory_order_relaxed);
  std::atomic_ref<uint64_t>(*slot->host).store(0, std::memory_order_release);
  slot->ident.store(ident, std::memory_order_release);
  insert_locked(static_cast<uint32_t>(slot - slots_), ident);
  if (thread == current_thread_id() && thread_end.owner == nullptr) {
    thread_end.owner = this;  // first use constructs the thread_local, whose destructor runs when the thread ends
    thread_end.process = getpid();
  }
  return slot;
}

bool Breadcrumbs::after_launch(uint64_t stream_key, int32_t thread, CUstream stream, uint64_t seq, bool write) {
  if (!enabled() || !write) return false;
  Slot* slot = slot_for(stream_key, thread, seq);
  if (slot == nullptr) return false;
  const DriverCalls* calls = driver_calls();
  if (calls->stream_write_value64 == nullptr) {
    disable("the driver offers no cuStreamWriteValue64");
    return false;
  }
  slot->last_launched.store(seq + 1, std::memory_order_relaxed);
  // seq + 1: a slot still 0 means nothing the pair launched completed yet.
  CUresult r = calls->stream_write_value64(stream, slot->device, seq + 1, 0);
  if (r != CUDA_SUCCESS && !context_lost(r)) disable("cuStreamWriteValue64 failed on this device");
  return r == CUDA_SUCCESS || is_sticky_error(r);
}

void Breadcrumbs::give_back_locked(Slot& slot, uint64_t ended_at) {
  if (!slot.given_back) remove_locked(slot.ident.load(std::memory_order_relaxed));
  slot.given_back = true;
  if (ended_at != StreamProgress::kLive && slot.ended_at == StreamProgress::kLive) slot.ended_at = ended_at;
}

void Breadcrumbs::stream_destroyed(uint64_t stream_key, uint64_t launches) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < slots_used_; ++i) {
    Slot& slot = slots_[i];
    if (slot.ident.load(std::memory_order_relaxed) != 0 && slot.stream_key == stream_key &&
        slot.ended_at == StreamProgress::kLive)
      give_back_locked(slot, launches);
  }
}

void Breadcrumbs::thread_ended(int32_t thread) {
  std::lock_guard lock(mutex_);
  // Every launch the thread made was numbered before it ended.
  uint64_t launches = launch_count_ != nullptr ? launch_count_() : StreamProgress::kLive;
  for (size_t i = 0; i < slots_used_; ++i) {
    Slot& slot = slots_[i];
    if (slot.ident.load(std::memory_order_relaxed) == 0 || slot.thread != thread || slot.given_back) continue;
    // The thread's own default stream ends with it; a shared stream lives on for other threads.
    bool own_stream = is_per_thread_stream_key(slot.stream_key);
    give_back_locked(slot, own_stream ? launches : StreamProgress::kLive);
    if (own_stream && stream_end_ != nullptr && launches != StreamProgress::kLive) stream_end_(slot.stream_key, launches);
  }
}

std::optional<StreamProgressView> Breadcrumbs::progress() const {
  if (!enabled()) return std::nullopt;
  std::lock_guard lock(mutex_);
  StreamProgressView view;
  view.unlisted_complete_before = recycled_below_;
  for (size_t i = 0; i < slots_used_; ++i) {
    const Slot& slot = slots_[i];
    if (slot.ident.load(std::memory_order_relaxed) == 0) continue;
    view.pairs.push_back({slot.stream_key, slot.thread, completed(slot), slot.last_launched.load(std::memory_order_relaxed),
                          slot.born_at, slot.ended_at});
  }
  if (!enabled()) return std::nullopt;  // turned off meanwhile: what the slots say may be stale
  return view;
}

}  // namespace firstassert
