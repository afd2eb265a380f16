// Which member of a shared kernel family the simulated device is running, parsed from its mangled name once per
// name: a job launches the same few kernels again and again, and a body runs once per launch.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "../simcuda.h"

namespace simaten {

// parse: a mangled kernel name -> the member it is, or nullopt when the family's body does not model it.
template <typename Member, std::optional<Member> (*parse)(const char*)>
std::optional<Member> running_member() {
  const char* mangled = simcuda_running_kernel_name();
  if (mangled == nullptr) return std::nullopt;
  static std::mutex mutex;
  static auto* cache = new std::unordered_map<std::string, std::optional<Member>>;  // never destroyed: see simcuda.h
  std::lock_guard lock(mutex);
  auto it = cache->find(mangled);
  if (it == cache->end()) it = cache->emplace(mangled, parse(mangled)).first;
  return it->second;
}

}  // namespace simaten
