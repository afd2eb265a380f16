// The report reader and renderer against arbitrary bytes: whatever a file holds, reading it gives a report or a
// one-line reason, and rendering a report of the right schema never throws or crashes.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/render.h"
#include "cli/report_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string why;
  std::optional<nlohmann::json> report =
      firstassert::cli::parse_report(std::string_view(reinterpret_cast<const char*>(data), size), why);
  if (!report) {
    if (why.empty() || why.find('\n') != std::string::npos) __builtin_trap();  // the reason is one line
    return 0;
  }
  std::ostringstream out;
  firstassert::cli::render_report(*report, "fuzz.json", out, false);
  return 0;
}
