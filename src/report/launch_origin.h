// Where in the program a launch (or a CUDA graph's kernel node) came from, in the few words a summary line and a
// report use: the innermost Python frame of the user's code, else the top native frames of the program.
#pragma once

#include <cstddef>
#include <string>

#include "core/launch_record.h"

namespace firstassert {

// "train.py:42 in main" (the innermost frame when none is the user's); empty without Python frames.
std::string python_origin(const LaunchRecord& r);
// "train_step (job.cpp:12) <- main (job.cpp:30)": up to `frames` native frames, symbolized.
std::string native_origin(const LaunchRecord& r, size_t frames);
// "train.py:88" (the file's name and line), else the top native frame; empty when no stack was kept. For a graph's
// kernel node, its stacks are where it was captured: "node 3 of 5 of a CUDA graph captured at train.py:88".
std::string short_origin(const LaunchRecord& r);

}  // namespace firstassert
