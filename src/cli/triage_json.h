// `firstassert triage --json`: the summary as one JSON document, schema "firstassert-triage/1", for CI bots and
// dashboards (docs/triage-json.md describes every field; fields are only ever added within a schema version).
#pragma once

#include <ostream>

#include "triage_scan.h"

namespace firstassert::cli::triage {

void write_json(const Findings& f, std::ostream& out);

}  // namespace firstassert::cli::triage
