#include "cubin_image.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>

namespace simcuda {
namespace {

// .nv.info attribute records: a format byte, an attribute byte, then either a 2-byte value (EIFMT_HVAL) or a 2-byte
// size and that many bytes (EIFMT_SVAL).
constexpr uint8_t kFormatSizedValue = 0x04;  // EIFMT_SVAL
constexpr uint8_t kAttributeParamInfo = 0x17;  // EIATTR_KPARAM_INFO: index (4), ordinal (2), offset (2), flags (4)
// The flags word holds the parameter's size in bytes in bits 18..31.
constexpr unsigned kParamSizeShift = 18;
constexpr uint32_t kParamSizeMask = 0x3FFF;

const Elf64_Ehdr* header_of(const void* image) { return static_cast<const Elf64_Ehdr*>(image); }

const Elf64_Shdr* sections_of(const void* image) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  return reinterpret_cast<const Elf64_Shdr*>(bytes + header_of(image)->e_shoff);
}

template <typename T>
T read_at(const unsigned char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

std::vector<size_t> param_sizes_of(const unsigned char* info, size_t size) {
  std::map<unsigned, size_t> by_ordinal;
  for (size_t at = 0; at + 4 <= size;) {
    uint8_t format = info[at];
    uint8_t attribute = info[at + 1];
    if (format != kFormatSizedValue) {
      at += 4;
      continue;
    }
    size_t length = read_at<uint16_t>(info + at + 2);
    const unsigned char* value = info + at + 4;
    if (at + 4 + length > size) break;
    if (attribute == kAttributeParamInfo && length >= 12) {
      unsigned ordinal = read_at<uint16_t>(value + 4);
      uint32_t flags = read_at<uint32_t>(value + 8);
      by_ordinal[ordinal] = (flags >> kParamSizeShift) & kParamSizeMask;
    }
    at += 4 + length;
  }
  std::vector<size_t> sizes;
  for (auto& [ordinal, bytes] : by_ordinal) {
    if (ordinal != sizes.size()) return {};  // a gap: not a table this understands
    sizes.push_back(bytes);
  }
  return sizes;
}

}  // namespace

bool is_cubin(const void* image) {
  const auto* e = header_of(image);
  return std::memcmp(e->e_ident, ELFMAG, SELFMAG) == 0 && e->e_ident[EI_CLASS] == ELFCLASS64 &&
         e->e_ident[EI_DATA] == ELFDATA2LSB;
}

size_t cubin_size(const void* image) {
  const auto* e = header_of(image);
  size_t end = std::max<size_t>(sizeof(Elf64_Ehdr), e->e_shoff + size_t{e->e_shnum} * e->e_shentsize);
  end = std::max<size_t>(end, e->e_phoff + size_t{e->e_phnum} * e->e_phentsize);
  const Elf64_Shdr* sections = sections_of(image);
  for (unsigned i = 0; i < e->e_shnum; ++i)
    if (sections[i].sh_type != SHT_NOBITS) end = std::max<size_t>(end, sections[i].sh_offset + sections[i].sh_size);
  return end;
}

std::optional<std::vector<CubinKernel>> cubin_kernels(const void* image) {
  const auto* e = header_of(image);
  if (e->e_shentsize != sizeof(Elf64_Shdr) || e->e_shstrndx >= e->e_shnum) return std::nullopt;
  const auto* bytes = static_cast<const unsigned char*>(image);
  const Elf64_Shdr* sections = sections_of(image);
  const char* names = reinterpret_cast<const char*>(bytes + sections[e->e_shstrndx].sh_offset);
  std::map<std::string, const Elf64_Shdr*> infos;
  std::vector<std::string> kernels;
  for (unsigned i = 0; i < e->e_shnum; ++i) {
    std::string_view name = names + sections[i].sh_name;
    // Each kernel (entry function) has its code in .text.NAME and its attributes in .nv.info.NAME.
    if (name.starts_with(".nv.info.")) infos[std::string(name.substr(9))] = &sections[i];
    if (name.starts_with(".text.")) kernels.emplace_back(name.substr(6));
  }
  std::vector<CubinKernel> result;
  for (const std::string& name : kernels) {
    auto info = infos.find(name);
    if (info == infos.end()) continue;  // a device function, not a kernel
    result.push_back({name, param_sizes_of(bytes + info->second->sh_offset, info->second->sh_size)});
  }
  return result;
}

}  // namespace simcuda
