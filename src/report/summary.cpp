#include "summary.h"

#include <cstdio>

#include "core/demangle.h"
#include "hints.h"

namespace firstassert {
namespace {

std::string kernel_name(const LaunchRecord& r) {
  return r.kernel != nullptr ? short_kernel_name(demangle(r.kernel)) : std::string("(CUDA graph)");
}

std::string configuration(const LaunchRecord& r) {
  char text[256];
  std::snprintf(text, sizeof text, "<<<(%u,%u,%u), (%u,%u,%u), %u, stream 0x%llx>>>", r.grid.x, r.grid.y, r.grid.z,
                r.block.x, r.block.y, r.block.z, r.shared_mem, static_cast<unsigned long long>(r.stream));
  return text;
}

}  // namespace

std::vector<std::string> summary_lines(const Findings& f, const std::string& report_path) {
  std::vector<std::string> lines;
  if (!f.has_primary) return lines;
  const PrimaryError& p = f.primary;
  char text[2048];  // holds a whole device message: file, function and condition are bounded (device_messages.h)
  std::snprintf(text, sizeof text, "first %s (%s, %d), reported by %s on thread %d", error_headline(p.code),
                error_name(p.domain, p.code), p.code, p.api.c_str(), p.thread);
  lines.emplace_back(text);
  if (f.culprit) {
    const LaunchRecord& c = *f.culprit;
    lines.push_back("kernel " + kernel_name(c) + " " + configuration(c) + " via " + launch_api_name(c.api) + " [" +
                    f.confidence + ": " + f.reason + "]");
  } else {
    lines.push_back(f.reason);
  }
  if (f.culprit_message) {
    const DeviceMessage& m = *f.culprit_message;
    std::snprintf(text, sizeof text, "device: %s:%u: %s: block [%u,%u,%u], thread [%u,%u,%u]: `%s` failed", m.file,
                  m.line, m.function, m.block[0], m.block[1], m.block[2], m.thread[0], m.thread[1], m.thread[2],
                  m.condition);
    lines.emplace_back(text);
  }
  std::string function = f.culprit_message ? std::string(f.culprit_message->function)
                                           : (f.culprit && f.culprit->kernel ? demangle(f.culprit->kernel) : "");
  if (auto hint = find_hint(f.culprit_message ? f.culprit_message->condition : "", function, p.code))
    lines.push_back("hint: " + hint->title + ". " + hint->text);
  lines.push_back("report: " + (report_path.empty() ? std::string("(not written)") : report_path) + " (" +
                  std::to_string(f.secondary_count) + " secondary error" + (f.secondary_count == 1 ? "" : "s") +
                  " so far; it is rewritten at exit)");
  return lines;
}

std::string launch_error_line(const LaunchError& e) {
  std::string line = std::string(launch_api_name(e.launch.api)) + " refused " + kernel_name(e.launch) + " " +
                     configuration(e.launch) + ": " + error_name(e.domain, e.code) + " (" + std::to_string(e.code) +
                     ")";
  if (auto hint = find_hint("", e.launch.kernel ? demangle(e.launch.kernel) : "", e.code))
    line += "; " + hint->title;
  return line;
}

}  // namespace firstassert
