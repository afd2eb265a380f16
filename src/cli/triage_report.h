// The plain-text summary `firstassert triage` prints: deterministic (no time, no path but the log names as given) so
// golden files compare it exactly, and valid UTF-8 whatever bytes the logs held.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/hints.h"
#include "triage_scan.h"

namespace firstassert::cli::triage {

void write_summary(const Findings& f, std::ostream& out);

// What the logs leave in doubt, each said in one sentence (the text summary's "In doubt", the JSON's "doubts").
struct Doubt {
  std::string kind;  // first-may-not-be-first, garbled-lines, cut-conditions, log-cut, single-rank
  std::string text;
};
std::vector<Doubt> doubts(const Findings& f);

// The first assertion in the order the logs give them that is complete (a file and a whole condition); the groups
// before it are fragments (a log cut at the top, a line without its path). 0 when no group is complete.
size_t first_complete_group(const Findings& f);

// A group's hint (for a condition cut off, by the kernel's name only), and the summary's: the first assertion's, else the first
// traceback's CUDA error's.
std::optional<Hint> group_hint(const AssertGroup& g);
std::optional<Hint> summary_hint(const Findings& f);

}  // namespace firstassert::cli::triage
