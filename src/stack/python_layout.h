// Where CPython keeps a thread's frames, per minor version (x86-64 release builds): the offsets the frame walker
// (python_frames.cpp and the python_* files it uses) reads. PyTorch and Triton release the GIL before they launch,
// so the C API, which needs the GIL, cannot be used there; the launching thread's own frames are still intact (it is
// inside a C call, and no other thread changes its frame chain), and reading them needs no lock, no allocation and
// no reference count.
// The offsets were taken with offsetof() from each version's headers (Include/internal included); the e2e test
// checks the walk under every interpreter found on the machine.
#pragma once

#include <cstddef>
#include <cstdint>

namespace firstassert {

struct PythonLayout {
  int minor;  // 3.minor
  // The innermost frame: tstate + thread_frame, through tstate->cframe first when cframe >= 0 (3.11, 3.12).
  ptrdiff_t cframe;
  size_t cframe_current;
  size_t thread_frame;
  // A frame: PyFrameObject up to 3.10 (f_code, f_back, f_lasti), _PyInterpreterFrame from 3.11 (f_code or
  // f_executable, previous, prev_instr or instr_ptr, owner).
  bool interpreter_frames;
  size_t frame_code;
  size_t frame_previous;
  size_t frame_instruction;  // 3.9: f_lasti in bytes; 3.10: f_lasti in code units; 3.11+: a pointer into the code
  ptrdiff_t frame_owner;     // -1: none
  // The code object: where its bytecode starts (3.11+), its first traceable instruction, its names, and what its
  // lines are computed from (the line table object: co_lnotab in 3.9, co_linetable after; co_firstlineno).
  size_t code_bytecode;
  size_t code_first_traceable;
  size_t code_filename;
  size_t code_name;
  size_t code_line_table;
  size_t code_first_line;
  // str objects: the size of the compact ASCII and compact non-ASCII headers the characters follow.
  size_t ascii_header;
  size_t compact_header;
  // _PyRuntime (_PyRuntimeState): its initialized flag and the thread state finalizing it (non-null from when
  // Py_FinalizeEx begins to tear down, before any thread state is freed); -1: not used (before 3.11).
  ptrdiff_t runtime_initialized;
  ptrdiff_t runtime_finalizing;
};

// Frame owners that are not Python code being run (3.12+: a C entry frame) or not run yet.
inline constexpr int kFrameOwnedByGenerator = 1;
inline constexpr int kFrameOwnedByCStack = 3;

// clang-format off
inline constexpr PythonLayout kPythonLayouts[] = {
  //  minor cframe cur  frame  iframes code prev instr owner  bytecode first file name lines line1 ascii compact init fin
  {9,   -1,  0,  24,  false, 32, 24, 104, -1,  0,   0,   104, 112, 120, 40, 48, 72, -1,  -1},
  {10,  -1,  0,  24,  false, 32, 24, 96,  -1,  0,   0,   104, 112, 120, 40, 48, 72, -1,  -1},
  {11,  56,  8,  0,   true,  32, 48, 56,  69,  184, 168, 112, 120, 136, 72, 48, 72, 16,  24},
  {12,  56,  0,  0,   true,  0,  8,  56,  70,  192, 176, 112, 120, 136, 68, 40, 56, 16,  24},
  {13,  -1,  0,  72,  true,  0,  8,  56,  70,  200, 184, 112, 120, 136, 68, 40, 56, 600, 608},
};
// clang-format on

// The layout of CPython 3.minor, or nullptr.
inline const PythonLayout* python_layout(int minor) {
  for (const PythonLayout& l : kPythonLayouts) {
    if (l.minor == minor) return &l;
  }
  return nullptr;
}

}  // namespace firstassert
