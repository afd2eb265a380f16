// Semantics follow the MLIR arith and math dialect documentation (https://mlir.llvm.org/docs/Dialects/ArithOps/,
// .../MathOps/) and Triton's op definitions (TritonOps.td); the numerics are those of the device's types: f32 math
// is done in float, f16/bf16 results are rounded to their type (nearest even), integer results wrap to their width.
#include "ops.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace simtriton {

namespace {

Elem int_elem(int64_t v) {
  Elem e;
  e.i = v;
  return e;
}
Elem float_elem(double v) {
  Elem e;
  e.f = v;
  return e;
}

// A float op computed in the precision of the result: double for f64, float for f32 and (then rounded) f16/bf16.
template <class F>
ElementFn float1(Kind k, F f) {
  if (k == Kind::F64) return [f](const Elem* a) { return float_elem(f(a[0].f)); };
  return [f, k](const Elem* a) { return float_elem(round_float(k, f(static_cast<float>(a[0].f)))); };
}
template <class F>
ElementFn float2(Kind k, F f) {
  if (k == Kind::F64) return [f](const Elem* a) { return float_elem(f(a[0].f, a[1].f)); };
  return [f, k](const Elem* a) {
    return float_elem(round_float(k, f(static_cast<float>(a[0].f), static_cast<float>(a[1].f))));
  };
}
template <class F>
ElementFn float3(Kind k, F f) {
  if (k == Kind::F64) return [f](const Elem* a) { return float_elem(f(a[0].f, a[1].f, a[2].f)); };
  return [f, k](const Elem* a) {
    return float_elem(round_float(
        k, f(static_cast<float>(a[0].f), static_cast<float>(a[1].f), static_cast<float>(a[2].f))));
  };
}

// Integer ops on the operands read as signed (S) or unsigned (U); the result wraps to the type's width.
template <class F>
ElementFn int2_signed(Kind k, F f) {
  return [f, k](const Elem* a) { return int_elem(wrap_int(k, f(signed_of(k, a[0].i), signed_of(k, a[1].i)))); };
}
template <class F>
ElementFn int2_unsigned(Kind k, F f) {
  return [f, k](const Elem* a) {
    return int_elem(wrap_int(k, static_cast<int64_t>(f(unsigned_of(k, a[0].i), unsigned_of(k, a[1].i)))));
  };
}

// IEEE maxNum/minNum (arith.maxnumf, llvm.maxnum): a NaN operand yields the other; +0 is taken above -0.
template <class T>
T max_num(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T>
T min_num(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
// IEEE maximum/minimum (arith.maximumf): NaN propagates.
template <class T>
T maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return max_num(a, b);
}
template <class T>
T minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return min_num(a, b);
}

uint64_t bits_of(Kind k, Elem e) {
  switch (k) {
    case Kind::F64: return std::bit_cast<uint64_t>(e.f);
    case Kind::F32: return std::bit_cast<uint32_t>(static_cast<float>(e.f));
    case Kind::F16: return double_to_half_bits(e.f);
    case Kind::BF16: return double_to_bf16_bits(e.f);
    default: return unsigned_of(k, e.i);
  }
}

Elem from_bits(Kind k, uint64_t bits) {
  switch (k) {
    case Kind::F64: return float_elem(std::bit_cast<double>(bits));
    case Kind::F32: return float_elem(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case Kind::F16: return float_elem(half_bits_to_double(static_cast<uint16_t>(bits)));
    case Kind::BF16: return float_elem(bf16_bits_to_double(static_cast<uint16_t>(bits)));
    default: return int_elem(wrap_int(k, static_cast<int64_t>(bits)));
  }
}

// Float to integer, as PTX's cvt.rzi does it: toward zero, saturating at the type's limits, NaN to 0 (C++ leaves
// the out-of-range cases undefined).
int64_t float_to_int(double x, Kind k, bool is_signed) {
  if (std::isnan(x)) return 0;
  unsigned w = bit_width(k);
  double t = std::trunc(x);
  if (is_signed) {
    double lo = -std::ldexp(1.0, static_cast<int>(w) - 1), hi = std::ldexp(1.0, static_cast<int>(w) - 1);
    if (k == Kind::I1) lo = -1, hi = 1;
    if (t <= lo) return wrap_int(k, static_cast<int64_t>(lo));
    if (t >= hi) return wrap_int(k, w >= 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1);
    return wrap_int(k, static_cast<int64_t>(t));
  }
  if (t <= 0) return 0;
  double hi = std::ldexp(1.0, static_cast<int>(w));
  if (t >= hi) return wrap_int(k, -1);
  return wrap_int(k, static_cast<int64_t>(static_cast<uint64_t>(t)));
}

bool int_predicate(const std::string& p, Kind k, ElementFn* fn) {
  using Cmp = bool (*)(int64_t, int64_t, uint64_t, uint64_t);
  static const std::map<std::string, Cmp> table = {
      {"eq", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a == b; }},
      {"ne", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a != b; }},
      {"slt", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a < b; }},
      {"sle", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a <= b; }},
      {"sgt", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a > b; }},
      {"sge", [](int64_t a, int64_t b, uint64_t, uint64_t) { return a >= b; }},
      {"ult", [](int64_t, int64_t, uint64_t a, uint64_t b) { return a < b; }},
      {"ule", [](int64_t, int64_t, uint64_t a, uint64_t b) { return a <= b; }},
      {"ugt", [](int64_t, int64_t, uint64_t a, uint64_t b) { return a > b; }},
      {"uge", [](int64_t, int64_t, uint64_t a, uint64_t b) { return a >= b; }},
  };
  auto found = table.find(p);
  if (found == table.end()) return false;
  Cmp cmp = found->second;
  if (k == Kind::Ptr) k = Kind::I64;
  *fn = [cmp, k](const Elem* a) {
    return int_elem(cmp(signed_of(k, a[0].i), signed_of(k, a[1].i), unsigned_of(k, a[0].i), unsigned_of(k, a[1].i)));
  };
  return true;
}

