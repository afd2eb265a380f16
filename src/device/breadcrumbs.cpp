#include "breadcrumbs.h"

#include <cstdio>
#include <functional>

#include "core/log.h"

namespace firstassert {
namespace {

constexpr size_t kSlotsPerPage = 512;  // one 4 KiB pinned page

size_t home(uint64_t key) { return std::hash<uint64_t>{}(key) % Breadcrumbs::kMaxStreams; }

}  // namespace

void Breadcrumbs::disable(const char* why) {
  if (enabled_.exchange(false)) say("stream breadcrumbs are off: %s", why);
}

Breadcrumbs::Slot* Breadcrumbs::find(uint64_t stream_key) const {
  for (size_t i = 0, at = home(stream_key); i < kMaxStreams; ++i, at = (at + 1) % kMaxStreams) {
    uint64_t key = slots_[at].key.load(std::memory_order_acquire);
    if (key == stream_key + 1) return const_cast<Slot*>(&slots_[at]);
    if (key == 0) return nullptr;
  }
  return nullptr;
}

Breadcrumbs::Slot* Breadcrumbs::slot_for(uint64_t stream_key) {
  if (Slot* slot = find(stream_key)) return slot;
  std::lock_guard lock(grow_mutex_);
  if (Slot* slot = find(stream_key)) return slot;
  const DriverCalls* calls = driver_calls();
  if (calls == nullptr || calls->mem_host_alloc == nullptr || calls->mem_host_get_device_pointer == nullptr) {
    disable("the driver offers no cuMemHostAlloc");
    return nullptr;
  }
  if (page_ == nullptr || page_used_ == kSlotsPerPage) {
    void* page = nullptr;
    CUdeviceptr device = 0;
    CUresult r = map_host_memory(*calls, kSlotsPerPage * sizeof(uint64_t), &page, &device);
    if (r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED) {
      return nullptr;  // the context is already lost: nothing more to follow, nothing to say
    }
    if (r != CUDA_SUCCESS) {
      char why[160];
      std::snprintf(why, sizeof why, "no host-mapped memory for them (cuMemHostAlloc/cuMemHostGetDevicePointer: %d)",
                    static_cast<int>(r));
      disable(why);
      return nullptr;
    }
    page_ = static_cast<volatile uint64_t*>(page);
    page_device_ = device;
    page_used_ = 0;
  }
  for (size_t i = 0, at = home(stream_key); i < kMaxStreams; ++i, at = (at + 1) % kMaxStreams) {
    Slot& slot = slots_[at];
    if (slot.key.load(std::memory_order_relaxed) != 0) continue;
    slot.host = page_ + page_used_;
    slot.device = page_device_ + page_used_ * sizeof(uint64_t);
    *slot.host = 0;
    ++page_used_;
    slot.key.store(stream_key + 1, std::memory_order_release);
    return &slot;
  }
  disable("more streams than it can follow");
  return nullptr;
}

void Breadcrumbs::after_launch(uint64_t stream_key, CUstream stream, uint64_t seq) {
  if (!enabled()) return;
  Slot* slot = slot_for(stream_key);
  if (slot == nullptr) return;
  const DriverCalls* calls = driver_calls();
  if (calls->stream_write_value64 == nullptr) {
    disable("the driver offers no cuStreamWriteValue64");
    return;
  }
  // seq + 1: a slot still 0 means nothing on the stream completed since breadcrumbs began.
  CUresult r = calls->stream_write_value64(stream, slot->device, seq + 1, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_ASSERT && r != CUDA_ERROR_ILLEGAL_ADDRESS && r != CUDA_ERROR_LAUNCH_FAILED)
    disable("cuStreamWriteValue64 failed on this device");
}

std::optional<uint64_t> Breadcrumbs::completed_before(uint64_t stream_key) const {
  const Slot* slot = find(stream_key);
  if (slot == nullptr) return std::nullopt;
  return *slot->host;  // seq + 1 of the last launch that completed
}

}  // namespace firstassert
