// `firstassert run`: the directory of firstassert's sitecustomize.py first on the job's PYTHONPATH, so that every
// Python the job starts loads it without a change to the job (it imports the job's own sitecustomize after itself):
// it keeps the model's lines of torch.compile graphs (firstassert/compiled_nodes.py) and, with --values=MODE
// (FIRSTASSERT_VALUES), checks the values of covered CUDA ops (firstassert.values). A job that is not Python never
// reads either.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace firstassert::cli {

// The directories that may hold this installation's firstassert/values/_site/sitecustomize.py, for the command at
// self_path: in a wheel, beside _native/; in a Meson build tree, build/python; installed, the configured prefix.
std::vector<std::string> values_site_candidates(const std::string& self_path);

// Puts the sitecustomize's directory first on PYTHONPATH when it is found, and sets FIRSTASSERT_VALUES in this
// process's environment (inherited by the job) for the mode of --values (flag) or, without the flag, of
// $FIRSTASSERT_VALUES. A mode that is not one (or whose sitecustomize is not
// found, or that PYTHONPATH cannot carry) is one line on err, and the job runs with FIRSTASSERT_VALUES=off.
// Returns the mode the job gets: "off" or "check" (or "" when neither the flag nor the environment named one).
std::string set_values_environment(const std::optional<std::string>& flag, const std::vector<std::string>& sites,
                                   std::ostream& err);

}  // namespace firstassert::cli
