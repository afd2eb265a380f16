// A window of a few launches is named whole: where the failing launch is one of at most kWindowNamedWhole, the
// stderr summary and the report's view (`firstassert show`, a notebook's failing cell) name each of them (kernel,
// stream, the user's line), not only the one shown. A person can check a few lines of their own code; a longer
// window is the report's list to read, and naming it whole would bury the summary.
#pragma once

#include <cstddef>
#include <string_view>

namespace firstassert {

inline constexpr size_t kWindowNamedWhole = 4;

// confidence: the decision's; total: how many launches can have failed; listed: how many of them are at hand (the
// report keeps at most Tracker::kMaxCandidates, so a window is named whole only when every one of them is there).
inline bool window_named_whole(std::string_view confidence, size_t total, size_t listed) {
  return confidence == "window" && total >= 2 && total <= kWindowNamedWhole && listed == total;
}

}  // namespace firstassert
