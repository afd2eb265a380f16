#include "driver_link.h"

#include <dlfcn.h>

#include <cstdio>

namespace simcuda::runtime {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

bool fetch(GetProcAddress get, DriverEntries& entries, cuuint64_t flags) {
  bool all = true;
#define SIMCUDA_FETCH_ENTRY(member, name, symbol)                                                  \
  {                                                                                                \
    void* fn = nullptr;                                                                            \
    if (get(name, &fn, CUDA_VERSION, flags, nullptr) == CUDA_SUCCESS && fn != nullptr)             \
      entries.member = reinterpret_cast<decltype(entries.member)>(fn);                              \
    else                                                                                           \
      all = false;                                                                                 \
  }
  SIMCUDA_RUNTIME_DRIVER_ENTRIES(SIMCUDA_FETCH_ENTRY)
#undef SIMCUDA_FETCH_ENTRY
  return all;
}

DriverLink* load() {
  auto* link = new DriverLink;
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) return link;
  auto get = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get == nullptr) return link;
  link->get_proc_address = get;
  if (!fetch(get, link->legacy, CU_GET_PROC_ADDRESS_LEGACY_STREAM) ||
      !fetch(get, link->per_thread, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
    return link;
  const void* table = nullptr;
  if (link->legacy.get_export_table(&table, &kPrivateTableId) != CUDA_SUCCESS) return link;
  link->table = static_cast<const PrivateTable*>(table);
  link->loaded = true;
  return link;
}

}  // namespace

const DriverLink& driver() {
  static const DriverLink* link = load();  // never destroyed: used until the last call at exit
  return *link;
}

}  // namespace simcuda::runtime
