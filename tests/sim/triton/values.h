// Element types, tensor types and runtime values of the interpreter, and the rounding and wrapping that make each
// result exactly what the device's type can hold.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace simtriton {

struct Layout;

// The element types of Triton's IR (MLIR builtin integer and float types, and !tt.ptr).
enum class Kind : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64, Ptr };

struct ElemType {
  Kind kind = Kind::I32;
  Kind pointee = Kind::I8;  // for Ptr: what it points at (Ptr for a pointer to pointers)
};

bool is_float(Kind kind);
bool is_int(Kind kind);  // I1..I64 (pointers are not)
unsigned bit_width(Kind kind);
size_t byte_size(Kind kind);  // in memory: i1 is stored as one byte, as Triton stores it
std::string kind_name(Kind kind);

// A scalar or a tensor<AxBx...xT, #layout>.
struct Type {
  ElemType elem;
  bool tensor = false;
  std::vector<int64_t> shape;             // empty for a scalar
  std::shared_ptr<const Layout> layout;   // the tensor's encoding; null when it has none (TTIR) or is a scalar
  std::string encoding_text;              // the encoding as written, for messages
  int64_t numel() const;
};

// One element. Integers are kept in a canonical form: sign-extended from their width (i1: 0 or 1); pointers as
// addresses; every float type as a double holding a value the type can represent exactly.
union Elem {
  int64_t i;
  double f;
};

struct Value {
  const Type* type = nullptr;
  std::vector<Elem> e;
};

// Integers: the canonical form of the low bits of raw, and the value read as signed or unsigned.
int64_t wrap_int(Kind kind, int64_t raw);
int64_t signed_of(Kind kind, int64_t canonical);
uint64_t unsigned_of(Kind kind, int64_t canonical);

// Floats: x rounded to the nearest value of kind, ties to even (IEEE 754's default rounding, which PTX's cvt.rn
// and Triton's default fp conversions use).
double round_float(Kind kind, double x);

// Memory images of f16 and bf16 (IEEE binary16; bfloat16 is the top half of a binary32).
double half_bits_to_double(uint16_t bits);
uint16_t double_to_half_bits(double x);  // x must already be representable (round_float(F16, ...))
double bf16_bits_to_double(uint16_t bits);
uint16_t double_to_bf16_bits(double x);  // likewise

}  // namespace simtriton
