#include "cupti_call_marks.h"

namespace firstassert::source {

namespace detail {
std::atomic<unsigned> cupti_subscription{1};
std::atomic<unsigned> no_cupti_call{0};
constinit FIRSTASSERT_FAST_TLS thread_local std::atomic<unsigned>* cupti_call_mark = &no_cupti_call;
}  // namespace detail

namespace {

// Lent and given back without a lock: a forked child may exit while its parent's other threads held one.
constexpr size_t kMarkSlots = 1024;
struct MarkSlot {
  std::atomic<bool> lent{false};
  std::atomic<unsigned> mark{0};
};
MarkSlot mark_slots[kMarkSlots];
// A thread beyond the table keeps its mark here, where only it reads it.
constinit FIRSTASSERT_FAST_TLS thread_local std::atomic<unsigned> own_cupti_call_mark{0};

// Gives the thread's slot back when it exits: a thread_local with a destructor, touched only when the slot is lent.
struct MarkSlotReturn {
  MarkSlot* slot = nullptr;
  ~MarkSlotReturn() {
    if (slot == nullptr) return;
    detail::cupti_call_mark = &own_cupti_call_mark;  // a call made by a later destructor of this thread
    slot->mark.store(0, std::memory_order_release);
    slot->lent.store(false, std::memory_order_release);
  }
};

}  // namespace

void lend_cupti_call_mark() {
  using detail::cupti_call_mark;
  cupti_call_mark = &own_cupti_call_mark;
  for (MarkSlot& slot : mark_slots) {
    bool lent = false;
    if (slot.lent.load(std::memory_order_relaxed) || !slot.lent.compare_exchange_strong(lent, true)) continue;
    slot.mark.store(0, std::memory_order_relaxed);
    static thread_local MarkSlotReturn give_back_at_exit;
    give_back_at_exit.slot = &slot;
    cupti_call_mark = &slot.mark;
    return;
  }
}

size_t open_cupti_calls(unsigned subscription) {
  size_t open = 0;
  for (const MarkSlot& slot : mark_slots) {
    if (slot.lent.load(std::memory_order_acquire) && slot.mark.load(std::memory_order_acquire) == subscription) ++open;
  }
  return open;
}
void cupti_subscription_ended() { detail::cupti_subscription.fetch_add(1, std::memory_order_relaxed); }

}  // namespace firstassert::source