// arith.cmpf: "o" predicates are false when either operand is NaN, "u" ones true (MLIR's CmpFPredicate).
bool float_predicate(const std::string& p, ElementFn* fn) {
  static const std::map<std::string, std::pair<int, bool>> table = {
      // {relation: 0 false, 1 eq, 2 gt, 3 ge, 4 lt, 5 le, 6 ne, 7 true (ord/uno), unordered result}
      {"false", {0, false}}, {"oeq", {1, false}}, {"ogt", {2, false}}, {"oge", {3, false}}, {"olt", {4, false}},
      {"ole", {5, false}},   {"one", {6, false}}, {"ord", {7, false}}, {"ueq", {1, true}},  {"ugt", {2, true}},
      {"uge", {3, true}},    {"ult", {4, true}},  {"ule", {5, true}},  {"une", {6, true}},  {"uno", {0, true}},
      {"true", {7, true}}};
  auto found = table.find(p);
  if (found == table.end()) return false;
  auto [relation, unordered] = found->second;
  bool constant = p == "false" || p == "true";
  *fn = [relation, unordered, constant](const Elem* a) {
    double x = a[0].f, y = a[1].f;
    if (!constant && (std::isnan(x) || std::isnan(y))) return int_elem(unordered);
    bool r = false;
    switch (relation) {
      case 1: r = x == y; break;
      case 2: r = x > y; break;
      case 3: r = x >= y; break;
      case 4: r = x < y; break;
      case 5: r = x <= y; break;
      case 6: r = x != y; break;
      case 7: r = true; break;
      default: r = false;
    }
    return int_elem(r);
  };
  return true;
}

