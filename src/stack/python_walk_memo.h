// What a thread remembers of its Python frame walks, so that a warm capture resolves nothing: each frame as a walk
// found it (Step, by frame address), and whole stacks (WalkedStack, CPython 3.11+, under python_code_epoch), found
// again by frame addresses and instructions alone. One WalkMemo per thread (core/thread_block.h), made by its first
// walk. Inline: the warm capture is these checks and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"
#include "python_code_names.h"
#include "python_frames.h"
#include "python_interpreter.h"

namespace firstassert::python {

// The thread's frames as its last walks found them, by frame address: a frame whose code object, current instruction
// and owner are those it had then, with the code object still the one its names were read from, gives the same
// frame without resolving it again (a loop launches from the same Python stack over and over, and a frame sits at
// the same address in the thread's frame stack as long as it lives: the outer frames of a training step are found
// again whatever was called inside them).
constexpr size_t kMemoSteps = 256;  // direct-mapped by frame address
static_assert((kMemoSteps & (kMemoSteps - 1)) == 0, "indexed by a mask");
struct Step {
  const void* frame;
  const void* code;
  uint64_t instruction;
  int owner;
  const CodeNames* names;  // nullptr: the step gave no frame
  PythonFrame found;       // what it gave, copied out as it is
};

// Whole stacks as walks found them (CPython 3.11+, under python_code_epoch): keyed by the innermost frame and its
// instruction, checked frame by frame by address and instruction alone (while no code object has been freed, an
// instruction pointer names its code object: two live code objects cannot overlap), and their frames handed out as
// they are. A stack whose walk took more steps than kStackSteps is not kept.
constexpr size_t kStacks = 16;
constexpr size_t kStackSteps = 48;
// Ends a kept stack's steps: no frame is at an odd address, so no frame is taken for it (nullptr, the end of a
// thread's frames, is not).
const void* const kNoFrame = reinterpret_cast<const void*>(uintptr_t{1});
struct WalkedAt {  // one step of a kept stack
  const void* frame;
  uint64_t instruction;
};
struct WalkedStackFields {
  uint64_t epoch;         // python_code_epoch when walked; 0: empty
  size_t max_frames;      // what the walk was asked for
  const void* end;        // the frame the walk stopped at (nullptr: the outermost was walked)
  const WalkedAt* last;   // at[steps], the kNoFrame after the last step
  PythonStack found;      // what finding it again returns: its frames kept for good (lasting), else in frames
  WalkedAt at[kStackSteps + 1];  // each step's frame and instruction, checked again in order
  PythonFrame frames[kMaxPythonFrames];
};
// A power of two in size, so that finding one by its key is a shift.
constexpr size_t kWalkedStackSize = 2048;
static_assert(sizeof(WalkedStackFields) <= kWalkedStackSize);
struct WalkedStack : WalkedStackFields {
  char padding[kWalkedStackSize - sizeof(WalkedStackFields)];
};

// Where a stack is kept: by its innermost frame and instruction (frames are 16-byte aligned and at least 48 bytes
// apart, instructions 2-byte aligned: the bits above those tell a thread's launch sites apart).
inline size_t stack_key(const void* frame, uint64_t instruction) {
  return ((reinterpret_cast<uintptr_t>(frame) >> 4) ^ (instruction >> 1)) & (kStacks - 1);
}

struct WalkMemo {
  Step steps[kMemoSteps];
  WalkedStack stacks[kStacks];
};

// The step remembered for frame (its slot: it may hold another frame's); nullptr without a memo.
inline Step* memo_step(WalkMemo* memo, const void* frame) {
  // Frames are 16-byte aligned and at least 48 bytes apart: the next bits tell a stack's frames apart.
  return memo != nullptr ? &memo->steps[(reinterpret_cast<uintptr_t>(frame) >> 4) & (kMemoSteps - 1)] : nullptr;
}

// A walk's frames and instructions, as it takes them, for a WalkedStack; nothing for layouts without code watchers.
struct StepTrail {
  WalkedStack* stack;
  size_t steps = 0;
  void add(const void* frame, uint64_t instruction) {
    if (steps < kStackSteps) stack->at[steps] = {frame, instruction};
    ++steps;
  }
};

// Whether the thread's stack from frame is the one walked: every frame where it was, at the same instruction. The
// steps end at kNoFrame, which no frame matches, so that each step is two compares and a load, with no count.
inline bool walked_again(const void* frame, const WalkedStack& w, size_t instruction_at, size_t previous_at) {
  const WalkedAt* step = w.at;
  // Two steps a turn: the sentinel ends the steps at either.
  for (;;) {
    if (frame != step[0].frame) break;
    if (at<uint64_t>(frame, instruction_at) != step[0].instruction) return false;
    frame = at<const void*>(frame, previous_at);
    if (frame != step[1].frame) {
      ++step;
      break;
    }
    if (at<uint64_t>(frame, instruction_at) != step[1].instruction) return false;
    frame = at<const void*>(frame, previous_at);
    step += 2;
  }
  return step == w.last && frame == w.end;
}

}  // namespace firstassert::python
