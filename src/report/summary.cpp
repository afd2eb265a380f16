#include "summary.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/demangle.h"
#include "compiled_kernel.h"
#include "gpu_words.h"
#include "hints.h"
#include "launch_origin.h"
#include "small_window.h"

namespace firstassert {
namespace {

std::string kernel_name(const LaunchRecord& r) {
  return r.kernel != nullptr ? short_kernel_name(demangle(r.kernel)) : std::string("(CUDA graph)");
}

// " (node 3 of 5 of a CUDA graph captured at train.py:88)" for a graph's kernel node; empty otherwise.
std::string graph_node_words(const LaunchRecord& r) {
  if (r.graph_node == 0) return {};
  std::string where = short_origin(r);
  return " (node " + std::to_string(r.graph_node) + " of " + std::to_string(r.graph_nodes) + " of a CUDA graph" +
         (where.empty() ? std::string() : " captured at " + where) + ")";
}

std::string configuration(const LaunchRecord& r) {
  char text[256];
  std::snprintf(text, sizeof text, "<<<(%u,%u,%u), (%u,%u,%u), %u, stream 0x%llx>>>", r.grid.x, r.grid.y, r.grid.z,
                r.block.x, r.block.y, r.block.z, r.shared_mem, static_cast<unsigned long long>(r.stream));
  return text;
}

// Where a candidate came from, by the rule of the culprit's "launched from" line: the user's innermost Python frame,
// else (no Python frames kept) the top native frame.
std::string candidate_origin(const LaunchRecord& r) {
  const char* how = r.graph_node != 0 ? "captured from " : "launched from ";
  std::string python = python_origin(r);
  if (!python.empty()) return how + python + " (Python)";
  std::string native = native_origin(r, 1);
  if (!native.empty()) return how + native + " (native)";
  return "no stack kept";
}

// "window: 1 of 2, the one shown: kernel K on stream 0xabc, launched from train.py:18 in step (Python)": each
// launch of a small window, in the report's order (those that fit the device's line first).
void add_window_lines(const Findings& f, std::vector<std::string>& lines) {
  if (!f.culprit || f.confidence == nullptr) return;
  const size_t n = window_named_whole(f.confidence, f.candidates_total, f.candidates_fitting, f.candidates.size());
  for (size_t i = 0; i < n; ++i) {
    const LaunchRecord& c = f.candidates[i];
    std::string node = c.graph_node == 0 ? std::string()
                                         : " (node " + std::to_string(c.graph_node) + " of " +
                                               std::to_string(c.graph_nodes) + " of a CUDA graph)";
    char stream[32];
    std::snprintf(stream, sizeof stream, "0x%llx", static_cast<unsigned long long>(c.stream));
    lines.push_back("window: " + std::to_string(i + 1) + " of " + std::to_string(n) +
                    (same_launch(c, *f.culprit) ? ", the one shown" : "") + ": kernel " + kernel_name(c) + node +
                    " on stream " + stream + ", " + candidate_origin(c));
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A kernel of a torch.compile graph: what it fused, where the wrapper launched it, and the model's lines.
void add_compiled_lines(const std::optional<CompiledLaunch>& c, std::vector<std::string>& lines) {
  if (!c) return;
  std::string wrapper = c->wrapper_file.substr(c->wrapper_file.rfind('/') + 1);
  std::string fused = c->source_nodes.empty() ? "" : " fuses [" + joined(c->source_nodes) + "]";
  if (!c->aten_ops.empty()) fused += " (" + joined(c->aten_ops) + ")";
  lines.push_back("compiled: " + c->kernel + " of a torch.compile graph" + fused + ", launched at " + wrapper + ":" +
                  std::to_string(c->wrapper_line));
  constexpr size_t kShownLines = 3;
  for (size_t i = 0; i < c->model_lines.size() && i < kShownLines; ++i) {
    const ModelLine& m = c->model_lines[i];
    lines.push_back("model: " + m.file + ":" + std::to_string(m.line) + " in " + m.function + ": " + m.code +
                    (m.file_agrees ? "" : " (the file has changed there since the graph was compiled)"));
  }
  if (c->model_lines.size() > kShownLines)
    lines.push_back("model: and " + std::to_string(c->model_lines.size() - kShownLines) + " more lines (the report)");
  if (c->model_lines.empty()) lines.push_back("model: unknown: " + c->model_lines_missing);
  lines.push_back(std::string("values: ") + kCompiledValuesAdvice);
}

// "gpu: cuda:1 NVIDIA H100 (GPU-..., PCI 0000:1b:00.0), 1 of the 2 GPUs this process used": the device whose
// context returned the error, when the shim learned which it is.
void add_gpu_line(const Findings& f, std::vector<std::string>& lines) {
  if (f.devices.empty() || !f.devices.front().failed_first) return;
  const DeviceIdentity& d = f.devices.front().identity;
  if (d.ordinal < 0) return;
  std::string line = "gpu: " + gpu_words(d.ordinal, d.name, d.uuid, d.pci_bus_id);
  std::set<int32_t> used;
  for (const DeviceUse& u : f.devices) used.insert(u.identity.ordinal);
  if (used.size() > 1) line += ", 1 of the " + std::to_string(used.size()) + " GPUs this process used";
  lines.push_back(line);
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
  add_gpu_line(f, lines);
  if (f.culprit) {
    const LaunchRecord& c = *f.culprit;
    lines.push_back("kernel " + kernel_name(c) + graph_node_words(c) + " " + configuration(c) + " via " + launch_api_name(c.api) + " [" +
                    f.confidence + ": " + f.reason + "]");
  } else {
    lines.push_back(f.reason);
  }
  if (f.culprit) {
    std::string python = python_origin(*f.culprit);
    // A graph's kernel node keeps the stacks of its capture: where the program made it, not where it replayed it.
    const char* how = f.culprit->graph_node != 0 ? "captured from " : "launched from ";
    if (!python.empty()) lines.push_back(how + python + " (Python)");
    std::string native = native_origin(*f.culprit, 3);
    if (!native.empty()) lines.push_back("native: " + native);
  }
  // Read from the generated files once: the compiled lines, and the note under the device's line.
  std::optional<CompiledLaunch> compiled = f.culprit ? compiled_launch_of(*f.culprit) : std::nullopt;
  add_compiled_lines(compiled, lines);
  add_window_lines(f, lines);
  if (f.culprit_message) {
    const DeviceMessage& m = *f.culprit_message;
    std::snprintf(text, sizeof text, "device: %s:%u: %s: block [%u,%u,%u], thread [%u,%u,%u]: `%s` failed", m.file,
                  m.line, m.function, m.block[0], m.block[1], m.block[2], m.thread[0], m.thread[1], m.thread[2],
                  m.condition);
    lines.emplace_back(text);
    if (compiled) lines.push_back("device: that file and line are the Triton kernel's generated code, not the model");
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
