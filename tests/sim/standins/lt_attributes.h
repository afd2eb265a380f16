// The attributes of cuBLASLt's descriptors (matmul, matrix layout, preference, algo configuration): each has a fixed
// size and a default, both documented with the attribute in cublasLt.h, and is set and read as raw bytes. The checks
// are the ones cublasLt.h documents for every *SetAttribute / *GetAttribute: an unknown attribute, a null buffer or a
// size that is not the attribute's own is CUBLAS_STATUS_INVALID_VALUE; a get of size 0 reports the size needed.
#pragma once

#include <cublas_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <span>

namespace standins::lt {

struct AttributeSpec {
  int id;
  uint8_t size;           // bytes: 1, 2, 4 or 8
  uint64_t default_bits;  // the default value's bytes, little-endian (-1 as a 32-bit value: 0xffffffff)
};

class Attributes {
 public:
  explicit Attributes(std::span<const AttributeSpec> specs) : specs_(specs) {}

  cublasStatus_t set(int id, const void* buffer, size_t size) {
    const AttributeSpec* spec = find(id);
    if (spec == nullptr || buffer == nullptr || size != spec->size) return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t bits = 0;
    std::memcpy(&bits, buffer, size);
    values_[id] = bits;
    return CUBLAS_STATUS_SUCCESS;
  }

  cublasStatus_t get(int id, void* buffer, size_t size, size_t* written) const {
    const AttributeSpec* spec = find(id);
    if (spec == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0) {
      if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
      *written = spec->size;
      return CUBLAS_STATUS_SUCCESS;
    }
    if (buffer == nullptr || size != spec->size) return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t bits = bits_of(*spec);
    std::memcpy(buffer, &bits, size);
    if (written != nullptr) *written = size;
    return CUBLAS_STATUS_SUCCESS;
  }

  // The value of a known attribute as T (whose size is the attribute's).
  template <typename T>
  T value(int id) const {
    T out{};
    if (const AttributeSpec* spec = find(id); spec != nullptr && spec->size == sizeof(T)) {
      uint64_t bits = bits_of(*spec);
      std::memcpy(&out, &bits, sizeof(T));
    }
    return out;
  }

  template <typename T>
  void put(int id, T value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    values_[id] = bits;
  }

 private:
  const AttributeSpec* find(int id) const {
    for (const AttributeSpec& spec : specs_)
      if (spec.id == id) return &spec;
    return nullptr;
  }

  uint64_t bits_of(const AttributeSpec& spec) const {
    auto it = values_.find(spec.id);
    return it != values_.end() ? it->second : spec.default_bits;
  }

  std::span<const AttributeSpec> specs_;
  std::map<int, uint64_t> values_;  // only the attributes set so far
};

}  // namespace standins::lt
