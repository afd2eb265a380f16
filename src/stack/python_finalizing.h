// Whether the interpreter is being torn down, read in place: the word of _PyRuntime that holds the thread state
// finalizing it, so that a warm capture need not call Py_IsFinalizing. Found once, and only where what it says
// agrees with what the interpreter says of itself.
#pragma once

#include <cstdint>

#include "python_interpreter.h"

namespace firstassert::python {

// _PyRuntime's finalizing word: where the layout's offsets read what the interpreter says of itself now
// (Py_IsInitialized, Py_IsFinalizing), and from 3.13 where the runtime's own debug offsets (_Py_DebugOffsets:
// "xdebugpy", version, free_threaded, then runtime_state's size and finalizing) put it; nullptr otherwise.
const uintptr_t* runtime_finalizing_word(const Interpreter& py);

}  // namespace firstassert::python
