// The kernel as parsed from TTGIR text: MLIR's textual form (https://mlir.llvm.org/docs/LangRef/), read as Triton's
// printer writes it: one operation a line, regions in braces, #aliases for layouts and locations.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "values.h"

namespace simtriton {

struct Op;

// A region's single block: its arguments (value slots) and operations; the last is its terminator.
struct Block {
  std::vector<int> args;
  std::vector<std::unique_ptr<Op>> ops;
};

struct Op {
  std::string name;                   // e.g. "arith.addi"
  std::vector<int> operands;          // value slots
  std::vector<int> results;           // value slots
  std::vector<Type> result_types;
  std::vector<std::string> keywords;  // bare words between the operands: predicates, "x", "fadd", ...
  std::string attributes;             // the text of the {...} / <{...}> dictionaries, as written
  std::string literal;                // arith.constant's value as written (128, dense<0xFF800000>, true)
  std::string text;                   // the string operand (tt.assert's message)
  std::vector<Block> regions;
  std::string loc;                    // the location as written (#loc25, or inline)
  int line = 0;                       // where in the TTGIR text, for messages

  // Filled in once by the interpreter before any program runs (interpreter.cpp):
  int handler = -1;                           // how it is evaluated
  std::function<Elem(const Elem*)> fn;        // elementwise ops: one result element from its operands' elements
  std::vector<Elem> constant;                 // arith.constant: its (splat) value
  std::string assert_file;                    // tt.assert: the source location it reports
  unsigned assert_line = 0;
};

struct Function {
  std::string name;
  std::vector<int> params;                       // value slots, in launch order
  std::vector<const Type*> slot_types;           // the type of every value slot
  std::vector<std::unique_ptr<Type>> owned_types;  // block argument and parameter types
  Block body;
};

struct Module {
  unsigned num_warps = 4;
  unsigned threads_per_warp = 32;
  std::map<std::string, std::string> aliases;  // "#blocked" -> "#ttg.blocked<{...}>", "#loc3" -> "loc(...)"
  Function func;
};

// Parses TTGIR text into *module; false with why (and the line) in *error.
bool parse_module(std::string_view text, Module* module, std::string* error);

// The file and line a location (as written in an op) resolves to, following aliases, names ("name"(loc)), call
// sites (the callee's location, else the caller's) and fused locations (the first with a file); false when none.
bool resolve_location(const Module& module, std::string_view loc, std::string* file, unsigned* line);

// The value of an integer attribute `key = N : type` in an attribute dictionary's text.
bool attribute_int(std::string_view attributes, std::string_view key, long long* value);
// The value of a string attribute `key = "..."`.
bool attribute_string(std::string_view attributes, std::string_view key, std::string* value);
// The integers of an array attribute `key = array<i32: 1, 0>` (or `[1, 0]`).
bool attribute_ints(std::string_view attributes, std::string_view key, std::vector<long long>* values);

}  // namespace simtriton
