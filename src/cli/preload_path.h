#pragma once
// The shim's path as LD_PRELOAD can carry it. The dynamic loader splits LD_PRELOAD on spaces and colons and knows
// no escape, so a shim installed under such a path (a venv in "My Projects", a user name with a space) is reached
// through a link that has none: a per-user directory of links, each named after the directory it points at, so
// the shim still finds its recorder beside itself (the stub resolves the directory it was loaded from at once).
#include <string>
#include <vector>

namespace firstassert::cli {

// True when the loader would split this path.
bool splits_in_ld_preload(const std::string& path);

// shim itself when LD_PRELOAD can carry it; otherwise the same file through a link whose path it can carry, made in
// firstassert-<uid>/ under the first of link_roots that only this user (or root, with the sticky bit, as /tmp) can
// change. "" and why, when none can be made.
std::string preloadable_path(const std::string& shim, const std::vector<std::string>& link_roots, std::string& why);

}  // namespace firstassert::cli
