// Names for raw frames of a report read on another machine (or whose writer could not resolve them): when the
// module the frame lies in is on this machine with the same build id, addr2line from binutils resolves its offset.
#pragma once

#include <nlohmann/json.hpp>

namespace firstassert::cli {

// Fills function/file/line of native frames that lack them, in the culprit, candidates and launch errors. Returns
// how many frames were resolved. Never fails: what cannot be resolved is left as it was.
int resolve_offline(nlohmann::json& report);

}  // namespace firstassert::cli
