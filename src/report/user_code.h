// Which Python files are the user's own code: the frame a person looks at first is the innermost one of them, since
// library code is where a failing call ends, not where the bug is.
#pragma once

#include <cstdlib>
#include <string_view>

namespace firstassert {

// Installed packages (PyTorch's among them) live under site-packages or dist-packages, the standard library under
// lib/python3.X; a directory merely named torch may be the user's own project. firstassert's values modes call the
// user's op from their own frames (python/firstassert/values), wherever the package is: a build tree or a checkout.
// torch.compile's generated modules live under Inductor's cache, /tmp/torchinductor_<user> by default
// (torch/_inductor/runtime/cache_dir_utils.py): the model's line is what the report names for those
// (compiled_kernel.h).
inline bool is_user_python_file(std::string_view file) {
  if (file.empty()) return false;
  for (std::string_view library :
       {"/site-packages/", "/dist-packages/", "/lib/python3", "<frozen", "<string>", "/firstassert/values/",
        "/torchinductor_"}) {
    if (file.find(library) != std::string_view::npos) return false;
  }
  // Inductor's cache where the job moved it (read in the job's process; elsewhere the default rule above holds).
  const char* inductor_cache = std::getenv("TORCHINDUCTOR_CACHE_DIR");
  if (inductor_cache != nullptr && *inductor_cache != '\0' && file.starts_with(inductor_cache)) return false;
  return true;
}

}  // namespace firstassert
