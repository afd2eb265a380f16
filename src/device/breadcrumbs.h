// Stream breadcrumbs: after each recorded launch, the driver is asked to write the launch's sequence number into a
// host-mapped slot, ordered after the launch (cuStreamWriteValue64). A slot's value is therefore the last launch on
// its stream that completed, readable by the CPU after the device has faulted, when nothing else can be asked of the
// GPU.
//
// A slot follows one (stream, launching thread) pair, not a stream: two threads launching onto one stream (PyTorch's
// autograd thread and the main thread share the current stream) take their sequence numbers after their launches
// were queued, so their writes can reach the stream in another order than their numbers, and one shared slot could
// go backwards. Each thread's own writes are in order, and any write that ran proves every launch on its stream
// numbered below it complete (that launch was queued before the number was taken, hence before the write).
//
// Slots live as long as what they follow: a destroyed stream's slots end its generation (a handle the driver hands
// out again is a new stream), a thread that ends gives its slots back, and a slot given back is used again once
// every write queued to it ran. At most kMaxSlots live pairs (a pair lives from its first launch until its stream is
// destroyed or its thread ends, and until its writes ran); past that breadcrumbs go off with one line. After warm-up a launch costs two lock-free lookups and one driver call.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include "core/stream_progress.h"
#include "driver_calls.h"

namespace firstassert {

class Breadcrumbs {
 public:
  // A pair lives as long as its stream and thread: a server's thread pool times its stream pool can reach thousands.
  static constexpr size_t kMaxSlots = 16384;

  // Before a launch is queued: the pair's slot exists (its first launch allocates it, while the context is still
  // healthy even if that very kernel is about to fault).
  void before_launch(uint64_t stream_key, int32_t thread) {
    if (enabled()) (void)slot_for(stream_key, thread, ~uint64_t{0});
  }
  // After a launch was numbered (not while its stream is capturing). write is false when the launch is synchronized
  // at once instead (FIRSTASSERT_SYNC): that sync's result says whether it completed. Turns itself off, with one
  // line, when the driver cannot write. Returns whether the launches queued after this call returns lie behind this
  // one on its stream: the driver queued the write (they lie behind it, too), or refused it with a sticky error (the
  // context was lost before: none of them will run).
  bool after_launch(uint64_t stream_key, int32_t thread, CUstream stream, uint64_t seq, bool write);
  // The stream was destroyed when `launches` launches had been recorded: its slots end their generation.
  void stream_destroyed(uint64_t stream_key, uint64_t launches);
  // How many launches were recorded so far (Tracker::launch_count): when a thread ends, in launch terms.
  void set_launch_count(uint64_t (*count)()) { launch_count_ = count; }
  // Told when a thread's own default stream ends with its thread (the key, the launch count then).
  void on_stream_end(void (*ended)(uint64_t stream_key, uint64_t at)) { stream_end_ = ended; }
  // The thread ended: its slots are given back (and its per-thread default stream's generation ends).
  void thread_ended(int32_t thread);

  // What the slots say now (the decision's evidence); nullopt while off or once turned off.
  std::optional<StreamProgressView> progress() const;
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void disable(const char* why);

 private:
  struct Slot {
    std::atomic<uint64_t> ident{0};  // identity of the (stream, thread) pair followed (0: free)
    uint64_t stream_key = 0;
    int32_t thread = 0;
    bool given_back = false;  // no launch will use it again (its thread ended or its stream was destroyed)
    std::atomic<uint64_t> last_launched{0};  // seq + 1 of the pair's last launch followed by a write
    uint64_t ended_at = StreamProgress::kLive;
    uint64_t born_at = 0;
    uint64_t* host = nullptr;  // seq + 1 of the pair's last launch whose write ran (the device writes it)
    CUdeviceptr device = 0;
  };
  static constexpr size_t kIndexSize = 2 * kMaxSlots;     // open addressing, at most half full of live slots
  static constexpr uint32_t kTombstone = ~uint32_t{0};     // an entry whose slot was given back

  // born_by: the seq of the launch it is made for, when that launch has one already.
  Slot* slot_for(uint64_t stream_key, int32_t thread, uint64_t born_by);
  Slot* find(uint64_t ident) const;
  Slot* take_slot_locked();
  void insert_locked(uint32_t index, uint64_t ident);
  void remove_locked(uint64_t ident);
  void give_back_locked(Slot& slot, uint64_t ended_at);
  void rebuild_index_locked();
  // The device writes a slot while the host reads it: an atomic load (a plain move on x86-64).
  static uint64_t completed(const Slot& slot) { return std::atomic_ref<uint64_t>(*slot.host).load(std::memory_order_acquire); }
  static bool drained(const Slot& slot) { return completed(slot) >= slot.last_launched.load(std::memory_order_relaxed); }

  std::atomic<bool> enabled_{true};
  uint64_t (*launch_count_)() = nullptr;
  void (*stream_end_)(uint64_t, uint64_t) = nullptr;
  mutable std::mutex mutex_;  // a pair's first launch, stream and thread ends, and reading the progress
  Slot slots_[kMaxSlots];
  size_t slots_used_ = 0;      // slots_[0, slots_used_) have host memory
  std::atomic<uint32_t> index_[kIndexSize] = {};  // slot + 1, 0 (empty) or kTombstone
  size_t tombstones_ = 0;
  uint64_t recycled_below_ = 0;  // every launch of a slot used again has a seq below this
  uint64_t* page_ = nullptr;  // current pinned page and its device address
  CUdeviceptr page_device_ = 0;
  size_t page_used_ = 0;
};

}  // namespace firstassert
