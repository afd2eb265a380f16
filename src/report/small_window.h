// A window of a few launches is named whole: where the failing launch is one of at most kWindowNamedWhole, the
// stderr summary and the report's view (`firstassert show`, a notebook's failing cell) name each of them (kernel,
// stream, the user's line), not only the one shown. A person can check a few lines of their own code; a longer
// window is the report's list to read, and naming it whole would bury the summary.
#pragma once

#include <cstddef>
#include <string_view>

namespace firstassert {

inline constexpr size_t kWindowNamedWhole = 4;

// How many launches of the candidates, from the first, a window is: those that fit the device's assertion line (the
// decision lists them first) where some do, else all that can have failed. Named whole when that is at most
// kWindowNamedWhole and all of them are at hand (listed: the report keeps at most Tracker::kMaxCandidates). Returns
// how many to name, 0 for none. confidence: the decision's; total: how many launches can have failed; fitting: how
// many of them fit the device's line (0: none, or no line).
inline size_t window_named_whole(std::string_view confidence, size_t total, size_t fitting, size_t listed) {
  size_t window = fitting > 0 ? fitting : total;
  bool named = confidence == "window" && window >= 2 && window <= kWindowNamedWhole && listed >= window;
  return named ? window : 0;
}

}  // namespace firstassert