// libdevice functions (__nv_NAME / __nv_NAMEf) as <cmath> computes them, by NAME without the f suffix.
bool libdevice(std::string symbol, Kind out, Kind in, size_t arity, ElementFn* fn) {
  if (symbol.rfind("__nv_", 0) != 0) return false;
  symbol = symbol.substr(5);
  if (symbol.rfind("fast_", 0) == 0) symbol = symbol.substr(5);  // approximations on the device; exact here
  // Classification functions return an int.
  static const std::map<std::string, int> predicates = {
      {"isinff", 0}, {"isinfd", 0}, {"isnanf", 1}, {"isnand", 1}, {"finitef", 2}, {"isfinited", 2},
      {"signbitf", 3}, {"signbitd", 3}};
  if (auto p = predicates.find(symbol); p != predicates.end()) {
    int which = p->second;
    *fn = [which, out](const Elem* a) {
      double x = a[0].f;
      bool r = which == 0 ? std::isinf(x) : which == 1 ? std::isnan(x) : which == 2 ? std::isfinite(x)
                                                                                    : std::signbit(x);
      return int_elem(wrap_int(out, r));
    };
    return true;
  }
  if (!is_float(out) || !is_float(in)) return false;
  using U = double (*)(double);
  using UF = float (*)(float);
  struct Unary {
    UF f;
    U d;
  };
  static const std::map<std::string, Unary> unary = {
      {"exp", {[](float x) { return std::exp(x); }, [](double x) { return std::exp(x); }}},
      {"exp2", {[](float x) { return std::exp2(x); }, [](double x) { return std::exp2(x); }}},
      {"exp10", {[](float x) { return std::pow(10.0f, x); }, [](double x) { return std::pow(10.0, x); }}},
      {"expm1", {[](float x) { return std::expm1(x); }, [](double x) { return std::expm1(x); }}},
      {"log", {[](float x) { return std::log(x); }, [](double x) { return std::log(x); }}},
      {"log2", {[](float x) { return std::log2(x); }, [](double x) { return std::log2(x); }}},
      {"log10", {[](float x) { return std::log10(x); }, [](double x) { return std::log10(x); }}},
      {"log1p", {[](float x) { return std::log1p(x); }, [](double x) { return std::log1p(x); }}},
      {"sqrt", {[](float x) { return std::sqrt(x); }, [](double x) { return std::sqrt(x); }}},
      {"rsqrt", {[](float x) { return 1.0f / std::sqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }}},
      {"cbrt", {[](float x) { return std::cbrt(x); }, [](double x) { return std::cbrt(x); }}},
      {"sin", {[](float x) { return std::sin(x); }, [](double x) { return std::sin(x); }}},
      {"cos", {[](float x) { return std::cos(x); }, [](double x) { return std::cos(x); }}},
      {"tan", {[](float x) { return std::tan(x); }, [](double x) { return std::tan(x); }}},
      {"asin", {[](float x) { return std::asin(x); }, [](double x) { return std::asin(x); }}},
      {"acos", {[](float x) { return std::acos(x); }, [](double x) { return std::acos(x); }}},
      {"atan", {[](float x) { return std::atan(x); }, [](double x) { return std::atan(x); }}},
      {"sinh", {[](float x) { return std::sinh(x); }, [](double x) { return std::sinh(x); }}},
      {"cosh", {[](float x) { return std::cosh(x); }, [](double x) { return std::cosh(x); }}},
      {"tanh", {[](float x) { return std::tanh(x); }, [](double x) { return std::tanh(x); }}},
      {"asinh", {[](float x) { return std::asinh(x); }, [](double x) { return std::asinh(x); }}},
      {"acosh", {[](float x) { return std::acosh(x); }, [](double x) { return std::acosh(x); }}},
      {"atanh", {[](float x) { return std::atanh(x); }, [](double x) { return std::atanh(x); }}},
      {"erf", {[](float x) { return std::erf(x); }, [](double x) { return std::erf(x); }}},
      {"erfc", {[](float x) { return std::erfc(x); }, [](double x) { return std::erfc(x); }}},
      {"lgamma", {[](float x) { return std::lgamma(x); }, [](double x) { return std::lgamma(x); }}},
      {"tgamma", {[](float x) { return std::tgamma(x); }, [](double x) { return std::tgamma(x); }}},
      {"floor", {[](float x) { return std::floor(x); }, [](double x) { return std::floor(x); }}},
      {"ceil", {[](float x) { return std::ceil(x); }, [](double x) { return std::ceil(x); }}},
      {"trunc", {[](float x) { return std::trunc(x); }, [](double x) { return std::trunc(x); }}},
      {"round", {[](float x) { return std::round(x); }, [](double x) { return std::round(x); }}},
      {"rint", {[](float x) { return std::nearbyint(x); }, [](double x) { return std::nearbyint(x); }}},
      {"nearbyint", {[](float x) { return std::nearbyint(x); }, [](double x) { return std::nearbyint(x); }}},
      {"fabs", {[](float x) { return std::fabs(x); }, [](double x) { return std::fabs(x); }}},
  };
  using B = double (*)(double, double);
  using BF = float (*)(float, float);
  struct Binary {
    BF f;
    B d;
  };
  static const std::map<std::string, Binary> binary = {
      {"pow", {[](float x, float y) { return std::pow(x, y); }, [](double x, double y) { return std::pow(x, y); }}},
      {"powi", {[](float x, float y) { return std::pow(x, y); }, [](double x, double y) { return std::pow(x, y); }}},
      {"atan2",
       {[](float x, float y) { return std::atan2(x, y); }, [](double x, double y) { return std::atan2(x, y); }}},
      {"fmod", {[](float x, float y) { return std::fmod(x, y); }, [](double x, double y) { return std::fmod(x, y); }}},
      {"fmax", {[](float x, float y) { return max_num(x, y); }, [](double x, double y) { return max_num(x, y); }}},
      {"fmin", {[](float x, float y) { return min_num(x, y); }, [](double x, double y) { return min_num(x, y); }}},
      {"hypot",
       {[](float x, float y) { return std::hypot(x, y); }, [](double x, double y) { return std::hypot(x, y); }}},
      {"copysign",
       {[](float x, float y) { return std::copysign(x, y); },
        [](double x, double y) { return std::copysign(x, y); }}},
      {"remainder",
       {[](float x, float y) { return std::remainder(x, y); },
        [](double x, double y) { return std::remainder(x, y); }}},
      {"fdim", {[](float x, float y) { return std::fdim(x, y); }, [](double x, double y) { return std::fdim(x, y); }}},
      {"nextafter",
       {[](float x, float y) { return std::nextafter(x, y); },
        [](double x, double y) { return std::nextafter(x, y); }}},
  };
  std::string name = symbol;
  if (unary.find(name) == unary.end() && binary.find(name) == binary.end() && !name.empty() && name.back() == 'f')
    name.pop_back();
  if (arity == 1) {
    auto u = unary.find(name);
    if (u == unary.end()) return false;
    *fn = out == Kind::F64 ? float1(out, u->second.d) : float1(out, u->second.f);
    return true;
  }
  if (arity == 2) {
    auto b = binary.find(name);
    if (b == binary.end()) return false;
    if (name == "powi") {  // __nv_powif(float, int): the exponent is an integer operand
      *fn = [out, f = b->second.f](const Elem* a) {
        return float_elem(round_float(out, f(static_cast<float>(a[0].f), static_cast<float>(a[1].i))));
      };
      return true;
    }
    *fn = out == Kind::F64 ? float2(out, b->second.d) : float2(out, b->second.f);
    return true;
  }
  return false;
}

}  // namespace

