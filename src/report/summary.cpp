#include "summary.h"

#include <algorithm>
#include <cstdio>

#include "core/demangle.h"
#include "hints.h"
#include "stack/symbolize.h"

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

// Library code is where the failing call ends, not where the user's bug is.
bool user_python_file(const char* file) {
  if (file == nullptr) return false;
  std::string f(file);
  for (const char* library : {"/site-packages/", "/dist-packages/", "/lib/python3", "<frozen", "/torch/", "<string>"}) {
    if (f.find(library) != std::string::npos) return false;
  }
  return true;
}

// "train.py:42 in main": the innermost Python frame of the user's code (else the innermost frame).
std::string python_origin(const LaunchRecord& r) {
  if (r.python_depth == 0) return {};
  const PythonFrame* chosen = &r.python[0];
  for (unsigned i = 0; i < r.python_depth; ++i) {
    if (user_python_file(r.python[i].file)) {
      chosen = &r.python[i];
      break;
    }
  }
  return std::string(chosen->file ? chosen->file : "?") + ":" + std::to_string(chosen->line) + " in " +
         (chosen->function ? chosen->function : "?");
}

// "train_step (job.cpp:12) <- main (job.cpp:30)": the top native frames of the program.
std::string native_origin(const LaunchRecord& r, size_t frames) {
  std::string out;
  for (const ResolvedFrame& f : symbolize(r.stack, std::min<size_t>(r.stack_depth, frames))) {
    if (!out.empty()) out += " <- ";
    std::string where = f.file.empty() ? "" : f.file.substr(f.file.rfind('/') + 1) + ":" + std::to_string(f.line);
    std::string module = f.module.substr(f.module.rfind('/') + 1);
    if (!f.function.empty()) {
      out += short_kernel_name(without_clone_suffix(f.function)) + (where.empty() ? "" : " (" + where + ")");
    } else {
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(f.offset));
      out += module + offset;
    }
  }
  return out;
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
  if (f.culprit) {
    std::string python = python_origin(*f.culprit);
    if (!python.empty()) lines.push_back("launched from " + python + " (Python)");
    std::string native = native_origin(*f.culprit, 3);
    if (!native.empty()) lines.push_back("native: " + native);
  }
  if (f.culprit_message) {
    const DeviceMessage& m = *f.culprit_message;
    std::snprintf(text, sizeof text, "device: %s:%u: %s: block [%u,%u,%u], thread [%u,%u,%u]: `%s` failed", m.file,
                  m.line, m.function, m.block[0], m.block[1], m.block[2], m.thread[0], m.thread[1], m.thread[2],
                  m.condition);
    lines.emplace_back(text);
  }
  std::string kernel = f.culprit && f.culprit->kernel ? demangle(f.culprit->kernel) : "";
  if (auto hint = hint_for_launch(f.culprit_message ? &*f.culprit_message : nullptr, kernel, p.code))
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
  if (auto hint = hint_for_launch(nullptr, e.launch.kernel ? demangle(e.launch.kernel) : "", e.code))
    line += "; " + hint->title;
  return line;
}

}  // namespace firstassert
