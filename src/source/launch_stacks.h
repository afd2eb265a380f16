// The host stacks of the thread making a launch (or adding a graph's kernel node): its native return addresses, cut
// of the shim's, CUPTI's and CUDA's own frames at the top, and its Python frames, into buffers on the caller's stack.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/launch_record.h"

namespace firstassert::source {

// Where a capture puts the frames; the launch event points into it, so it lives as long as the event.
struct LaunchStacks {
  uintptr_t native[kMaxStackFrames + 32];  // room for the machinery frames cut from the top
  PythonFrame python[kMaxPythonFrames];
};

// How deep the captures go, set by start(): native frames (0: none) and whether Python frames are read.
void set_launch_stack_depths(unsigned native_depth, bool python);

// Fills the event's stacks (native_stack, stack_depth, python_stack, python_depth, python_lasting) as deep as set.
void capture_stacks(LaunchEvent& launch, LaunchStacks& stacks);

}  // namespace firstassert::source
