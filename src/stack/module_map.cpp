#include "module_map.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace firstassert {
namespace {

std::string build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char digits[] = "0123456789abcdef";
        std::string hex;
        for (unsigned j = 0; j < note->n_descsz; ++j) {
          hex += digits[desc[j] >> 4];
          hex += digits[desc[j] & 15];
        }
        return hex;
      }
      p = next;
    }
  }
  return {};
}

int collect(dl_phdr_info* info, size_t, void* data) {
  auto* modules = static_cast<std::vector<LoadedModule>*>(data);
  LoadedModule m;
  m.base = info->dlpi_addr;
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    m.path = info->dlpi_name;
  } else if (modules->empty()) {
    // The first object is the program itself, which the loader leaves unnamed.
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) m.path.assign(exe, static_cast<size_t>(n));
  } else {
    return 0;  // the vDSO and other unnamed objects cannot be found on disk
  }
  m.build_id = build_id_of(info);
  modules->push_back(std::move(m));
  return 0;
}

}  // namespace

std::vector<LoadedModule> loaded_modules() {
  std::vector<LoadedModule> modules;
  dl_iterate_phdr(collect, &modules);
  return modules;
}

}  // namespace firstassert
