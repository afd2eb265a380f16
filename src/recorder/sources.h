// Which event source records the program's calls, and each change of source while the program runs:
//   - at bring-up, CUPTI first, else the interposition hooks (FIRSTASSERT_BACKEND);
//   - another tool subscribing to CUPTI later (torch.profiler, an attached Nsight) gets it: firstassert hands CUPTI
//     over and goes on through the hooks, never asking for it back;
//   - firstassert_disable() stops both and releases CUPTI; firstassert_enable() starts again.
// The observer (source::start) must have been started before the first start().
#pragma once

#include <string>

#include "core/config.h"
#include "report/report_json.h"

namespace firstassert::sources {

// Starts recording with the source backend asks for. message says what records, or why nothing does (then false).
bool start(Backend backend, const std::string& cupti_path, std::string& message);
// Another tool is about to subscribe to CUPTI: the preloaded stub's hook of cuptiSubscribe(_v2) calls this first.
// name: what the tool calls itself (cuptiSubscribe_v2's subscriberName), or null.
void before_other_subscriber(const char* name);
// Stops whichever source records, releasing CUPTI.
void stop();
// Whether firstassert holds its CUPTI subscription now.
bool holds_cupti();
// Whether a source records now (none after stop(), or after CUPTI was handed over with no hooks to go on with).
bool recording();
// The source as the report tells it: backend, the CUPTI library, whether CUPTI was handed to another tool.
void describe(ToolInfo& tool);

}  // namespace firstassert::sources
