#include "cupti_library.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <cstring>
#include <string_view>
#include <vector>

#include "core/log.h"

namespace firstassert::cupti {
namespace {

constexpr const char* kSonames[] = {"libcupti.so.13", "libcupti.so.12"};

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// Loaded objects whose file name starts with prefix (e.g. "libcudart.so"), in load order.
std::vector<std::string> loaded_objects(const char* prefix) {
  struct Search {
    const char* prefix;
    std::vector<std::string> found;
  } search{prefix, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        std::string_view path(info->dlpi_name);
        size_t slash = path.rfind('/');
        std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
        if (file.starts_with(s->prefix)) s->found.emplace_back(path);
        return 0;
      },
      &search);
  return search.found;
}

// CUPTI's sonames, the one of the runtime's own CUDA major first (libcudart.so.12 -> libcupti.so.12): a CUPTI
// belongs to the toolkit of the runtime whose calls it reports.
std::vector<std::string> sonames_for(const std::string& library) {
  std::string file = library.substr(library.rfind('/') + 1);
  std::vector<std::string> out;
  for (const char* soname : kSonames) {
    std::string major = std::string(soname).substr(std::strlen("libcupti.so"));  // ".13"
    if (file.starts_with("libcudart.so" + major)) out.insert(out.begin(), soname);
    else out.push_back(soname);
  }
  return out;
}

// Where CUPTI sits relative to a runtime or driver: beside it, in the toolkit's extras, or in the sibling wheel of
// PyTorch's nvidia-* packages (nvidia/cuda_runtime/lib -> nvidia/cuda_cupti/lib; CUDA 13 wheels share nvidia/cu13/lib).
std::vector<std::string> candidates_near(const std::string& library) {
  std::string dir = directory_of(library);
  std::vector<std::string> dirs = {dir, dir + "/../extras/CUPTI/lib64", dir + "/../../cuda_cupti/lib",
                                   dir + "/../../cu13/lib", dir + "/../../cu12/lib"};
  std::vector<std::string> out;
  for (const std::string& soname : sonames_for(library)) {
    for (const std::string& d : dirs) out.push_back(d + "/" + soname);
  }
  return out;
}

// Installed by pip, the recorder is site-packages/firstassert/_native/libfirstassert_recorder.so, and PyTorch's CUDA
// wheels put CUPTI in the same site-packages (nvidia/cu13/lib for CUDA 13, nvidia/cuda_cupti/lib for 12): found
// there even when the runtime the job loaded came from elsewhere (a toolkit without CUPTI).
std::vector<std::string> candidates_in_own_environment() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidates_in_own_environment), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::string own = directory_of(info.dli_fname);
  if (!own.ends_with("/_native")) return {};
  std::string site = directory_of(directory_of(own));
  std::vector<std::string> out;
  for (const char* wheel : {"/nvidia/cu13/lib/", "/nvidia/cuda_cupti/lib/", "/nvidia/cu12/lib/"}) {
    for (const char* soname : kSonames) out.push_back(site + wheel + soname);
  }
  return out;
}

bool resolve(void* handle, CuptiLibrary& lib) {
  lib.subscribe = reinterpret_cast<decltype(lib.subscribe)>(dlsym(handle, "cuptiSubscribe"));
  lib.subscribe_v2 = reinterpret_cast<decltype(lib.subscribe_v2)>(dlsym(handle, "cuptiSubscribe_v2"));
  lib.unsubscribe = reinterpret_cast<decltype(lib.unsubscribe)>(dlsym(handle, "cuptiUnsubscribe"));
  lib.enable_domain = reinterpret_cast<decltype(lib.enable_domain)>(dlsym(handle, "cuptiEnableDomain"));
  lib.enable_callback = reinterpret_cast<decltype(lib.enable_callback)>(dlsym(handle, "cuptiEnableCallback"));
  lib.result_string = reinterpret_cast<decltype(lib.result_string)>(dlsym(handle, "cuptiGetResultString"));
  auto get_version = reinterpret_cast<decltype(&cuptiGetVersion)>(dlsym(handle, "cuptiGetVersion"));
  if (get_version == nullptr || get_version(&lib.api_version) != CUPTI_SUCCESS) lib.api_version = 0;
  return lib.subscribe != nullptr && lib.unsubscribe != nullptr && lib.enable_domain != nullptr;
}

bool try_open(const std::string& path, int flags, CuptiLibrary& lib, std::string* error) {
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    if (error != nullptr) {
      const char* e = dlerror();
      *error = e != nullptr ? e : "dlopen failed";
    }
    return false;
  }
  if (!resolve(handle, lib)) {
    if (error != nullptr) *error = "it lacks cuptiSubscribe, cuptiUnsubscribe or cuptiEnableDomain";
    dlclose(handle);
    return false;
  }
  lib.handle = handle;
  Dl_info info{};
  // Not by cuptiSubscribe: preloaded, dlsym answers with the stub's hook of it (stub/stub_hooks.cpp).
  const char* opened = dladdr(reinterpret_cast<void*>(lib.unsubscribe), &info) != 0 && info.dli_fname != nullptr
                           ? info.dli_fname
                           : path.c_str();
  char canonical[PATH_MAX];
  lib.path = realpath(opened, canonical) != nullptr ? canonical : opened;  // reported, so without ../
  return true;
}

}  // namespace

std::string CuptiLibrary::describe(CUptiResult result) const {
  const char* name = nullptr;
  if (result_string == nullptr || result_string(result, &name) != CUPTI_SUCCESS || name == nullptr)
    name = "CUPTI error";
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

CuptiLibrary open_cupti(const std::string& explicit_path, std::string& why) {
  CuptiLibrary lib;
  const int flags = RTLD_NOW | RTLD_LOCAL;
  if (!explicit_path.empty()) {
    std::string error;
    if (try_open(explicit_path, flags, lib, &error)) return lib;
    say("FIRSTASSERT_CUPTI=%s cannot be used (%s); searching the usual places instead", explicit_path.c_str(),
        error.c_str());
  }
  for (const std::string& loaded : loaded_objects("libcupti.so")) {
    if (try_open(loaded, flags | RTLD_NOLOAD, lib, nullptr)) return lib;
  }
  for (const char* prefix : {"libcudart.so", "libcuda.so"}) {
    for (const std::string& owner : loaded_objects(prefix)) {
      for (const std::string& candidate : candidates_near(owner)) {
        if (access(candidate.c_str(), R_OK) == 0 && try_open(candidate, flags, lib, nullptr)) return lib;
      }
    }
  }
  for (const std::string& candidate : candidates_in_own_environment()) {
    if (access(candidate.c_str(), R_OK) == 0 && try_open(candidate, flags, lib, nullptr)) return lib;
  }
  std::string last_error;
  for (const char* soname : kSonames) {
    if (try_open(soname, flags, lib, &last_error)) return lib;
  }
  why = "no CUPTI library found beside the loaded CUDA runtime or driver, in this environment's nvidia/ wheels, "
        "nor as libcupti.so.13/12 (" + last_error +
        "); set FIRSTASSERT_CUPTI to its path";
  return lib;
}

}  // namespace firstassert::cupti
