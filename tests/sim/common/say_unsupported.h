// "simcuda: <what> is not supported by the simulator" on stderr, once per distinct what: how every library of the
// simulator (driver, runtime, CUPTI, stand-ins) says it met something it does not model.
#pragma once

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace simcuda {

inline void say_unsupported_once(std::string_view what) {
  static std::mutex mutex;
  static auto* said = new std::set<std::string, std::less<>>;  // never destroyed: calls may come during exit
  std::lock_guard lock(mutex);
  if (said->insert(std::string(what)).second)
    std::fprintf(stderr, "simcuda: %.*s is not supported by the simulator\n", static_cast<int>(what.size()),
                 what.data());
}

}  // namespace simcuda
