#include "python_frames.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>

#include "core/log.h"
#include "core/thread_block.h"
#include "python_code_epoch.h"
#include "python_layout.h"
#include "python_stack_pool.h"

namespace firstassert {
namespace {

// What the walk needs of the interpreter, each found by name (nothing is linked), and the interpreter's layout.
struct Interpreter {
  int (*is_initialized)() = nullptr;         // Py_IsInitialized
  int (*is_finalizing)() = nullptr;          // Py_IsFinalizing (3.13), _Py_IsFinalizing before
  void* (*this_thread_state)() = nullptr;    // PyGILState_GetThisThreadState: needs no GIL
  int (*address_to_line)(void*, int) = nullptr;  // PyCode_Addr2Line: reads the code object's line table
  const void* code_type = nullptr;           // &PyCode_Type
  const void* str_type = nullptr;            // &PyUnicode_Type
  const PythonLayout* layout = nullptr;      // nullptr: no Python here, or one whose layout is not known
};

template <typename Fn>
Fn find(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// Builds whose objects or frames are laid out otherwise: debug (reference totals), trace-refs, free-threaded.
bool unusual_build() {
  for (const char* marker : {"_Py_RefTotal", "_Py_IncRefTotal", "_Py_PrintReferences", "_Py_MergeZeroLocalRefcount"})
    if (dlsym(RTLD_DEFAULT, marker) != nullptr) return true;
  return false;
}

Interpreter find_interpreter() {
  Interpreter py;
  auto version = find<const char* (*)()>("Py_GetVersion");
  if (version == nullptr) return py;  // no Python in this process
  py.is_initialized = find<int (*)()>("Py_IsInitialized");
  py.is_finalizing = find<int (*)()>("Py_IsFinalizing");
  if (py.is_finalizing == nullptr) py.is_finalizing = find<int (*)()>("_Py_IsFinalizing");
  py.this_thread_state = find<void* (*)()>("PyGILState_GetThisThreadState");
  py.address_to_line = find<int (*)(void*, int)>("PyCode_Addr2Line");
  py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  py.str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  const char* text = version();
  int major = 0, minor = 0;
  bool parsed = text != nullptr && std::sscanf(text, "%d.%d", &major, &minor) == 2;
  const PythonLayout* layout = parsed && major == 3 ? python_layout(minor) : nullptr;
  if (layout == nullptr || unusual_build() || py.is_initialized == nullptr || py.is_finalizing == nullptr ||
      py.this_thread_state == nullptr ||
      py.address_to_line == nullptr || py.code_type == nullptr || py.str_type == nullptr) {
    info("Python %.*s: its frame layout is not one firstassert knows (3.9 to 3.13 release builds); launches carry "
         "no Python frames", 16, text != nullptr ? text : "?");
    return py;
  }
  py.layout = layout;
  return py;
}

const Interpreter& interpreter() {
  static const Interpreter py = find_interpreter();
  return py;
}

template <typename T>
T at(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

bool is_a(const void* object, const void* type) { return object != nullptr && at<const void*>(object, 8) == type; }

// A str object's text as UTF-8 (compact strings, which code objects' names always are), or "?".
std::string text_of(const Interpreter& py, const void* object) {
  if (!is_a(object, py.str_type)) return "?";
  const PythonLayout& l = *py.layout;
  auto length = static_cast<size_t>(at<ptrdiff_t>(object, 16));
  unsigned state = at<unsigned>(object, 32);
  unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (compact == 0 || length > 4096) return "?";
  const char* data = static_cast<const char*>(object) + (ascii != 0 ? l.ascii_header : l.compact_header);
  if (ascii != 0) return std::string(data, length);
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    uint32_t c = kind == 1 ? at<uint8_t>(data, i) : kind == 2 ? at<uint16_t>(data, 2 * i) : at<uint32_t>(data, 4 * i);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// Code object -> interned (file, function) and the lines of the instructions seen, found lock-free, filled under a
// lock at a code object's first capture. Code objects are not kept alive (that would need the GIL): an entry also
// holds what it was read from (the name objects, the line table object, the first line), so a code object later
// made at a freed one's address gets an entry of its own unless all of those are the same too.
constexpr size_t kCodes = 8192;
// A code object is looked for, and placed, within this many slots of its hash: once generated code (exec, notebooks,
// torch.compile) has filled the neighbourhood, a new code object costs a bounded search, not the whole table, and
// its frames are left out.
constexpr size_t kProbes = 32;
constexpr size_t kLinesPerCode = 8;
// What a code object's names and lines were read from: a code object at the same address with all of these the same
// is taken for the same one.
struct CodeIdentity {
  const void* file_object = nullptr;
  const void* name_object = nullptr;
  const void* line_table = nullptr;
  int first_line = 0;
  bool operator==(const CodeIdentity&) const = default;
};

// Inline: the walk's copy for one layout reads these at constant offsets.
inline CodeIdentity identity_of(const PythonLayout& l, const void* code) {
  return {at<const void*>(code, l.code_filename), at<const void*>(code, l.code_name),
          at<const void*>(code, l.code_line_table), at<int>(code, l.code_first_line)};
}

struct CodeNames {
  std::atomic<const void*> code{nullptr};
  CodeIdentity identity;
  const char* file = nullptr;
  const char* function = nullptr;
  // (instruction offset + 1) << 32 | line: PyCode_Addr2Line scans the line table, and a loop launches from the same
  // few instructions over and over. 0: empty.
  mutable std::atomic<uint64_t> lines[kLinesPerCode] = {};
};

int line_of(const Interpreter& py, const CodeNames& names, const void* code, int offset) {
  if (offset < 0) return py.address_to_line(const_cast<void*>(code), offset);
  uint64_t tag = static_cast<uint64_t>(offset) + 1;
  for (const auto& slot : names.lines) {
    uint64_t seen = slot.load(std::memory_order_relaxed);
    if (seen >> 32 == tag) return static_cast<int32_t>(static_cast<uint32_t>(seen));
    if (seen == 0) break;
  }
  int line = py.address_to_line(const_cast<void*>(code), offset);
  uint64_t entry = tag << 32 | static_cast<uint32_t>(line);
  for (auto& slot : names.lines) {
    uint64_t empty = 0;
    if (slot.compare_exchange_strong(empty, entry, std::memory_order_relaxed)) return line;
  }
  names.lines[static_cast<size_t>(offset) % kLinesPerCode].store(entry, std::memory_order_relaxed);  // all taken
  return line;
}
CodeNames codes[kCodes];
std::mutex codes_mutex;

const char* interned(const std::string& text) {
  const char* copy = strdup(text.c_str());
  return copy != nullptr ? copy : "?";
}

const CodeNames* names_of(const Interpreter& py, const void* code) {
  const CodeIdentity identity = identity_of(*py.layout, code);
  auto same = [&](const CodeNames& c) { return c.identity == identity; };
  // Objects are 16-byte aligned: the low bits say nothing, and a multiplicative hash spreads the rest.
  static_assert(kCodes == 1u << 13);
  size_t start = static_cast<size_t>((reinterpret_cast<uintptr_t>(code) >> 4) * 0x9E3779B97F4A7C15ull >> (64 - 13));
  bool free_slot = false;
  for (size_t i = 0; i < kProbes && !free_slot; ++i) {
    const CodeNames& c = codes[(start + i) % kCodes];
    const void* seen = c.code.load(std::memory_order_acquire);
    free_slot = seen == nullptr;
    if (seen == code && same(c)) return &c;
  }
  if (!free_slot) return nullptr;  // the neighbourhood is full: no lock taken, the frame is left out
  std::lock_guard lock(codes_mutex);
  for (size_t i = 0; i < kProbes; ++i) {
    CodeNames& c = codes[(start + i) % kCodes];
    const void* seen = c.code.load(std::memory_order_relaxed);
    if (seen == code && same(c)) return &c;
    if (seen != nullptr) continue;
    c.identity = identity;
    c.file = interned(text_of(py, identity.file_object));
    c.function = interned(text_of(py, identity.name_object));
    c.code.store(code, std::memory_order_release);
    return &c;
  }
  return nullptr;
}

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

// A walk's frames and instructions, as it takes them, for a WalkedStack; nothing for layouts without code watchers.
struct StepTrail {
  WalkedStack* stack;
  size_t steps = 0;
  void add(const void* frame, uint64_t instruction) {
    if (steps < kStackSteps) stack->at[steps] = {frame, instruction};
    ++steps;
  }
};

// One step of a walk resolved anew: its frame into out (true), or none (false: not a code object, not started, a C
// entry frame, a full table); remembered in step when given. Apart from the walk, whose registers it would take.
__attribute__((noinline)) bool resolve_step(const Interpreter& py, const void* frame, const void* code,
                                            uint64_t instruction, int owner, PythonFrame& out, Step* step) {
  const PythonLayout& l = *py.layout;
  const CodeNames* names = nullptr;
  int offset = -1;
  bool code_object = is_a(code, py.code_type);
  if (code_object && instruction_offset(l, frame, code, offset)) {
    if ((names = names_of(py, code)) != nullptr) out = {names->file, names->function, line_of(py, *names, code, offset)};
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

// The walk from frame outwards, for one of the layouts known (kPythonLayouts[kLayout]): a template, so that every
// offset is a constant of the instructions (held in registers, they were spilled and reloaded at every frame).
// With kTrail, each step is also added to trail.
template <size_t kLayout, bool kTrail = false>
size_t walk(const Interpreter& py, const void*& frame, WalkMemo* memo, PythonFrame* frames, size_t max_frames,
            StepTrail* trail = nullptr) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  constexpr bool kPointerInstruction = l.interpreter_frames, kOwner = l.frame_owner >= 0;
  constexpr size_t code_at = l.frame_code, previous_at = l.frame_previous, instruction_at = l.frame_instruction;
  constexpr size_t owner_at = kOwner ? static_cast<size_t>(l.frame_owner) : 0;
  const void* const code_type = py.code_type;
  size_t count = 0;
  for (int steps = 0; frame != nullptr && count < max_frames && steps < 4096; ++steps) {
    const void* code = at<const void*>(frame, code_at);
    uint64_t instruction = kPointerInstruction ? reinterpret_cast<uint64_t>(at<const char*>(frame, instruction_at))
                                               : static_cast<uint32_t>(at<int>(frame, instruction_at));
    int owner = kOwner ? at<char>(frame, owner_at) : 0;
    const void* previous = at<const void*>(frame, previous_at);
    if constexpr (kTrail) trail->add(frame, instruction);
    // Frames are 16-byte aligned and at least 48 bytes apart: the next bits tell a stack's frames apart.
    Step* step = memo != nullptr ? &memo->steps[(reinterpret_cast<uintptr_t>(frame) >> 4) & (kMemoSteps - 1)] : nullptr;
    if (step != nullptr && step->frame == frame && step->instruction == instruction && step->code == code &&
        step->owner == owner) {
      const CodeNames* n = step->names;
      if (n != nullptr) {
        if (n->identity == identity_of(l, code)) {
          frames[count++] = step->found;
          frame = previous;
          continue;
        }
      } else if (!is_a(code, code_type)) {
        frame = previous;
        continue;
      }
    }
    if (resolve_step(py, frame, code, instruction, owner, frames[count], step)) ++count;
    frame = previous;
  }
  return count;
}

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

template <size_t kLayout>
size_t capture(const Interpreter& py, const void* thread, const void* frame, WalkMemo* memo, PythonFrame* frames,
               size_t max_frames, const PythonFrame** where, bool* lasting) {
  static constexpr const PythonLayout& l = kPythonLayouts[kLayout];
  if constexpr (l.interpreter_frames && l.minor >= 11) {
    // Read before the walk: a code object freed after this is none of the walked frames' (they are live).
    const uint64_t epoch = memo != nullptr && frame != nullptr ? python_code_epoch(thread, l.minor) : 0;
    if (epoch != 0) {
      WalkedStack& w = memo->stacks[stack_key(frame, at<uint64_t>(frame, l.frame_instruction))];
      if (w.epoch == epoch && w.max_frames == max_frames && walked_again(frame, w, l.frame_instruction, l.frame_previous)) {
        *where = w.found.frames;
        *lasting = w.found.lasting;
        return w.found.count;
      }
      // Walked anew (frame by frame, through the per-frame memo), and kept.
      w.epoch = 0;
      StepTrail trail{&w};
      const void* end = frame;
      size_t count = walk<kLayout, true>(py, end, memo, frames, max_frames, &trail);
      if (trail.steps <= kStackSteps) {
        w.max_frames = max_frames;
        w.end = end;
        w.at[trail.steps] = {kNoFrame, 0};
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
      return count;
    }
  }
  return walk<kLayout>(py, frame, memo, frames, max_frames);
}

// capture<layout>, for each layout of kPythonLayouts: direct calls, which the compiler inlines (through a table of
// pointers the launch path paid about 25 instructions more).
template <size_t... I>
size_t capture_with_layout(size_t layout, std::index_sequence<I...>, const Interpreter& py, const void* thread,
                           const void* frame, WalkMemo* memo, PythonFrame* frames, size_t max_frames,
                           const PythonFrame** where, bool* lasting) {
  size_t count = 0;
  (void)((layout == I && (count = capture<I>(py, thread, frame, memo, frames, max_frames, where, lasting), true)) ||
         ...);
  return count;
}

}  // namespace

namespace {

// Every capture but the launch path's warm one: the interpreter checked, the thread's frames walked (or found again).
PythonStack capture_walking(PythonFrame* buffer, size_t max_frames, const void* = nullptr) {
  max_frames = std::min<size_t>(max_frames, kMaxPythonFrames);  // what a kept stack holds
  PythonStack none{buffer, 0, false};
  const Interpreter& py = interpreter();
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

// _PyRuntime's word that holds the thread state finalizing it: where the layout's offsets read what the interpreter
// says of itself now (Py_IsInitialized, Py_IsFinalizing), and from 3.13 where the runtime's own debug offsets
// (_Py_DebugOffsets: "xdebugpy", version, free_threaded, then runtime_state's size and finalizing) put it; nullptr
// otherwise.
const uintptr_t* runtime_finalizing_word(const Interpreter& py) {
  const PythonLayout& l = *py.layout;
  const char* runtime = static_cast<const char*>(dlsym(RTLD_DEFAULT, "_PyRuntime"));
  if (runtime == nullptr || l.runtime_initialized < 0 || l.runtime_finalizing < 0) return nullptr;
  if (l.minor >= 13 && (std::memcmp(runtime, "xdebugpy", 8) != 0 ||
                        at<uint64_t>(runtime, 32) != static_cast<uint64_t>(l.runtime_finalizing)))
    return nullptr;
  if (at<int>(runtime, static_cast<size_t>(l.runtime_initialized)) != py.is_initialized()) return nullptr;
  if ((at<uintptr_t>(runtime, static_cast<size_t>(l.runtime_finalizing)) != 0) != (py.is_finalizing() != 0))
    return nullptr;
  return reinterpret_cast<const uintptr_t*>(runtime + l.runtime_finalizing);
}
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
  const WalkedStack& w = memo->stacks[stack_key(frame, at<uint64_t>(frame, l.frame_instruction))];
  if (w.epoch != epoch || w.max_frames != max_frames ||
      !walked_again(frame, w, l.frame_instruction, l.frame_previous))
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
    const Interpreter& py = interpreter();
    // No Python, or one whose layout is not known: no frames, ever, and no more asking.
    detail::PythonCapture chosen = &capture_nothing;
    if (py.layout != nullptr) {
      static constexpr auto kCaptures = captures_by_layout(std::make_index_sequence<std::size(kPythonLayouts)>{});
      chosen = kCaptures[static_cast<size_t>(py.layout - kPythonLayouts)];
      if (chosen != &capture_walking && (runtime_finalizing = runtime_finalizing_word(py)) == nullptr) {
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
