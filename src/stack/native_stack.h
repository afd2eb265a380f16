// Raw native stacks: return addresses only, captured with libunwind on the launch path (no allocation, no lock; the
// per-thread unwind cache makes a warm capture cheap) or from a signal handler. Names and lines come later, when a
// report is written (symbolize.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace firstassert {

class MachineryRanges;

// Up to max_frames return addresses of the calling thread, innermost first, after skipping `skip` frames. A stack
// walked before from the same place is checked and reused instead of unwound again (stack_memo.h). With machinery,
// *cut receives how many of the frames returned are machinery frames at the top (MachineryRanges::leading, kept with
// a reused stack).
size_t capture_native_stack(uintptr_t* frames, size_t max_frames, size_t skip = 0,
                            const MachineryRanges* machinery = nullptr, size_t* cut = nullptr);

// The same, for signal handlers: async-signal-safe (local unwinding from the handler's own context).
size_t capture_native_stack_signal_safe(uintptr_t* frames, size_t max_frames, size_t skip = 0);

// Address ranges whose frames are the machinery between the program and firstassert (the shim itself, CUPTI, the
// CUDA runtime and driver): dropped from the top of captured stacks.
class MachineryRanges {
 public:
  static constexpr size_t kMaxRanges = 32;
  // Collects the executable segments of loaded objects whose file name starts with one of the prefixes, plus the
  // object holding `self`.
  void collect(const void* self);
  bool contains(uintptr_t pc) const;
  // How many of the first frames are machinery (the program's frames start there).
  size_t leading(const uintptr_t* frames, size_t count) const;

 private:
  // The range holding pc (first_try tried first), or count_.
  size_t range_of(uintptr_t pc, size_t first_try) const;

  uintptr_t low_[kMaxRanges] = {};
  uintptr_t high_[kMaxRanges] = {};
  size_t count_ = 0;
};

}  // namespace firstassert
