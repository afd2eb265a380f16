#include "summary.h"

#include <cstdio>

#include "demangle.h"

namespace firstassert {

std::vector<std::string> summary_lines(const Findings& f, const std::string& report_path) {
  std::vector<std::string> lines;
  if (!f.has_primary) return lines;
  const PrimaryError& p = f.primary;
  char text[1024];
  std::snprintf(text, sizeof text, "first %s (%s, %d), reported by %s on thread %d", error_headline(p.code),
                error_name(p.domain, p.code), p.code, p.api.c_str(), p.thread);
  lines.emplace_back(text);
  if (!f.candidates.empty()) {
    const LaunchRecord& c = f.candidates.front();
    std::string kernel = c.kernel != nullptr ? short_kernel_name(demangle(c.kernel)) : std::string("(graph)");
    std::snprintf(text, sizeof text, "kernel %s <<<(%u,%u,%u), (%u,%u,%u), %u, stream 0x%llx>>> via %s [%s: %zu candidate%s]",
                  kernel.c_str(), c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.shared_mem,
                  static_cast<unsigned long long>(c.stream), launch_api_name(c.api), f.confidence,
                  f.candidates.size(), f.candidates.size() == 1 ? "" : "s");
    lines.emplace_back(text);
  } else {
    lines.emplace_back("no recorded launch was pending: the failing kernel was launched before firstassert started");
  }
  lines.push_back("report: " + (report_path.empty() ? std::string("(not written)") : report_path) + " (" +
                  std::to_string(f.secondary_count) + " secondary error" + (f.secondary_count == 1 ? "" : "s") +
                  " so far; it is rewritten at exit)");
  return lines;
}

}  // namespace firstassert
