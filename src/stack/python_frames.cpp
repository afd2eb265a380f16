// A launching thread's Python frames, walked from its innermost frame outwards, or found again in what its last
// walks kept (python_walk_memo.h); and the capture the launch path calls, chosen once the interpreter is known. The
// pieces the walk uses live apart: the interpreter's functions and layout (python_interpreter), the code objects'
// names and lines (python_code_names), a str's text (python_text), the runtime's finalizing word
// (python_finalizing).
#include "python_frames.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <iterator>
#include <mutex>
#include <utility>

#include "core/log.h"
#include "core/thread_block.h"
#include "python_code_epoch.h"
#include "python_code_names.h"
#include "python_finalizing.h"
#include "python_interpreter.h"
#include "python_layout.h"
#include "python_stack_pool.h"
#include "python_walk_memo.h"

namespace firstassert {
namespace {

using python::at;
using python::CodeNames;
using python::Interpreter;
using python::Step;
using python::StepTrail;
using python::WalkedStack;
using python::WalkMemo;

// The innermost frame of the thread whose state this is.
const void* innermost_frame(const PythonLayout& l, const void* thread) {
  if (l.cframe >= 0) {
    const void* cframe = at<const void*>(thread, static_cast<size_t>(l.cframe));
    return cframe != nullptr ? at<const void*>(cframe, l.cframe_current) : nullptr;
  }
  return at<const void*>(thread, l.thread_frame);
}

// The byte offset of the frame's current instruction in its code object (what PyCode_Addr2Line takes); false for a
// frame that runs no Python code (a C entry frame) or has not started.
bool instruction_offset(const PythonLayout& l, const void* frame, const void* code, int& offset) {
  if (!l.interpreter_frames) {
    int lasti = at<int>(frame, l.frame_instruction);
    offset = lasti < 0 ? -1 : l.minor == 9 ? lasti : 2 * lasti;
    return true;
  }
  int owner = at<char>(frame, static_cast<size_t>(l.frame_owner));
  if (owner == kFrameOwnedByCStack && l.minor >= 12) return false;
  const char* instruction = at<const char*>(frame, l.frame_instruction);
  ptrdiff_t bytes = instruction - (static_cast<const char*>(code) + l.code_bytecode);
  if (owner != kFrameOwnedByGenerator && bytes < 2 * static_cast<ptrdiff_t>(at<int>(code, l.code_first_traceable)))
    return false;
  offset = static_cast<int>(bytes);
  return true;
}

// One step of a walk resolved anew: its frame into out (true), or none (false: not a code object, not started, a C
// entry frame, a full table); remembered in step when given. Apart from the walk, whose registers it would take.
__attribute__((noinline)) bool resolve_step(const Interpreter& py, const void* frame, const void* code,
                                            uint64_t instruction, int owner, PythonFrame& out, Step* step) {
  const PythonLayout& l = *py.layout;
  const CodeNames* names = nullptr;
  int offset = -1;
  bool code_object = python::is_a(code, py.code_type);
  if (code_object && instruction_offset(l, frame, code, offset)) {
    if ((names = python::names_of(py, code)) != nullptr)
      out = {names->file, names->function, python::line_of(py, *names, code, offset)};
  }
  // A code object whose frame was left out is walked again next time; a step that is no code object at all is kept
  // as one.
  if (step != nullptr) {
    if (names != nullptr || !code_object) {
      *step = {frame, code, instruction, owner, names, names != nullptr ? out : PythonFrame{}};
    } else {
      step->frame = nullptr;
    }
  }
  return names != nullptr;
}

// What a walk reads of one frame: its code object, its current instruction (a pointer from 3.11, f_lasti before),
// its owner (3.11+; 0 before) and the frame that called it.
struct FrameFields {
  const void* code;
  uint64_t instruction;
  int owner;
  const void* previous;
};

// One frame's fields at the offsets of kPythonLayouts[kLayout], constants of the instructions.
template <size_t kLayout>
inline FrameFields read_frame(const void* frame) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  constexpr bool kPointerInstruction = l.interpreter_frames, kOwner = l.frame_owner >= 0;
  constexpr size_t owner_at = kOwner ? static_cast<size_t>(l.frame_owner) : 0;
  return {at<const void*>(frame, l.frame_code),
          kPointerInstruction ? reinterpret_cast<uint64_t>(at<const char*>(frame, l.frame_instruction))
                              : static_cast<uint32_t>(at<int>(frame, l.frame_instruction)),
          kOwner ? at<char>(frame, owner_at) : 0, at<const void*>(frame, l.frame_previous)};
}

// Whether the memo's step is this frame as it is now: the same frame, code object, instruction and owner.
inline bool same_step(const Step* step, const void* frame, const FrameFields& f) {
  return step != nullptr && step->frame == frame && step->instruction == f.instruction && step->code == f.code &&
         step->owner == f.owner;
}

// The walk from frame outwards, for one of the layouts known (kPythonLayouts[kLayout]): a template, so that every
// offset is a constant of the instructions rather than a value the loop keeps in a register. Each frame is given by
// its step of the memo, or resolved anew; with kTrail, each step is also added to trail. frame is left where the
// walk stopped (nullptr: the outermost frame was walked).
template <size_t kLayout, bool kTrail = false>
size_t walk(const Interpreter& py, const void*& frame, WalkMemo* memo, PythonFrame* frames, size_t max_frames,
            StepTrail* trail = nullptr) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  const void* const code_type = py.code_type;
  size_t count = 0;
  for (int steps = 0; frame != nullptr && count < max_frames && steps < 4096; ++steps) {
    const FrameFields f = read_frame<kLayout>(frame);
    if constexpr (kTrail) trail->add(frame, f.instruction);
    Step* step = python::memo_step(memo, frame);
    if (same_step(step, frame, f)) {
      // Remembered: the frame it gave, while the code object is still the one its names were read from; or no
      // frame, while it is still no code object.
      const CodeNames* names = step->names;
      if (names != nullptr && names->identity == python::identity_of(l, f.code)) {
        frames[count++] = step->found;
        frame = f.previous;
        continue;
      }
      if (names == nullptr && !python::is_a(f.code, code_type)) {
        frame = f.previous;
        continue;
      }
    }
    if (resolve_step(py, frame, f.code, f.instruction, f.owner, frames[count], step)) ++count;
    frame = f.previous;
  }
  return count;
}

