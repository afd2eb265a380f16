// Element types of ATen's copy kernels and c10's conversions between them, as the device computes them: what
// static_cast inside a copy lambda (converting_copy_kernel_cuda, Copy<dst_t, src_t>) and c10::fetch_and_cast /
// c10::cast_and_store (dynamic casting in CUDALoops.cuh) do to one element.
//
// Source: c10/util/TypeCast.h (static_cast_with_inter_type, c10::convert, fetch_and_cast, cast_and_store),
// c10/core/ScalarType.h (the ScalarType numbering), c10/util/Half.h and BFloat16.h (rounding to nearest even).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace simaten {

enum class Element {
  Bool, UInt8, Int8, Int16, UInt16, Int32, UInt32, Int64, UInt64,
  Half, BFloat16, Float, Double,
  ComplexHalf, ComplexFloat, ComplexDouble,
  Opaque,  // copied bit for bit, never converted: qint*, bits*, Float8_*, Float4_e2m1fn_x2, complex<BFloat16>
};

struct ElementType {
  Element kind;
  size_t size;
  bool operator==(const ElementType&) const = default;
};

// A type as torch 2.15's demangled kernel names spell it ("long", "c10::Half", "c10::complex<float>", "c10::qint8");
// nullopt for a type that is no tensor element.
std::optional<ElementType> element_of_type(std::string_view type);

// c10::ScalarType's value (an int8_t in LoadWithCast, StoreWithCast and the dtypes of gpu_kernel_impl's closure);
// nullopt for types the dynamic casts do not handle (the quantized ones: cast_and_store reports them unsupported).
std::optional<ElementType> element_of_scalar_type(int scalar_type);

// *to = static_cast_with_inter_type<to, from>::apply(*from): the device's conversion of one element. Same types copy
// bits; false (nothing written) when a conversion involves an Opaque type.
bool cast_element(ElementType from, const void* src, ElementType to, void* dst);

}  // namespace simaten
