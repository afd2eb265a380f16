#include "values.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace simtriton {

bool is_float(Kind kind) {
  return kind == Kind::F16 || kind == Kind::BF16 || kind == Kind::F32 || kind == Kind::F64;
}

bool is_int(Kind kind) { return !is_float(kind) && kind != Kind::Ptr; }

unsigned bit_width(Kind kind) {
  switch (kind) {
    case Kind::I1: return 1;
    case Kind::I8: return 8;
    case Kind::I16: case Kind::F16: case Kind::BF16: return 16;
    case Kind::I32: case Kind::F32: return 32;
    case Kind::I64: case Kind::F64: case Kind::Ptr: return 64;
  }
  return 64;
}

size_t byte_size(Kind kind) { return kind == Kind::I1 ? 1 : bit_width(kind) / 8; }

std::string kind_name(Kind kind) {
  static const char* const names[] = {"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "ptr"};
  return names[static_cast<int>(kind)];
}

int64_t Type::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t wrap_int(Kind kind, int64_t raw) {
  unsigned width = bit_width(kind);
  if (kind == Kind::I1) return raw & 1;
  if (width >= 64) return raw;
  // Shift the low `width` bits to the top and back (arithmetic shift) to sign-extend them.
  auto bits = static_cast<uint64_t>(raw) << (64 - width);
  return static_cast<int64_t>(bits) >> (64 - width);
}

int64_t signed_of(Kind kind, int64_t canonical) {
  // i1 read as signed is 0 or -1 (MLIR's arith dialect: a set i1 is -1 to signed predicates and extsi).
  if (kind == Kind::I1) return canonical ? -1 : 0;
  return canonical;
}

uint64_t unsigned_of(Kind kind, int64_t canonical) {
  unsigned width = bit_width(kind);
  auto bits = static_cast<uint64_t>(canonical);
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

namespace {

// Rounds x to a binary float format with `mantissa` stored fraction bits, smallest normal exponent min_exp and
// largest finite value max_finite: scaling by a power of two is exact, so one nearbyint (round to nearest even, the
// default floating-point environment) rounds correctly, subnormals included (their spacing is that of min_exp).
double round_binary(double x, int mantissa, int min_exp, double max_finite) {
  if (!std::isfinite(x) || x == 0) return x;
  int exp = 0;
  std::frexp(x, &exp);  // x = m * 2^exp, 0.5 <= |m| < 1: the leading bit is 2^(exp-1)
  int lead = std::max(exp - 1, min_exp);
  double scaled = std::ldexp(x, mantissa - lead);
  double rounded = std::ldexp(std::nearbyint(scaled), lead - mantissa);
  if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return rounded;
}

}  // namespace

double round_float(Kind kind, double x) {
  switch (kind) {
    case Kind::F64: return x;
    case Kind::F32: return static_cast<double>(static_cast<float>(x));  // C++ conversion: round to nearest
    case Kind::F16: return round_binary(x, 10, -14, 65504.0);
    case Kind::BF16: return round_binary(x, 7, -126, std::ldexp(255.0, 120));  // 0x7F7F = 1.9921875 * 2^127
    default: return x;
  }
}

double half_bits_to_double(uint16_t bits) {
  int sign = bits >> 15;
  int exp = (bits >> 10) & 0x1f;
  int frac = bits & 0x3ff;
  double value;
  if (exp == 0x1f) {
    value = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    value = std::ldexp(frac, -24);  // subnormal: frac * 2^-14 / 2^10
  } else {
    value = std::ldexp(frac + 1024, exp - 25);
  }
  return sign ? -value : value;
}

uint16_t double_to_half_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  double a = std::fabs(x);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a == 0) return sign;
  if (a < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  int exp = 0;
  double m = std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  auto frac = static_cast<uint16_t>(std::ldexp(m, 11) - 1024);
  return sign | static_cast<uint16_t>((exp + 14) << 10) | frac;
}

double bf16_bits_to_double(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t double_to_bf16_bits(double x) {
  if (std::isnan(x)) return 0x7fc0;
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(x)) >> 16);
}

}  // namespace simtriton
