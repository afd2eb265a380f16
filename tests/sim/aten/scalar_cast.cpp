#include "scalar_cast.h"

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include "aten_device.h"

namespace simaten {

std::optional<ElementType> element_of_type(std::string_view type) {
  static const auto* table = new std::unordered_map<std::string_view, ElementType>{
      {"bool", {Element::Bool, 1}}, {"unsigned char", {Element::UInt8, 1}}, {"signed char", {Element::Int8, 1}},
      {"short", {Element::Int16, 2}}, {"unsigned short", {Element::UInt16, 2}}, {"int", {Element::Int32, 4}},
      {"unsigned int", {Element::UInt32, 4}}, {"long", {Element::Int64, 8}}, {"unsigned long", {Element::UInt64, 8}},
      {"c10::Half", {Element::Half, 2}}, {"c10::BFloat16", {Element::BFloat16, 2}}, {"float", {Element::Float, 4}},
      {"double", {Element::Double, 8}}, {"c10::complex<c10::Half>", {Element::ComplexHalf, 4}},
      {"c10::complex<float>", {Element::ComplexFloat, 8}}, {"c10::complex<double>", {Element::ComplexDouble, 16}},
      {"c10::complex<c10::BFloat16>", {Element::Opaque, 4}}, {"c10::qint8", {Element::Opaque, 1}},
      {"c10::quint8", {Element::Opaque, 1}}, {"c10::qint32", {Element::Opaque, 4}},
      {"c10::quint4x2", {Element::Opaque, 1}}, {"c10::quint2x4", {Element::Opaque, 1}},
      {"c10::bits1x8", {Element::Opaque, 1}}, {"c10::bits2x4", {Element::Opaque, 1}},
      {"c10::bits4x2", {Element::Opaque, 1}}, {"c10::bits8", {Element::Opaque, 1}},
      {"c10::bits16", {Element::Opaque, 2}}, {"c10::Float8_e5m2", {Element::Opaque, 1}},
      {"c10::Float8_e4m3fn", {Element::Opaque, 1}}, {"c10::Float8_e5m2fnuz", {Element::Opaque, 1}},
      {"c10::Float8_e4m3fnuz", {Element::Opaque, 1}}, {"c10::Float8_e8m0fnu", {Element::Opaque, 1}},
      {"c10::Float4_e2m1fn_x2", {Element::Opaque, 1}}};
  auto it = table->find(type);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

std::optional<ElementType> element_of_scalar_type(int scalar_type) {
  // c10/core/ScalarType.h, AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS: Byte 0, Char 1, Short 2, Int 3, Long 4,
  // Half 5, Float 6, Double 7, ComplexHalf 8, ComplexFloat 9, ComplexDouble 10, Bool 11, (QInt8 12, QUInt8 13,
  // QInt32 14), BFloat16 15, ..., UInt16 27, UInt32 28, UInt64 29.
  switch (scalar_type) {
    case 0: return ElementType{Element::UInt8, 1};
    case 1: return ElementType{Element::Int8, 1};
    case 2: return ElementType{Element::Int16, 2};
    case 3: return ElementType{Element::Int32, 4};
    case 4: return ElementType{Element::Int64, 8};
    case 5: return ElementType{Element::Half, 2};
    case 6: return ElementType{Element::Float, 4};
    case 7: return ElementType{Element::Double, 8};
    case 8: return ElementType{Element::ComplexHalf, 4};
    case 9: return ElementType{Element::ComplexFloat, 8};
    case 10: return ElementType{Element::ComplexDouble, 16};
    case 11: return ElementType{Element::Bool, 1};
    case 15: return ElementType{Element::BFloat16, 2};
    case 27: return ElementType{Element::UInt16, 2};
    case 28: return ElementType{Element::UInt32, 4};
    case 29: return ElementType{Element::UInt64, 8};
    default: return std::nullopt;
  }
}

namespace {

// One source element, exactly: integers as 64-bit integers, floating values (Half, BFloat16 and float widen exactly)
// as double, with the imaginary part of complex ones.
struct Value {
  enum class Kind { Signed, Unsigned, Single, Double } kind = Kind::Signed;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
  bool complex = false;
};

template <typename T>
T read(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void write(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

Value load(Element kind, const void* p) {
  Value v;
  auto single = [&](double re, double im, bool complex) {
    v.kind = Value::Kind::Single;
    v.re = re;
    v.im = im;
    v.complex = complex;
  };
  switch (kind) {
    case Element::Bool: v.i = read<uint8_t>(p) != 0; break;
    case Element::UInt8: v.i = read<uint8_t>(p); break;
    case Element::Int8: v.i = read<int8_t>(p); break;
    case Element::Int16: v.i = read<int16_t>(p); break;
    case Element::UInt16: v.i = read<uint16_t>(p); break;
    case Element::Int32: v.i = read<int32_t>(p); break;
    case Element::UInt32: v.i = read<uint32_t>(p); break;
    case Element::Int64: v.i = read<int64_t>(p); break;
    case Element::UInt64:
      v.kind = Value::Kind::Unsigned;
      v.u = read<uint64_t>(p);
      break;
    case Element::Half: single(half_to_float(read<uint16_t>(p)), 0, false); break;
    case Element::BFloat16: single(bfloat16_to_float(read<uint16_t>(p)), 0, false); break;
    case Element::Float: single(read<float>(p), 0, false); break;
    case Element::ComplexHalf:
      single(half_to_float(read<uint16_t>(p)), half_to_float(read<uint16_t>(static_cast<const char*>(p) + 2)), true);
      break;
    case Element::ComplexFloat:
      single(read<float>(p), read<float>(static_cast<const char*>(p) + 4), true);
      break;
    case Element::Double:
    case Element::ComplexDouble:
      v.kind = Value::Kind::Double;
      v.re = read<double>(p);
      v.complex = kind == Element::ComplexDouble;
      if (v.complex) v.im = read<double>(static_cast<const char*>(p) + 8);
      break;
    case Element::Opaque: break;
  }
  return v;
}

// static_cast<T>(real part) for T float or double: integers convert directly (round to nearest even), not through
// double, as the device's cvt.rn does.
template <typename T>
T to_floating(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Signed: return static_cast<T>(v.i);
    case Value::Kind::Unsigned: return static_cast<T>(v.u);
    default: return static_cast<T>(v.re);
  }
}

// static_cast of the real part to an integer of `bits` bits: integers wrap (two's complement); floating values
// truncate toward zero and saturate to the range of a 32- or 64-bit integer, NaN giving 0, as the device's cvt.rzi
// does, and narrower types keep the low bits of the 32-bit result (nvcc converts to a register-wide integer, so CUDA
// turns float 215.26 into int8 -41 as the CPU does: intel/torch-xpu-ops#889). Out-of-range values are undefined
// behaviour in C++: this is the device's answer, not necessarily the CPU's.
uint64_t to_integer(const Value& v, int bits, bool is_signed) {
  if (v.kind == Value::Kind::Signed) return static_cast<uint64_t>(v.i);
  if (v.kind == Value::Kind::Unsigned) return v.u;
  if (bits < 32) return to_integer(v, 32, is_signed);  // stored by its low bytes
  if (std::isnan(v.re)) return 0;
  double t = std::trunc(v.re);
  double low = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  double high = is_signed ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);  // exclusive
  if (t <= low) return is_signed ? static_cast<uint64_t>(static_cast<int64_t>(low)) : 0;
  if (t >= high) {
    if (is_signed) return (uint64_t{1} << (bits - 1)) - 1;
    return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  }
  return is_signed ? static_cast<uint64_t>(static_cast<int64_t>(t)) : static_cast<uint64_t>(t);
}

bool is_zero(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Signed: return v.i == 0;
    case Value::Kind::Unsigned: return v.u == 0;
    default: return v.re == 0;  // NaN is true, as static_cast<bool>(NaN)
  }
}

void store_integer(void* p, uint64_t bits, size_t size) { std::memcpy(p, &bits, size); }  // little-endian low bytes

}  // namespace

bool cast_element(ElementType from, const void* src, ElementType to, void* dst) {
  if (from == to) {
    std::memcpy(dst, src, from.size);
    return true;
  }
  if (from.kind == Element::Opaque || to.kind == Element::Opaque) return false;
  Value v = load(from.kind, src);
  // A complex source converted to a real type keeps its real part (needs_real / maybe_real in TypeCast.h).
  switch (to.kind) {
    case Element::Bool: write<uint8_t>(dst, is_zero(v) ? 0 : 1); break;
    case Element::UInt8: {
      // static_cast_with_inter_type<uint8_t, src_t>: through int64_t, so that negative floating values wrap as on
      // the CPU.
      Value wide = v;
      if (v.kind == Value::Kind::Single || v.kind == Value::Kind::Double) {
        wide.kind = Value::Kind::Signed;
        wide.i = static_cast<int64_t>(to_integer(v, 64, true));
      }
      store_integer(dst, to_integer(wide, 8, false), 1);
      break;
    }
    case Element::Int8: store_integer(dst, to_integer(v, 8, true), 1); break;
    case Element::Int16: store_integer(dst, to_integer(v, 16, true), 2); break;
    case Element::UInt16: store_integer(dst, to_integer(v, 16, false), 2); break;
    case Element::Int32: store_integer(dst, to_integer(v, 32, true), 4); break;
    case Element::UInt32: store_integer(dst, to_integer(v, 32, false), 4); break;
    case Element::Int64: store_integer(dst, to_integer(v, 64, true), 8); break;
    case Element::UInt64: store_integer(dst, to_integer(v, 64, false), 8); break;
    // c10::Half and c10::BFloat16 are constructed from float: other types reach them through float.
    case Element::Half: write<uint16_t>(dst, float_to_half(to_floating<float>(v))); break;
    case Element::BFloat16: write<uint16_t>(dst, float_to_bfloat16(to_floating<float>(v))); break;
    case Element::Float: write<float>(dst, to_floating<float>(v)); break;
    case Element::Double: write<double>(dst, to_floating<double>(v)); break;
    // c10::complex<T>(real) has imaginary part 0; complex to complex converts each part.
    case Element::ComplexHalf: {
      float im = v.complex ? static_cast<float>(v.im) : 0.0f;
      write<uint16_t>(dst, float_to_half(to_floating<float>(v)));
      write<uint16_t>(static_cast<char*>(dst) + 2, float_to_half(im));
      break;
    }
    case Element::ComplexFloat:
      write<float>(dst, to_floating<float>(v));
      write<float>(static_cast<char*>(dst) + 4, v.complex ? static_cast<float>(v.im) : 0.0f);
      break;
    case Element::ComplexDouble:
      write<double>(dst, to_floating<double>(v));
      write<double>(static_cast<char*>(dst) + 8, v.complex ? v.im : 0.0);
      break;
    case Element::Opaque: return false;
  }
  return true;
}

}  // namespace simaten
