#include "aten_device.h"
#include "wheel_facts.h"

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace simaten {

// ---- kernel names ----------------------------------------------------------------------------------------------------

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string demangle(const char* mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return {};
  std::string result(text);
  std::free(text);
  return result;
}

bool opens(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool closes(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

// The index just past the group opened at `open` (s[open] is an opening bracket), or npos.
size_t past_group(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    // "operator()" and "operator->" are names, not brackets; lambdas' "{lambda(int)#1}" nest normally.
    if (s.substr(i, 10) == "operator()") {
      i += 9;
      continue;
    }
    if (opens(s[i])) ++depth;
    if (closes(s[i]) && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<std::string> split_top_level(std::string_view list) {
  std::vector<std::string> parts;
  if (trim(list).empty()) return parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list.substr(i, 10) == "operator()") {
      i += 9;
      continue;
    }
    char c = i < list.size() ? list[i] : ',';
    if (opens(c)) ++depth;
    if (closes(c)) --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back(trim(list.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  return parts;
}

std::optional<KernelName> parse_kernel_name(const char* mangled, std::string_view function) {
  if (mangled == nullptr) return std::nullopt;
  KernelName name;
  name.demangled = demangle(mangled);
  std::string_view text = name.demangled;
  // The kernel's own name: "::function<" at top level (the return type "void " precedes it).
  std::string needle = "::" + std::string(function) + "<";
  size_t at = text.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = at + needle.size() - 1;
  size_t close = past_group(text, open);
  if (close == std::string_view::npos || close >= text.size() || text[close] != '(') return std::nullopt;
  name.template_args = split_top_level(text.substr(open + 1, close - open - 2));
  size_t params_end = past_group(text, close);
  if (params_end == std::string_view::npos) return std::nullopt;
  std::string_view params = text.substr(close + 1, params_end - close - 2);
  if (trim(params) != "void") name.params = split_top_level(params);
  return name;
}

const KernelName* running_kernel(std::string_view function) {
  const char* mangled = simcuda_running_kernel_name();
  if (mangled == nullptr) return nullptr;
  // Parsed once per kernel: names live as long as the process (the registry never frees them).
  static std::mutex mutex;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<KernelName>>;
  std::lock_guard lock(mutex);
  auto it = cache->find(mangled);
  if (it == cache->end()) {
    auto parsed = parse_kernel_name(mangled, function);
    it = cache->emplace(mangled, parsed ? std::make_unique<KernelName>(std::move(*parsed)) : nullptr).first;
  }
  return it->second.get();
}

std::optional<int64_t> integer_literal(std::string_view text) {
  text = trim(text);
  while (!text.empty() && (text.back() == 'u' || text.back() == 'l')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}

std::optional<std::vector<std::string>> template_args_of(std::string_view text, std::string_view name) {
  std::string needle = std::string(name) + "<";
  for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
    if (at > 0 && text[at - 1] != ':' && text[at - 1] != ' ' && text[at - 1] != '<' && text[at - 1] != '(') continue;
    size_t open = at + needle.size() - 1;
    size_t close = past_group(text, open);
    if (close == std::string_view::npos) return std::nullopt;
    return split_top_level(text.substr(open + 1, close - open - 2));
  }
  return std::nullopt;
}

// ---- scalar types ----------------------------------------------------------------------------------------------------

namespace {

std::string bare_type(std::string_view type) {
  // Drops cv-qualifiers: "float const" -> "float".
  std::string result;
  size_t start = 0;
  type = trim(type);
  while (start < type.size()) {
    size_t end = type.find(' ', start);
    if (end == std::string_view::npos) end = type.size();
    std::string_view word = type.substr(start, end - start);
    if (!word.empty() && word != "const" && word != "volatile") {
      if (!result.empty()) result += ' ';
      result += word;
    }
    start = end + 1;
  }
  return result;
}

}  // namespace

std::optional<TypeLayout> type_layout(std::string_view type) {
  std::string bare = bare_type(type);
  if (bare.empty()) return std::nullopt;
  if (bare.back() == '*' || bare.back() == '&') return TypeLayout{8, 8};
  static const auto* table = new std::unordered_map<std::string, TypeLayout>{
      {"bool", {1, 1}}, {"char", {1, 1}}, {"signed char", {1, 1}}, {"unsigned char", {1, 1}},
      {"short", {2, 2}}, {"unsigned short", {2, 2}}, {"int", {4, 4}}, {"unsigned int", {4, 4}},
      {"long", {8, 8}}, {"unsigned long", {8, 8}}, {"long long", {8, 8}}, {"unsigned long long", {8, 8}},
      {"float", {4, 4}}, {"double", {8, 8}},
      {"c10::Half", {2, 2}}, {"c10::BFloat16", {2, 2}},
      {"c10::complex<c10::Half>", {4, 4}}, {"c10::complex<c10::BFloat16>", {4, 4}},
      {"c10::complex<float>", {8, 8}}, {"c10::complex<double>", {16, 16}},
      {"c10::Float8_e4m3fn", {1, 1}}, {"c10::Float8_e4m3fnuz", {1, 1}}, {"c10::Float8_e5m2", {1, 1}},
      {"c10::Float8_e5m2fnuz", {1, 1}}, {"c10::Float8_e8m0fnu", {1, 1}},
      {"c10::qint8", {1, 1}}, {"c10::quint8", {1, 1}}, {"c10::qint32", {4, 4}}, {"c10::quint4x2", {1, 1}},
      {"c10::quint2x4", {1, 1}}};
  if (auto it = table->find(bare); it != table->end()) return it->second;
  // template <int N> struct alignas(N) OpaqueType { char data[N]; }; (ScatterGatherKernel.cu and friends)
  if (auto args = template_args_of(bare, "OpaqueType"); args && args->size() == 1) {
    if (auto n = integer_literal((*args)[0]); n && *n > 0 && *n <= 64)
      return TypeLayout{static_cast<size_t>(*n), static_cast<size_t>(*n)};
  }
  return std::nullopt;
}

std::optional<Floating> floating_type(std::string_view type) {
  std::string bare = bare_type(type);
  if (bare == "float") return Floating::Float;
  if (bare == "double") return Floating::Double;
  if (bare == "c10::Half") return Floating::Half;
  if (bare == "c10::BFloat16") return Floating::BFloat16;
  return std::nullopt;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t float_to_half(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {  // subnormal half (or zero): round abs / 2^-24 to an integer, nearest even
    float magnitude;
    std::memcpy(&magnitude, &abs, sizeof magnitude);
    float scaled = magnitude * 16777216.0f;  // exact: a power of two
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  uint32_t mantissa_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t{b} << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t float_to_bfloat16(float value) {
  if (std::isnan(value)) return 0x7fc0;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t rounding_bias = ((bits >> 16) & 1u) + 0x7fffu;
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

double load(Floating type, const void* data, int64_t index) {
  switch (type) {
    case Floating::Float: return static_cast<const float*>(data)[index];
    case Floating::Double: return static_cast<const double*>(data)[index];
    case Floating::Half: return half_to_float(static_cast<const uint16_t*>(data)[index]);
    case Floating::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(data)[index]);
  }
  return 0;
}

void store(Floating type, void* data, int64_t index, double value) {
  switch (type) {
    case Floating::Float: static_cast<float*>(data)[index] = static_cast<float>(value); break;
    case Floating::Double: static_cast<double*>(data)[index] = value; break;
    case Floating::Half: static_cast<uint16_t*>(data)[index] = float_to_half(static_cast<float>(value)); break;
    case Floating::BFloat16:
      static_cast<uint16_t*>(data)[index] = float_to_bfloat16(static_cast<float>(value));
      break;
  }
}

double round_to(Floating type, double value) {
  switch (type) {
    case Floating::Float: return static_cast<float>(value);
    case Floating::Double: return value;
    case Floating::Half: return half_to_float(float_to_half(static_cast<float>(value)));
    case Floating::BFloat16: return bfloat16_to_float(float_to_bfloat16(static_cast<float>(value)));
  }
  return value;
}

std::optional<Integral> integral_type(std::string_view type) {
  std::string bare = bare_type(type);
  if (bare == "signed char" || bare == "char") return Integral::Int8;
  if (bare == "unsigned char" || bare == "bool") return Integral::UInt8;
  if (bare == "short") return Integral::Int16;
  if (bare == "unsigned short") return Integral::UInt16;
  if (bare == "int") return Integral::Int32;
  if (bare == "unsigned int") return Integral::UInt32;
  if (bare == "long" || bare == "long long") return Integral::Int64;
  if (bare == "unsigned long" || bare == "unsigned long long") return Integral::UInt64;
  return std::nullopt;
}

size_t size_of(Integral type) {
  switch (type) {
    case Integral::Int8:
    case Integral::UInt8: return 1;
    case Integral::Int16:
    case Integral::UInt16: return 2;
    case Integral::Int32:
    case Integral::UInt32: return 4;
    case Integral::Int64:
    case Integral::UInt64: return 8;
  }
  return 8;
}

bool is_unsigned(Integral type) {
  return type == Integral::UInt8 || type == Integral::UInt16 || type == Integral::UInt32 || type == Integral::UInt64;
}

int64_t load_integral(Integral type, const void* data, int64_t index) {
  switch (type) {
    case Integral::Int8: return static_cast<const int8_t*>(data)[index];
    case Integral::UInt8: return static_cast<const uint8_t*>(data)[index];
    case Integral::Int16: return static_cast<const int16_t*>(data)[index];
    case Integral::UInt16: return static_cast<const uint16_t*>(data)[index];
    case Integral::Int32: return static_cast<const int32_t*>(data)[index];
    case Integral::UInt32: return static_cast<const uint32_t*>(data)[index];
    case Integral::Int64: return static_cast<const int64_t*>(data)[index];
    case Integral::UInt64: return static_cast<int64_t>(static_cast<const uint64_t*>(data)[index]);
  }
  return 0;
}

int64_t wrap_to(Integral type, int64_t value) {
  switch (type) {
    case Integral::Int8: return static_cast<int8_t>(value);
    case Integral::UInt8: return static_cast<uint8_t>(value);
    case Integral::Int16: return static_cast<int16_t>(value);
    case Integral::UInt16: return static_cast<uint16_t>(value);
    case Integral::Int32: return static_cast<int32_t>(value);
    case Integral::UInt32: return static_cast<uint32_t>(value);
    case Integral::Int64:
    case Integral::UInt64: return value;
  }
  return value;
}

// ---- ATen's parameter structs --------------------------------------------------------------------------------------

namespace {

size_t round_up(size_t value, size_t align) { return (value + align - 1) / align * align; }

}  // namespace

size_t tensor_info_size(size_t index_size) {
  return round_up(8 + 2 * kMaxTensorInfoDims * index_size + 4, 8);
}

std::optional<TensorInfo> read_tensor_info(const unsigned char* bytes, size_t index_size) {
  TensorInfo info;
  info.index_size = index_size;
  info.data = field<unsigned char*>(bytes, 0);
  for (int d = 0; d < kMaxTensorInfoDims; ++d) {
    size_t size_at = 8 + static_cast<size_t>(d) * index_size;
    size_t stride_at = 8 + (kMaxTensorInfoDims + static_cast<size_t>(d)) * index_size;
    info.sizes[d] = index_size == 4 ? field<uint32_t>(bytes, size_at) : field<uint64_t>(bytes, size_at);
    info.strides[d] = index_size == 4 ? field<uint32_t>(bytes, stride_at) : field<uint64_t>(bytes, stride_at);
  }
  info.dims = field<int>(bytes, 8 + 2 * kMaxTensorInfoDims * index_size);
  if (info.dims < 1 || info.dims > kMaxTensorInfoDims) return std::nullopt;
  return info;
}

uint64_t index_to_offset(uint64_t linear, const TensorInfo& info, int dims_template) {
  uint64_t mask = info.index_size == 4 ? 0xffffffffull : ~0ull;
  if (dims_template == -2) return linear & mask;
  int dims = dims_template == -1 ? info.dims : dims_template;
  uint64_t offset = 0;
  for (int i = dims - 1; i > 0; --i) {
    uint64_t size = info.sizes[i];
    if (size == 0) return offset;  // the device would divide by zero; no tensor reaches here with one
    offset = (offset + (linear % size) * info.strides[i]) & mask;
    linear /= size;
  }
  return (offset + linear * info.strides[0]) & mask;
}

size_t packed_accessor_size(int dims, size_t index_size) {
  return round_up(8 + 2 * static_cast<size_t>(dims) * index_size, 8);
}

PackedAccessor read_packed_accessor(const unsigned char* bytes, int dims, size_t index_size) {
  PackedAccessor accessor;
  accessor.dims = dims;
  accessor.data = field<unsigned char*>(bytes, 0);
  for (int d = 0; d < dims && d < 8; ++d) {
    size_t size_at = 8 + static_cast<size_t>(d) * index_size;
    size_t stride_at = 8 + static_cast<size_t>(dims + d) * index_size;
    accessor.sizes[d] = index_size == 4 ? field<int32_t>(bytes, size_at) : field<int64_t>(bytes, size_at);
    accessor.strides[d] = index_size == 4 ? field<int32_t>(bytes, stride_at) : field<int64_t>(bytes, stride_at);
  }
  return accessor;
}

size_t offset_calculator_size(int nargs) {
  return 4 + kOffsetCalculatorMaxDims * 12 + kOffsetCalculatorMaxDims * static_cast<size_t>(nargs) * 4;
}

std::optional<OffsetCalculator> read_offset_calculator(const unsigned char* bytes, int nargs) {
  if (nargs < 1 || nargs > 4) return std::nullopt;
  OffsetCalculator calc;
  calc.nargs = nargs;
  calc.dims = field<int>(bytes, 0);
  if (calc.dims < 0 || calc.dims > kOffsetCalculatorMaxDims) return std::nullopt;
  for (int d = 0; d < kOffsetCalculatorMaxDims; ++d) {
    calc.divisors[d] = field<uint32_t>(bytes, 4 + static_cast<size_t>(d) * 12);
    for (int a = 0; a < nargs; ++a)
      calc.strides[d][a] = field<uint32_t>(bytes, 4 + kOffsetCalculatorMaxDims * 12 +
                                                      (static_cast<size_t>(d) * nargs + a) * 4);
  }
  for (int d = 0; d < calc.dims; ++d)
    if (calc.divisors[d] == 0) return std::nullopt;
  return calc;
}

bool OffsetCalculator::get(uint32_t linear, uint32_t* offsets) const {
  for (int a = 0; a < nargs; ++a) offsets[a] = 0;
  for (int d = 0; d < dims; ++d) {
    if (divisors[d] == 0) return false;
    uint32_t mod = linear % divisors[d];
    linear /= divisors[d];
    for (int a = 0; a < nargs; ++a) offsets[a] += mod * strides[d][a];
  }
  return true;
}

std::optional<size_t> param_size(std::string_view type) {
  if (auto layout = type_layout(type)) return layout->size;
  std::string bare = bare_type(type);
  // at::cuda::detail::TensorInfo<T, IndexType>
  if (bare.starts_with("at::cuda::detail::TensorInfo<")) {
    auto args = template_args_of(bare, "TensorInfo");
    if (!args || args->size() != 2) return std::nullopt;
    auto index = integral_type((*args)[1]);
    if (!index) return std::nullopt;
    return tensor_info_size(size_of(*index));
  }
  // torch::headeronly::detail::GenericPackedTensorAccessor<TensorAccessor<...>, IndexBoundsCheck<N, index_t>, T, N,
  // PtrTraits, index_t> (2.15) or at::GenericPackedTensorAccessor<T, N, PtrTraits, index_t> (earlier releases).
  if (bare.find("GenericPackedTensorAccessor<") != std::string::npos) {
    auto args = template_args_of(bare, "GenericPackedTensorAccessor");
    if (!args) return std::nullopt;
    std::optional<int64_t> dims;
    std::optional<Integral> index;
    if (args->size() == 6) {
      dims = integer_literal((*args)[3]);
      index = integral_type((*args)[5]);
    } else if (args->size() == 4) {
      dims = integer_literal((*args)[1]);
      index = integral_type((*args)[3]);
    }
    if (!dims || !index || *dims < 1 || *dims > 8) return std::nullopt;
    return packed_accessor_size(static_cast<int>(*dims), size_of(*index));
  }
  return std::nullopt;
}

int param_sizes_from_types(const char* mangled_name, size_t* sizes, unsigned max_count) {
  std::string demangled = demangle(mangled_name);
  std::string_view text = demangled;
  // The parameter list: the last top-level parenthesised group.
  if (text.empty() || text.back() != ')') return -1;
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = text.size(); i-- > 0;) {
    if (closes(text[i])) ++depth;
    if (opens(text[i])) --depth;
    if (depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return -1;
  auto params = split_top_level(text.substr(open + 1, text.size() - open - 2));
  if (params.size() > max_count) return -1;
  for (size_t i = 0; i < params.size(); ++i) {
    auto size = param_size(params[i]);
    if (!size) return -1;
    sizes[i] = *size;
  }
  return static_cast<int>(params.size());
}

// ---- device-side asserts ---------------------------------------------------------------------------------------------

void FailedThreads::fail(const AssertSite& site, dim3 block_idx, dim3 thread_idx) {
  any_ = true;
  auto key = std::make_pair(linear_block(block_idx), linear_thread(thread_idx));
  if (failed_.size() >= kMaxAssertLines && key > failed_.rbegin()->first) return;
  failed_.emplace(key, &site);  // a thread that already failed keeps its first site
  if (failed_.size() > kMaxAssertLines) failed_.erase(std::prev(failed_.end()));
}

void FailedThreads::fail_all(const AssertSite& site) {
  // In (block, thread) order: only the first kMaxAssertLines threads can be kept.
  size_t added = 0;
  for (unsigned z = 0; z < grid_.z; ++z)
    for (unsigned y = 0; y < grid_.y; ++y)
      for (unsigned x = 0; x < grid_.x; ++x)
        for (unsigned tz = 0; tz < block_.z; ++tz)
          for (unsigned ty = 0; ty < block_.y; ++ty)
            for (unsigned tx = 0; tx < block_.x; ++tx) {
              if (added++ >= kMaxAssertLines) return;
              fail(site, dim3{x, y, z}, dim3{tx, ty, tz});
            }
}

void FailedThreads::fail_blocks_x(const AssertSite& site, unsigned block_x) {
  size_t added = 0;
  for (unsigned z = 0; z < grid_.z; ++z)
    for (unsigned y = 0; y < grid_.y; ++y)
      for (unsigned tz = 0; tz < block_.z; ++tz)
        for (unsigned ty = 0; ty < block_.y; ++ty)
          for (unsigned tx = 0; tx < block_.x; ++tx) {
            if (added++ >= kMaxAssertLines) return;
            fail(site, dim3{block_x, y, z}, dim3{tx, ty, tz});
          }
}

void FailedThreads::report() const {
  if (reported_) return;
  reported_ = true;
  for (const auto& [key, site] : failed_) {
    auto [block, thread] = key;
    dim3 b{static_cast<unsigned>(block % grid_.x), static_cast<unsigned>(block / grid_.x % grid_.y),
           static_cast<unsigned>(block / grid_.x / grid_.y)};
    dim3 t{static_cast<unsigned>(thread % block_.x), static_cast<unsigned>(thread / block_.x % block_.y),
           static_cast<unsigned>(thread / block_.x / block_.y)};
    PrintedSite printed = printed_site(*site);  // as the running wheel's device code prints it
    simcuda_device_assert(printed.file.c_str(), printed.line, site->function, printed.condition, b, t);
  }
}

}  // namespace simaten
