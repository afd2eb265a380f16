// The plain-text summary `firstassert triage` prints: deterministic (no time, no path but the log names as given) so
// golden files compare it exactly, and valid UTF-8 whatever bytes the logs held.
#pragma once

#include <ostream>

#include "triage_scan.h"

namespace firstassert::cli::triage {

void write_summary(const Findings& f, std::ostream& out);

}  // namespace firstassert::cli::triage