bool parse_constant(const std::string& literal, Kind kind, Elem* out, std::string* error) {
  std::string text = literal;
  if (text.rfind("dense<", 0) == 0) text = text.substr(6, text.size() - 7);
  if (text.empty() || text[0] == '[' || text[0] == '"') {
    *error = "a non-splat constant (" + literal.substr(0, 40) + ") is not supported";
    return false;
  }
  if (text == "true" || text == "false") {
    out->i = text == "true";
    return true;
  }
  if (is_float(kind)) {
    if (text.rfind("0x", 0) == 0) {  // MLIR prints non-finite floats as their bits
      *out = from_bits(kind, std::strtoull(text.c_str() + 2, nullptr, 16));
      return true;
    }
    out->f = round_float(kind, std::strtod(text.c_str(), nullptr));
    return true;
  }
  out->i = wrap_int(kind, static_cast<int64_t>(std::strtoull(text.c_str() + (text[0] == '-'), nullptr, 10)) *
                              (text[0] == '-' ? -1 : 1));
  return true;
}

Elementwise make_elementwise(const Op& op, const std::vector<const Type*>& types, ElementFn* fn,
                             std::string* error) {
  const std::string& n = op.name;
  if (op.result_types.size() != 1 || op.operands.empty()) return Elementwise::No;
  Kind out = op.result_types[0].elem.kind;
  Kind in = types[0]->elem.kind;
  size_t arity = types.size();
  auto unsupported = [&](const std::string& why) {
    *error = n + " " + why + " is not supported";
    return Elementwise::Unsupported;
  };

  // Integer arithmetic (two's complement, wrapping: MLIR's arith integer ops are modular).
  if (n == "arith.addi") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a + b; });
  else if (n == "arith.subi") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a - b; });
  else if (n == "arith.muli") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a * b; });
  else if (n == "arith.andi") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a & b; });
  else if (n == "arith.ori") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a | b; });
  else if (n == "arith.xori") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a ^ b; });
  else if (n == "arith.maxsi") *fn = int2_signed(out, [](int64_t a, int64_t b) { return a > b ? a : b; });
  else if (n == "arith.minsi") *fn = int2_signed(out, [](int64_t a, int64_t b) { return a < b ? a : b; });
  else if (n == "arith.maxui") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a > b ? a : b; });
  else if (n == "arith.minui") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return a < b ? a : b; });
  // Division by zero is undefined in MLIR and machine-specific in PTX; it must not stop the simulator, so it gives
  // a fixed value here: quotient all ones, remainder the dividend (what RISC-V defines). The one signed overflow,
  // MIN / -1, wraps to MIN with remainder 0.
  else if (n == "arith.divsi")
    *fn = int2_signed(out, [](int64_t a, int64_t b) -> int64_t {
      if (b == 0) return -1;
      if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
      return a / b;
    });
  else if (n == "arith.remsi")
    *fn = int2_signed(out, [](int64_t a, int64_t b) -> int64_t {
      if (b == 0) return a;
      if (b == -1) return 0;
      return a % b;
    });
  else if (n == "arith.divui")
    *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return b == 0 ? ~uint64_t{0} : a / b; });
  else if (n == "arith.remui") *fn = int2_unsigned(out, [](uint64_t a, uint64_t b) { return b == 0 ? a : a % b; });
  // Shifts by the width or more are poison in MLIR; here they shift everything out (or in, the sign).
  else if (n == "arith.shli" || n == "arith.shrui" || n == "arith.shrsi") {
    unsigned w = bit_width(out);
    int which = n == "arith.shli" ? 0 : n == "arith.shrui" ? 1 : 2;
    *fn = [out, w, which](const Elem* a) {
      uint64_t amount = unsigned_of(out, a[1].i);
      if (which == 0) return int_elem(wrap_int(out, amount >= w ? 0 : static_cast<int64_t>(
                                                                             unsigned_of(out, a[0].i) << amount)));
      if (which == 1) return int_elem(wrap_int(out, amount >= w ? 0 : static_cast<int64_t>(
                                                                             unsigned_of(out, a[0].i) >> amount)));
      return int_elem(wrap_int(out, signed_of(out, a[0].i) >> (amount >= w ? 63 : amount)));
    };
  } else if (n == "tt.mulhiui") {
    unsigned w = bit_width(out);
    *fn = [out, w](const Elem* a) {
      uint64_t x = unsigned_of(out, a[0].i), y = unsigned_of(out, a[1].i);
      if (w < 64) return int_elem(wrap_int(out, static_cast<int64_t>((x * y) >> w)));
      // The high half of a 64 x 64-bit product, from 32-bit halves (schoolbook).
      uint64_t lo_lo = (x & 0xffffffff) * (y & 0xffffffff), hi_lo = (x >> 32) * (y & 0xffffffff);
      uint64_t lo_hi = (x & 0xffffffff) * (y >> 32), hi_hi = (x >> 32) * (y >> 32);
      uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffff) + lo_hi;
      return int_elem(static_cast<int64_t>(hi_hi + (hi_lo >> 32) + (middle >> 32)));
    };
  } else if (n == "math.absi") {
    *fn = [out](const Elem* a) {
      int64_t v = signed_of(out, a[0].i);
      return int_elem(wrap_int(out, static_cast<int64_t>(v < 0 ? 0 - static_cast<uint64_t>(v) : v)));
    };
  }
  // Comparisons and selection.
  else if (n == "arith.cmpi") {
    if (op.keywords.empty() || !int_predicate(op.keywords[0], in, fn)) return unsupported("predicate");
  } else if (n == "arith.cmpf") {
    if (op.keywords.empty() || !float_predicate(op.keywords[0], fn)) return unsupported("predicate");
  } else if (n == "arith.select") {
    *fn = [](const Elem* a) { return a[0].i ? a[1] : a[2]; };
  }
  // Float arithmetic.
  else if (n == "arith.addf") *fn = float2(out, [](auto a, auto b) { return a + b; });
  else if (n == "arith.subf") *fn = float2(out, [](auto a, auto b) { return a - b; });
  else if (n == "arith.mulf") *fn = float2(out, [](auto a, auto b) { return a * b; });
  // tt.approx_divf (div.full.f32 on the device) is within 2 ulp of the quotient: the exact quotient stands in.
  else if (n == "arith.divf" || n == "tt.precise_divf" || n == "tt.approx_divf")
    *fn = float2(out, [](auto a, auto b) { return a / b; });
  else if (n == "arith.remf") *fn = float2(out, [](auto a, auto b) { return std::fmod(a, b); });
  else if (n == "arith.negf") *fn = float1(out, [](auto a) { return -a; });
  else if (n == "arith.maxnumf") *fn = float2(out, [](auto a, auto b) { return max_num(a, b); });
  else if (n == "arith.minnumf") *fn = float2(out, [](auto a, auto b) { return min_num(a, b); });
  else if (n == "arith.maximumf") *fn = float2(out, [](auto a, auto b) { return maximum(a, b); });
  else if (n == "arith.minimumf") *fn = float2(out, [](auto a, auto b) { return minimum(a, b); });
  else if (n == "tt.clampf") {
    bool propagate = false;
    for (const auto& k : op.keywords) propagate |= k == "all";
    if (propagate) *fn = float3(out, [](auto x, auto lo, auto hi) { return minimum(maximum(x, lo), hi); });
    else *fn = float3(out, [](auto x, auto lo, auto hi) { return min_num(max_num(x, lo), hi); });
  }
  // math dialect.
  else if (n == "math.exp") *fn = float1(out, [](auto a) { return std::exp(a); });
  else if (n == "math.exp2") *fn = float1(out, [](auto a) { return std::exp2(a); });
  else if (n == "math.expm1") *fn = float1(out, [](auto a) { return std::expm1(a); });
  else if (n == "math.log") *fn = float1(out, [](auto a) { return std::log(a); });
  else if (n == "math.log2") *fn = float1(out, [](auto a) { return std::log2(a); });
  else if (n == "math.log10") *fn = float1(out, [](auto a) { return std::log10(a); });
  else if (n == "math.log1p") *fn = float1(out, [](auto a) { return std::log1p(a); });
  else if (n == "math.sqrt" || n == "tt.precise_sqrt") *fn = float1(out, [](auto a) { return std::sqrt(a); });
  else if (n == "math.rsqrt") *fn = float1(out, [](auto a) { return decltype(a)(1) / std::sqrt(a); });
  else if (n == "math.absf") *fn = float1(out, [](auto a) { return std::fabs(a); });
  else if (n == "math.floor") *fn = float1(out, [](auto a) { return std::floor(a); });
  else if (n == "math.ceil") *fn = float1(out, [](auto a) { return std::ceil(a); });
  else if (n == "math.trunc") *fn = float1(out, [](auto a) { return std::trunc(a); });
  else if (n == "math.round") *fn = float1(out, [](auto a) { return std::round(a); });
  else if (n == "math.roundeven") *fn = float1(out, [](auto a) { return std::nearbyint(a); });
  else if (n == "math.tanh") *fn = float1(out, [](auto a) { return std::tanh(a); });
  else if (n == "math.erf") *fn = float1(out, [](auto a) { return std::erf(a); });
  else if (n == "math.sin") *fn = float1(out, [](auto a) { return std::sin(a); });
  else if (n == "math.cos") *fn = float1(out, [](auto a) { return std::cos(a); });
  else if (n == "math.tan") *fn = float1(out, [](auto a) { return std::tan(a); });
  else if (n == "math.atan") *fn = float1(out, [](auto a) { return std::atan(a); });
  else if (n == "math.cbrt") *fn = float1(out, [](auto a) { return std::cbrt(a); });
  else if (n == "math.atan2") *fn = float2(out, [](auto a, auto b) { return std::atan2(a, b); });
  else if (n == "math.powf") *fn = float2(out, [](auto a, auto b) { return std::pow(a, b); });
  else if (n == "math.copysign") *fn = float2(out, [](auto a, auto b) { return std::copysign(a, b); });
  else if (n == "math.fma") *fn = float3(out, [](auto a, auto b, auto c) { return std::fma(a, b, c); });
  // Conversions.
  else if (n == "arith.extsi" || n == "arith.trunci") {
    *fn = [in, out](const Elem* a) { return int_elem(wrap_int(out, signed_of(in, a[0].i))); };
  } else if (n == "arith.extui") {
    *fn = [in, out](const Elem* a) { return int_elem(wrap_int(out, static_cast<int64_t>(unsigned_of(in, a[0].i)))); };
  } else if (n == "arith.sitofp") {
    *fn = [in, out](const Elem* a) {
      int64_t v = signed_of(in, a[0].i);
      // int64 -> float directly: one correct rounding (through double could round twice).
      return float_elem(out == Kind::F32 ? static_cast<double>(static_cast<float>(v))
                                         : round_float(out, static_cast<double>(v)));
    };
  } else if (n == "arith.uitofp") {
    *fn = [in, out](const Elem* a) {
      uint64_t v = unsigned_of(in, a[0].i);
      return float_elem(out == Kind::F32 ? static_cast<double>(static_cast<float>(v))
                                         : round_float(out, static_cast<double>(v)));
    };
  } else if (n == "arith.fptosi" || n == "arith.fptoui") {
    bool is_signed = n == "arith.fptosi";
    *fn = [out, is_signed](const Elem* a) { return int_elem(float_to_int(a[0].f, out, is_signed)); };
  } else if (n == "arith.extf" || n == "arith.truncf" || n == "tt.fp_to_fp") {
    *fn = [out](const Elem* a) { return float_elem(round_float(out, a[0].f)); };
  } else if (n == "arith.bitcast" || n == "tt.bitcast") {
    if (bit_width(in) != bit_width(out)) return unsupported("between widths");
    *fn = [in, out](const Elem* a) { return from_bits(out, bits_of(in, a[0])); };
  } else if (n == "tt.int_to_ptr" || n == "tt.ptr_to_int") {
    *fn = [in, out](const Elem* a) {
      return int_elem(out == Kind::Ptr ? static_cast<int64_t>(unsigned_of(in, a[0].i)) : wrap_int(out, a[0].i));
    };
  } else if (n == "tt.addptr") {
    // The offset counts elements of the pointee type (TritonOps.td: AddPtrOp), read as signed.
    if (arity != 2) return unsupported("with these operands");
    Kind offset = types[1]->elem.kind;
    auto size = static_cast<int64_t>(byte_size(types[0]->elem.pointee));
    *fn = [offset, size](const Elem* a) {
      return int_elem(static_cast<int64_t>(static_cast<uint64_t>(a[0].i) +
                                           static_cast<uint64_t>(signed_of(offset, a[1].i) * size)));
    };
  } else if (n == "tt.extern_elementwise") {
    std::string symbol;
    attribute_string(op.attributes, "symbol", &symbol);
    if (!libdevice(symbol, out, in, arity, fn)) {
      *error = "tt.extern_elementwise " + symbol + " is not supported";
      return Elementwise::Unsupported;
    }
  } else {
    return Elementwise::No;
  }
  return Elementwise::Yes;
}

}  // namespace simtriton
