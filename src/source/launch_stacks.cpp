#include "launch_stacks.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "stack/native_stack.h"
#include "stack/python_frames.h"

namespace firstassert::source {
namespace {

unsigned native_depth = 0;
// Python frames per launch: as deep as the native stacks, or all a record holds; 0: none.
size_t python_depth = 0;

// The shim's, CUPTI's and CUDA's own frames, cut from the top of every stack; collected at the first launch, when
// the CUDA libraries in use are loaded.
MachineryRanges machinery;
std::once_flag machinery_once;
std::atomic<bool> machinery_known{false};  // checked first: std::call_once costs a TLS lookup even once done

}  // namespace

void set_launch_stack_depths(unsigned native, bool python) {
  native_depth = native;
  python_depth = !python          ? 0
                 : native > 0     ? std::min<size_t>(native, kMaxPythonFrames)
                                  : kMaxPythonFrames;
}

void capture_stacks(LaunchEvent& launch, LaunchStacks& stacks) {
  if (native_depth > 0) {
    if (!machinery_known.load(std::memory_order_acquire)) {
      std::call_once(machinery_once, [] { machinery.collect(reinterpret_cast<const void*>(&capture_stacks)); });
      machinery_known.store(true, std::memory_order_release);
    }
    size_t skip = 0;
    size_t n = capture_native_stack(stacks.native, native_depth + 32, 0, &machinery, &skip);
    launch.native_stack = stacks.native + skip;
    launch.stack_depth = static_cast<uint8_t>(std::min<size_t>(n - skip, native_depth));
  }
  if (python_depth != 0) {
    // The frames may be the thread's copy of a stack walked before (valid until its next capture, after this call),
    // or one kept for good, which the record then points to.
    PythonStack python = capture_python_stack(stacks.python, python_depth);
    launch.python_stack = python.frames;
    launch.python_depth = static_cast<uint8_t>(python.count);
    launch.python_lasting = python.lasting ? python.frames : nullptr;
  }
}

}  // namespace firstassert::source
