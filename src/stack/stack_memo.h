// A thread's recent native stacks, so that a launch made from the same frames as an earlier one costs a check
// instead of an unwind (libunwind's walk costs about 75 instructions a frame; a training loop launches from the same
// few stacks over and over).
//
// What makes two walks the same: the unwinder computes each frame's canonical frame address (CFA) from the stack
// pointer or, in frames whose rbp points into them, possibly from rbp (a frame pointer: CFA = rbp + 16; libffi's
// call frames: rbp + 32; GCC's realigned frames: the word at rbp - 8), and reads the caller's return address from
// CFA - 8. So a walk that starts from the same CFA is repeated exactly when every return-address slot it read still
// holds the same address and, in every frame whose rbp points into it, rbp came from a slot that still holds the same
// value (and the word below rbp is the same). A memo keeps those slots, learned once with libunwind's frame-by-frame
// cursor (which tells where each value came from), and the frames; a capture checks them (a load and a compare
// each) and, on a match, copies the frames.
//
// Not learned, so always unwound: a stack with such a frame whose rbp comes from the capturing function's own frame
// (other than its frame pointer's slot) or the live register, unless the frame is this build's own (the capture's
// caller, in the recorder) and its CFA is none rbp gives (rbp + 16, rbp + 32, the word at rbp - 8: rbp is then a
// pointer to a local), a walk that ends at a frame without unwind info, and a signal frame. Not covered: a CFA rule
// that uses another register than rsp or rbp, or reads other words. Learning is rationed (one walk
// at most per kLearnEvery captures on a thread), so stacks that never repeat cost one unwind and a comparison of
// return addresses; a learning walk costs about ten unwinds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace firstassert::stack_memo {

inline constexpr size_t kMaxFrames = 128;   // as many as one capture may walk
inline constexpr size_t kMaxChecks = 2 * kMaxFrames + 2;
// Stacks kept per thread. A PyTorch training step launches from a few dozen distinct stacks on its main thread
// (scripts/torch-bench): with fewer entries, round-robin replacement evicts each before it repeats and nearly every
// launch is unwound. About 5 KB an entry, so 170 KB for each thread that launches.
inline constexpr size_t kEntries = 32;
inline constexpr unsigned kLearnEvery = 64;     // captures on a thread between two learning walks, at least
inline constexpr unsigned kMaxRelearning = 4;   // learning walks of one entry whose checks keep failing

// A value the walk depended on: the word at address was value.
struct Check {
  uintptr_t address;
  uintptr_t value;
};

struct Entry {
  uintptr_t cfa = 0;         // the capturing function's CFA when the walk was made (0: entry unused)
  size_t request = 0;        // frames asked for
  size_t skip = 0;           // of them, skipped (the machinery cut is of what is left)
  size_t count = 0;          // frames found
  const void* machinery = nullptr;  // the ranges cut was worked out with
  size_t cut = 0;                   // machinery frames at the top of frames
  bool learned = false;      // checks below are valid
  bool unlearnable = false;  // a walk of these frames cannot be checked (a signal frame, a cursor that disagreed)
  unsigned relearned = 0;
  size_t check_count = 0;
  uintptr_t frames[kMaxFrames];
  Check checks[kMaxChecks];

  // Made by a capture from the same place asking for the same frames (what a memo entry is found by).
  bool same_place(uintptr_t at_cfa, size_t frames_asked, size_t frames_skipped, const void* cut_with) const {
    return cfa == at_cfa && request == frames_asked && skip == frames_skipped && machinery == cut_with;
  }
};

struct ThreadMemo {
  Entry entries[kEntries];
  unsigned next_victim = 0;         // round-robin replacement
  unsigned last_found = 0;
  uint64_t reused = 0;              // captures answered from the memo (for tests and benchmarks)
  unsigned since_learning = kLearnEvery;
  bool walking = false;             // re-entry (a signal handler capturing mid-capture) goes straight to libunwind
};

// The calling thread's memo, allocated on its first capture (freed when the thread exits); nullptr when memory is
// short (captures then always unwind).
ThreadMemo* this_thread();
// Captures on this thread answered from its memo so far.
uint64_t reused_on_this_thread();

inline bool holds(const Entry& e, uintptr_t cfa, size_t request, size_t skip, const void* machinery) {
  if (!e.learned || !e.same_place(cfa, request, skip, machinery)) return false;
  const Check* c = e.checks;
  const Check* end = c + e.check_count;
  while (c != end && *reinterpret_cast<const volatile uintptr_t*>(c->address) == c->value) ++c;
  return c == end;
}

// The entry whose checks all hold for a capture from cfa asking for request frames, or nullptr. The last one found
// is tried first: launches come in runs from one place.
inline const Entry* find(ThreadMemo& memo, uintptr_t cfa, size_t request, size_t skip, const void* machinery) {
  if (holds(memo.entries[memo.last_found], cfa, request, skip, machinery)) return &memo.entries[memo.last_found];
  for (unsigned i = 0; i < kEntries; ++i) {
    if (i != memo.last_found && holds(memo.entries[i], cfa, request, skip, machinery)) {
      memo.last_found = i;
      return &memo.entries[i];
    }
  }
  return nullptr;
}

}  // namespace firstassert::stack_memo
