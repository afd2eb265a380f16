// Elementwise operations (arith, math, libdevice calls, pointer arithmetic): each result element depends only on
// the same element of the operands, so each is one function over elements.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir_text.h"

namespace simtriton {

using ElementFn = std::function<Elem(const Elem*)>;

enum class Elementwise { No, Yes, Unsupported };

// The function computing one result element of `op` (whose operands have `operand_types`): Yes with *fn set; No
// when op is not elementwise; Unsupported (why in *error) when it is but this cannot compute it.
Elementwise make_elementwise(const Op& op, const std::vector<const Type*>& operand_types, ElementFn* fn,
                             std::string* error);

// arith.constant's value as written (128, -1.5e+00, 0xFF800000, true, dense<...> of a splat) as an element of kind.
bool parse_constant(const std::string& literal, Kind kind, Elem* out, std::string* error);

}  // namespace simtriton