// Keeps the stack just walked in w (its steps from trail, where the walk stopped, its frames), to be found again
// under this epoch; a walk of more than kStackSteps steps is not kept. When the pool keeps its frames for good, the
// capture hands those out (where, lasting).
inline void keep_walked_stack(WalkedStack& w, const StepTrail& trail, uint64_t epoch, size_t max_frames,
                              const void* end, const PythonFrame* frames, size_t count, const PythonFrame** where,
                              bool* lasting) {
  if (trail.steps > python::kStackSteps) return;
  w.max_frames = max_frames;
  w.end = end;
  w.at[trail.steps] = {python::kNoFrame, 0};
  w.last = &w.at[trail.steps];
  const PythonFrame* kept = lasting_python_frames(frames, count);
  if (kept == nullptr) std::copy_n(frames, count, w.frames);
  w.found = {kept != nullptr ? kept : w.frames, static_cast<uint32_t>(count), kept != nullptr};
  w.epoch = epoch;
  if (kept != nullptr) {
    *where = kept;
    *lasting = true;
  }
}

// The thread's frames from frame: found again whole where stacks are kept (CPython 3.11+, while python_code_epoch
// counts), else walked, and kept for next time.
template <size_t kLayout>
size_t capture(const Interpreter& py, const void* thread, const void* frame, WalkMemo* memo, PythonFrame* frames,
               size_t max_frames, const PythonFrame** where, bool* lasting) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  if constexpr (l.interpreter_frames && l.minor >= 11) {
    // Read before the walk: a code object freed after this is none of the walked frames' (they are live).
    const uint64_t epoch = memo != nullptr && frame != nullptr ? python_code_epoch(thread, l.minor) : 0;
    if (epoch != 0) {
      WalkedStack& w = memo->stacks[python::stack_key(frame, at<uint64_t>(frame, l.frame_instruction))];
      if (w.epoch == epoch && w.max_frames == max_frames &&
          python::walked_again(frame, w, l.frame_instruction, l.frame_previous)) {
        *where = w.found.frames;
        *lasting = w.found.lasting;
        return w.found.count;
      }
      // Walked anew (frame by frame, through the per-frame memo), and kept.
      w.epoch = 0;
      StepTrail trail{&w};
      const void* end = frame;
      size_t count = walk<kLayout, true>(py, end, memo, frames, max_frames, &trail);
      keep_walked_stack(w, trail, epoch, max_frames, end, frames, count, where, lasting);
      return count;
    }
  }
  return walk<kLayout>(py, frame, memo, frames, max_frames);
}

// capture<layout>, for each layout of kPythonLayouts: direct calls, which the compiler inlines (a table of pointers
// would add an indirect call to every walk).
template <size_t... I>
size_t capture_with_layout(size_t layout, std::index_sequence<I...>, const Interpreter& py, const void* thread,
                           const void* frame, WalkMemo* memo, PythonFrame* frames, size_t max_frames,
                           const PythonFrame** where, bool* lasting) {
  size_t count = 0;
  (void)((layout == I && (count = capture<I>(py, thread, frame, memo, frames, max_frames, where, lasting), true)) ||
         ...);
  return count;
}

