// Runs a parsed kernel: each program (block) of the grid evaluates the function once over whole tensors, as
// Triton's programming model defines it (one program = one block; a tensor op computes every element).
#pragma once

#include <string>

#include "ir_text.h"
#include "triton_kernel.h"

namespace simtriton {

// Chooses how each op of the module is evaluated (and resolves what it needs: constants, assert locations); false
// with a one-line error naming the first op this cannot run.
bool prepare_module(Module* module, std::string* error);

enum class Outcome { Completed, Stopped, Error };

// Runs every program of grid, x fastest, over the parameters' bytes. Stopped: a tt.assert failed or an access
// faulted (the hooks were told; no later program runs). Error: *error says what could not be run.
Outcome run_grid(const Module& module, void* const* args, dim3 grid, const DeviceHooks& hooks, std::string* error);

}  // namespace simtriton
