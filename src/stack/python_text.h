// The text of a CPython str object, read in place (no C API call, which would need the GIL), as UTF-8: how a code
// object's file and function names are copied once, at its first capture.
#pragma once

#include <string>

#include "python_interpreter.h"

namespace firstassert::python {

// A compact str's text (code objects' names always are; PEP 393's representation), as UTF-8; "?" for anything else
// or for a name longer than any file or function name has reason to be.
std::string text_of(const Interpreter& py, const void* object);

}  // namespace firstassert::python