// Every capture but the launch path's warm one: the interpreter checked, the thread's frames walked (or found again).
PythonStack capture_walking(PythonFrame* buffer, size_t max_frames, const void* = nullptr) {
  max_frames = std::min<size_t>(max_frames, kMaxPythonFrames);  // what a kept stack holds
  PythonStack none{buffer, 0, false};
  const Interpreter& py = python::interpreter();
  if (py.layout == nullptr || max_frames == 0 || py.is_initialized() == 0) return none;
  // While the interpreter shuts down, other threads' states and frames are being freed: none are read then. And the
  // count of destroyed code objects stops for good (a count that started while Python was exiting has no atexit
  // function to stop it, and one interpreter made after this one is not counted).
  if (py.is_finalizing() != 0) {
    stop_python_code_epoch();
    return none;
  }
  const PythonLayout& l = *py.layout;
  const void* thread = py.this_thread_state();
  if (thread == nullptr) return none;  // a thread Python has never run on
  WalkMemo* memo = ThreadBlock<WalkMemo>::get();
  const void* frame = innermost_frame(l, thread);
  constexpr auto kLayouts = std::make_index_sequence<std::size(kPythonLayouts)>{};
  const PythonFrame* where = buffer;
  bool lasting = false;
  size_t count = capture_with_layout(static_cast<size_t>(&l - kPythonLayouts), kLayouts, py, thread, frame, memo,
                                     buffer, max_frames, &where, &lasting);
  return {where, static_cast<uint32_t>(count), lasting};
}

PythonStack capture_nothing(PythonFrame* buffer, size_t, const void*) { return {buffer, 0, false}; }
void* no_thread_state() { return nullptr; }

const uintptr_t* runtime_finalizing = nullptr;  // for the warm captures

// The launch path's capture once stacks are kept (CPython 3.11+), for one layout (its offsets constants): the stack
// this thread's last walks kept under this innermost frame and instruction, found again frame by frame (what
// capture<> does first, without the walk's set-up); anything else is walked. The interpreter is not asked: the
// runtime's finalizing word, read in place and before the thread's state, says it is not being torn down, and a
// count that has started and not stopped (python_code_epoch.h) that it was initialized. A kept stack was walked
// under the counted interpreter, and its frames' code objects still live where they were, so the instructions found
// again are theirs whichever interpreter this thread runs now.
template <size_t kLayout>
PythonStack capture_warm(PythonFrame* buffer, size_t max_frames, const void* thread) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  if (__atomic_load_n(runtime_finalizing, __ATOMIC_RELAXED) != 0) return capture_walking(buffer, max_frames);
  const uint64_t epoch = detail::code_objects_destroyed.load(std::memory_order_acquire);
  if (!detail::counting(epoch)) return capture_walking(buffer, max_frames);
  WalkMemo* memo = ThreadBlock<WalkMemo>::existing();  // the walk makes it
  if (thread == nullptr || memo == nullptr) return capture_walking(buffer, max_frames);
  const void* frame = innermost_frame(l, thread);
  if (frame == nullptr) return capture_walking(buffer, max_frames);
  const WalkedStack& w = memo->stacks[python::stack_key(frame, at<uint64_t>(frame, l.frame_instruction))];
  if (w.epoch != epoch || w.max_frames != max_frames ||
      !python::walked_again(frame, w, l.frame_instruction, l.frame_previous))
    return capture_walking(buffer, max_frames);
  return w.found;
}

// The capture of each layout once the interpreter is known: warm where stacks are kept, else walked.
template <size_t... I>
constexpr std::array<detail::PythonCapture, sizeof...(I)> captures_by_layout(std::index_sequence<I...>) {
  return {(kPythonLayouts[I].interpreter_frames && kPythonLayouts[I].minor >= 11 ? &capture_warm<I>
                                                                                  : &capture_walking)...};
}

// The first captures: the interpreter found, then the capture for it chosen for good.
PythonStack capture_first(PythonFrame* buffer, size_t max_frames, const void*) {
  static std::once_flag once;
  std::call_once(once, [] {
    const Interpreter& py = python::interpreter();
    // No Python, or one whose layout is not known: no frames, ever, and no more asking.
    detail::PythonCapture chosen = &capture_nothing;
    if (py.layout != nullptr) {
      static constexpr auto kCaptures = captures_by_layout(std::make_index_sequence<std::size(kPythonLayouts)>{});
      chosen = kCaptures[static_cast<size_t>(py.layout - kPythonLayouts)];
      if (chosen != &capture_walking && (runtime_finalizing = python::runtime_finalizing_word(py)) == nullptr) {
        info("Python 3.%d: its runtime state is not laid out as firstassert expects; every launch's Python frames "
             "are walked", py.layout->minor);
        chosen = &capture_walking;
      }
      detail::python_thread_state.store(py.this_thread_state, std::memory_order_relaxed);
    }
    detail::python_capture.store(chosen, std::memory_order_release);
  });
  return capture_walking(buffer, max_frames);
}

}  // namespace

namespace detail {
std::atomic<PythonCapture> python_capture{&capture_first};
std::atomic<void* (*)()> python_thread_state{&no_thread_state};
}  // namespace detail

}  // namespace firstassert
