// The objects loaded in the process (path, load base, GNU build id), written into each report so that raw frames can
// be symbolized later, offline, on a machine with the same binaries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace firstassert {

struct LoadedModule {
  std::string path;
  uintptr_t base = 0;
  std::string build_id;  // hex; empty when the object has none
};

std::vector<LoadedModule> loaded_modules();

}  // namespace firstassert
