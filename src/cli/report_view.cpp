#include "report_view.h"

#include <algorithm>

#include "core/plural.h"
#include "report/gpu_words.h"
#include "report/small_window.h"
#include "report_reader.h"
#include "view_frames.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

constexpr size_t kGraphNodes = 12;
constexpr size_t kCandidates = 10;

std::string dims(const json& object, const char* key) {
  const json& d = object.is_object() && object.contains(key) ? object[key] : json();
  if (!d.is_array() || d.size() != 3 || !d[0].is_number() || !d[1].is_number() || !d[2].is_number()) return "(?)";
  return "(" + std::to_string(d[0].get<long long>()) + "," + std::to_string(d[1].get<long long>()) + "," +
         std::to_string(d[2].get<long long>()) + ")";
}

std::string message_line(const json& message) {
  return text_of(message, "file", "?") + ":" + std::to_string(number_of(message, "line")) + ": " +
         text_of(message, "function", "?") + ": block " + dims(message, "block") + ", thread " +
         dims(message, "thread") + ": `" + text_of(message, "condition", "?") + "` failed";
}

Row row(std::string key, std::string label, std::vector<Line> lines, bool starts_section = false) {
  return {std::move(key), std::move(label), std::move(lines), starts_section};
}

void add_process(const json& report, std::vector<Row>& rows) {
  const json& process = object_of(report, "process");
  std::string text = "pid " + std::to_string(number_of(process, "pid")) + " on " + text_of(process, "host", "?");
  if (process.is_object() && process.contains("rank") && process["rank"].is_number_integer())
    text += ", rank " + std::to_string(process["rank"].get<long long>());
  if (!text_of(process, "start_time").empty()) text += ", started " + text_of(process, "start_time");
  rows.push_back(row("process", "process", {{text}}));
  std::string command;
  for (const json& a : array_of(process, "argv")) command += (command.empty() ? "" : " ") + (a.is_string() ? a.get<std::string>() : "?");
  if (!command.empty()) rows.push_back(row("command", "command", {{command, Tone::plain, false}}));
}

// "libcudart.so.12, CUPTI API 26, PyTorch 2.8.0+cu128 (built with CUDA 12.8)": what the job ran with (the report's
// environment; reports written before it had one show no row).
void add_environment(const json& report, std::vector<Row>& rows) {
  const json& environment = object_of(report, "environment");
  if (environment.is_null()) return;
  const json& runtime = object_of(environment, "cuda_runtime");
  const json& cupti = object_of(environment, "cupti");
  const json& torch = object_of(environment, "torch");
  std::string text = runtime.is_null() ? "no CUDA runtime loaded" : text_of(runtime, "soname", "?");
  if (cupti.is_null()) {
    text += ", CUPTI not in use";
  } else {
    long long api = number_of(cupti, "api_version", 0);
    text += ", CUPTI " + (api > 0 ? "API " + std::to_string(api) : text_of(cupti, "library", "?"));
  }
  if (!torch.is_null()) {
    std::string cuda = text_of(torch, "cuda");
    text += ", PyTorch " + text_of(torch, "version", "?") + (cuda.empty() ? "" : " (built with CUDA " + cuda + ")");
  }
  rows.push_back(row("environment", "cuda", {{text, Tone::plain, false}}));
}

void add_first_error(const json& first, std::vector<Row>& rows) {
  std::string at = "at " + text_of(first, "api", "?") + ", thread " + std::to_string(number_of(first, "thread")) +
                   ", " + text_of(first, "time", "?");
  if (!flag_of(first, "sticky", true)) at += " (the launch was refused; not sticky)";
  rows.push_back(row("first_error", "first error",
                     {{text_of(first, "name", "?") + " (" + std::to_string(number_of(first, "code")) + ") " +
                           text_of(first, "description"),
                       Tone::alarm},
                      {at}},
                     true));
}

std::string gpu_of(const json& device) {
  return gpu_words(number_of(device, "ordinal", -1), text_of(device, "name"), text_of(device, "uuid"),
                   text_of(device, "pci_bus_id"));
}

// The GPU whose context returned the first error and, where the job used others, what each did after it. A report
// without `devices` (written before they were recorded), or whose failing device is not known, shows none.
void add_gpu(const json& report, std::vector<Row>& rows) {
  const json& devices = array_of(report, "devices");
  if (devices.empty() || !flag_of(devices[0], "failed_first", false)) return;
  std::vector<Line> lines{{gpu_of(devices[0])}};
  for (size_t i = 1; i < devices.size(); ++i) {
    const json& after = object_of(devices[i], "after_first_error");
    const json& error = object_of(after, "first_error");
    std::string first_error = text_of(error, "name", "?") + " (" + std::to_string(number_of(error, "code")) +
                              ") at " + text_of(error, "api", "?");
    lines.push_back({gpu_of(devices[i]) + ": " +
                         after_words(text_of(after, "state"), static_cast<uint64_t>(number_of(after, "syncs_succeeded")),
                                     static_cast<uint64_t>(number_of(after, "launches_completed")), first_error)});
  }
  rows.push_back(row("gpu", "gpu", std::move(lines)));
}

std::string launch_text(const json& launch) {
  std::string text = "grid " + dims(launch, "grid") + "  block " + dims(launch, "block") + "  shared " +
                     std::to_string(number_of(launch, "shared_mem")) + " B  stream " + text_of(launch, "stream", "?");
  if (flag_of(launch, "per_thread_default_stream", false)) text += " (per-thread default)";
  long long device = number_of(launch, "device", -1);
  return text + "  device " + (device < 0 ? std::string("?") : std::to_string(device)) + "  via " +
         text_of(launch, "api", "?");
}

std::vector<Line> graph_lines(const json& culprit, const json& node) {
  std::string where = text_of(node, "captured_at");
  std::vector<Line> lines{{"node " + std::to_string(number_of(node, "node")) + " of " +
                           std::to_string(number_of(node, "nodes")) + " kernel nodes of a CUDA graph" +
                           (where.empty() ? "" : ", captured at " + where)}};
  const json& nodes = array_of(culprit, "graph_nodes");
  for (size_t i = 0; i < nodes.size() && i < kGraphNodes; ++i) {
    const json& n = nodes[i];
    bool is_culprit = number_of(n, "node") == number_of(node, "node");
    lines.push_back({std::string(is_culprit ? "> " : "  ") + std::to_string(number_of(n, "node")) + "  " +
                         text_of(n, "state", "?") + "  " + short_kernel_of(n),
                     Tone::plain, false});
  }
  if (nodes.size() > kGraphNodes)
    lines.push_back({"... " + std::to_string(nodes.size() - kGraphNodes) + " more", Tone::quiet, false});
  return lines;
}

// "Cell In[3], line 6  ->  loss = F.cross_entropy(out, y)": the line a person opens first, with its text.
void add_launched_at(const json& culprit, const CellNames& cells, std::vector<Row>& rows) {
  const json* frame = launching_frame(culprit);
  if (frame == nullptr) return;
  std::string source = frame_source_line(*frame, cells);
  rows.push_back(row("launched_at", "launched at",
                     {{frame_where(*frame, cells) + (source.empty() ? "" : "  ->  " + source), Tone::plain, false}}));
}

// What the device said, or why nothing it said is here.
std::string device_text(const json& report, const json& culprit) {
  const json& message = object_of(culprit, "device_message");
  if (!message.is_null()) return message_line(message);
  const json& messages = array_of(report, "device_messages");
  if (!messages.empty())
    return plural(static_cast<long long>(messages.size()), "assertion line", "assertion lines") +
           ", none matched to this kernel: " + message_line(messages[0]);
  if (number_of(object_of(report, "first_error"), "code") != 710)
    return "none: the device prints assertion lines for device-side asserts (710) only";
  // The driver prints its lines at the next synchronization, often after the error was first seen; and where
  // stderr is a terminal or FIRSTASSERT_STDERR_PIPE=0, the shim does not read them (docs/usage.md).
  std::string unread =
      "where stderr is a terminal, or FIRSTASSERT_STDERR_PIPE=0, they are not read; they are on the process's stderr";
  if (flag_of(report, "final", false)) return "no assertion line was read (" + unread + ")";
  return "no assertion line read yet (the device prints them at the next synchronization, and the report gets them "
         "then; " + unread + ")";
}

bool same_launch(const json& a, const json& b) {
  return number_of(a, "seq", -1) == number_of(b, "seq", -2) &&
         number_of(object_of(a, "graph_node"), "node") == number_of(object_of(b, "graph_node"), "node");
}

// Where a launch of the window came from, by the launching line's rule (the innermost frame of the user's code),
// else its top native frame.
std::string window_origin(const json& launch, const CellNames& cells) {
  std::string how = object_of(launch, "graph_node").is_null() ? "" : "captured at ";
  if (const json* frame = launching_frame(launch)) return how + frame_where(*frame, cells);
  std::vector<Line> native = native_lines(launch);
  return native.empty() ? "no stack kept" : how + native[0].text;
}

// A small window named whole (report/small_window.h): each launch that can have failed, with its kernel, stream and
// the user's line, the one shown marked at the end (a notebook's text drops a line's leading spaces, so a mark in
// front would leave the others out of line); in the report's order (those that fit the device's line first).
void add_window(const json& report, const json& culprit, const CellNames& cells, std::vector<Row>& rows) {
  const json& candidates = array_of(report, "candidates");
  const json& decision = object_of(report, "decision");
  long long total = number_of(decision, "candidates", -1);
  size_t count = total < 0 ? candidates.size() : static_cast<size_t>(total);  // a report without a decision
  long long fitting = std::max<long long>(0, number_of(decision, "fitting", 0));  // older reports have none
  size_t named = window_named_whole(text_of(culprit, "confidence"), count, static_cast<size_t>(fitting),
                                    candidates.size());
  if (named == 0) return;
  std::string which = fitting > 0 ? "these " + std::to_string(named) + " that fit the device's line"
                                  : "these " + std::to_string(named);
  std::vector<Line> lines{{"the failing launch is one of " + which + " (<- the one shown)"}};
  for (size_t i = 0; i < named; ++i) {
    const json& c = candidates[i];
    const json& node = object_of(c, "graph_node");
    lines.push_back({short_kernel_of(c) +
                         (node.is_null() ? "" : " (node " + std::to_string(number_of(node, "node")) + ")") +
                         "  stream " + text_of(c, "stream", "?") + "  " + window_origin(c, cells) +
                         (same_launch(c, culprit) ? "  <- shown" : ""),
                     Tone::plain, false});
  }
  rows.push_back(row("window", "window", std::move(lines)));
}

std::string names_of(const json& list) {
  std::string out;
  if (!list.is_array()) return out;
  for (const json& n : list) out += (out.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : "?");
  return out;
}

// A kernel of a torch.compile graph (the report's culprit "compiled"): what it fused and where the model wrote it.
void add_compiled(const json& compiled, const CellNames& cells, std::vector<Row>& rows) {
  std::string fused = names_of(array_of(compiled, "source_nodes"));
  std::string ops = names_of(array_of(compiled, "aten_ops"));
  const json& launch = object_of(compiled, "launch");
  std::vector<Line> lines{
      {text_of(compiled, "kernel", "?") + " of a torch.compile graph" + (fused.empty() ? "" : ", fusing " + fused) +
       (ops.empty() ? "" : " (" + ops + ")")},
      {"launched at " + text_of(launch, "file", "?") + ":" + std::to_string(number_of(launch, "line")), Tone::plain,
       false},
      {"kernel code " + text_of(compiled, "kernel_file", "?"), Tone::plain, false}};
  rows.push_back(row("compiled", "compiled", std::move(lines)));
  std::vector<Line> model;
  for (const json& m : array_of(compiled, "model_lines")) {
    // As a frame: a notebook's cell is named as the user knows it ("Cell In[2], line 7, in forward").
    json frame = {{"file", text_of(m, "file", "?")},
                  {"line", number_of(m, "line")},
                  {"function", text_of(m, "function", "?")}};
    model.push_back({frame_where(frame, cells) + " (" + text_of(m, "node", "?") + ")", Tone::strong, false});
    model.push_back({"    " + text_of(m, "code"), Tone::plain, false});
    if (!flag_of(m, "file_agrees", true))
      model.push_back({"the file has changed there since the graph was compiled", Tone::quiet});
  }
  if (model.empty()) model.push_back({"unknown: " + text_of(compiled, "model_lines_missing", "?")});
  rows.push_back(row("model", "model", std::move(model)));
  std::string values = text_of(compiled, "values");
  if (!values.empty()) rows.push_back(row("values_advice", "values", {{values}}));
}

void add_culprit(const json& report, const json& culprit, const CellNames& cells, std::vector<Row>& rows) {
  std::string full = kernel_of(culprit);
  std::vector<Line> kernel{{short_kernel_of(culprit), Tone::strong}};
  if (full != kernel[0].text) kernel.push_back({full, Tone::plain, false});
  rows.push_back(row("kernel", "kernel", std::move(kernel)));
  rows.push_back(row("confidence", "confidence",
                     {{text_of(culprit, "confidence", "?") + ": " + text_of(culprit, "reason")}}));
  add_window(report, culprit, cells, rows);
  rows.push_back(row("launch", "launch", {{launch_text(culprit), Tone::plain, false}}));
  const json& node = object_of(culprit, "graph_node");
  if (!node.is_null()) rows.push_back(row("graph", "graph", graph_lines(culprit, node)));
  add_launched_at(culprit, cells, rows);
  const json& compiled = object_of(culprit, "compiled");
  if (!compiled.is_null()) add_compiled(compiled, cells, rows);
  if (flag_of(object_of(report, "first_error"), "sticky", true)) {
    std::vector<Line> device{{device_text(report, culprit)}};
    // Triton compiles a tl.device_assert with its own location: the device names generated code.
    if (!compiled.is_null())
      device.push_back({"that file and line are the Triton kernel's generated code, not the model", Tone::quiet});
    rows.push_back(row("device", "device", std::move(device)));
  }
  // What the job's values probe read in the values this launch was given (python/firstassert/values/probe.py).
  const json& values = object_of(culprit, "values");
  if (!values.is_null()) rows.push_back(row("values", "values", {{text_of(values, "text")}}));
  const json& hint = object_of(culprit, "hint");
  if (hint.is_null()) {
    rows.push_back(row("hint", "hint", {{"none for this kernel and error"}}));
  } else {
    rows.push_back(row("hint", "hint", {{text_of(hint, "title"), Tone::strong}, {text_of(hint, "text")}}));
  }
  std::vector<Line> python = python_lines(culprit, cells);
  if (!python.empty()) rows.push_back(row("python", "python", std::move(python)));
  std::vector<Line> native = native_lines(culprit);
  if (!native.empty()) rows.push_back(row("native", "native", std::move(native)));
}

// Nothing named: the decision says why (a report written before decisions were recorded says nothing).
void add_no_culprit(const json& report, std::vector<Row>& rows) {
  const json& decision = object_of(report, "decision");
  rows.push_back(row("kernel", "kernel", {{"not named"}}));
  rows.push_back(row("confidence", "confidence",
                     {{text_of(decision, "confidence", "unknown") + ": " +
                       text_of(decision, "reason", "the report names no culprit and records no decision")}}));
}

void add_candidates(const json& report, const json& culprit, std::vector<Row>& rows) {
  const json& candidates = array_of(report, "candidates");
  if (candidates.size() < 2) return;
  std::vector<Line> lines{
      {plural(static_cast<long long>(candidates.size()), "launch", "launches") + " had not been seen to complete"}};
  for (size_t i = 0; i < candidates.size() && i < kCandidates; ++i) {
    const json& c = candidates[i];
    const json& node = object_of(c, "graph_node");
    bool is_culprit = same_launch(c, culprit);
    lines.push_back({"#" + std::to_string(number_of(c, "seq", -1)) +
                         (node.is_null() ? "" : " node " + std::to_string(number_of(node, "node"))) + " " +
                         short_kernel_of(c) + " " + dims(c, "grid") + "x" + dims(c, "block") + " stream " +
                         text_of(c, "stream", "?") + (is_culprit ? "  <- culprit" : ""),
                     Tone::plain, false});
  }
  if (candidates.size() > kCandidates)
    lines.push_back({"... " + std::to_string(candidates.size() - kCandidates) + " more", Tone::quiet, false});
  rows.push_back(row("candidates", "candidates", std::move(lines), true));
}

void add_secondary(const json& report, std::vector<Row>& rows) {
  const json& secondary = object_of(report, "secondary");
  const json& sites = array_of(secondary, "sites");
  long long count = number_of(secondary, "count");
  std::string so_far = flag_of(report, "final", false) ? "" : " (so far)";
  std::vector<Line> lines{{count == 0 ? "no later errors" + so_far
                                      : plural(count, "later error", "later errors") + " at " +
                                            plural(static_cast<long long>(sites.size()), "call site", "call sites") +
                                            ", caused by the first" + so_far}};
  for (const json& s : sites) {
    lines.push_back({text_of(s, "api", "?") + "  " + text_of(s, "name", "?") + " (" +
                         std::to_string(number_of(s, "code")) + ")  x" + std::to_string(number_of(s, "count")),
                     Tone::plain, false});
  }
  rows.push_back(row("secondary", "secondary", std::move(lines), true));
}

void add_refused(const json& report, std::vector<Row>& rows) {
  std::vector<Line> lines;
  for (const json& l : array_of(report, "launch_errors")) {
    lines.push_back({short_kernel_of(l) + " " + dims(l, "grid") + "x" + dims(l, "block") + "  " +
                         text_of(l, "name", "?") + " (" + std::to_string(number_of(l, "code")) + ")",
                     Tone::plain, false});
  }
  if (!lines.empty()) rows.push_back(row("refused", "refused", std::move(lines), true));
}

}  // namespace

ReportView view_report(const json& report, const std::string& path, const CellNames& cells) {
  ReportView view{path, {}};
  std::vector<Row>& rows = view.rows;
  add_process(report, rows);
  add_environment(report, rows);
  const json& first = object_of(report, "first_error");
  if (first.is_null()) {
    rows.push_back(row("first_error", "first error", {{"none recorded"}}, true));
    return view;
  }
  add_first_error(first, rows);
  add_gpu(report, rows);
  const json& culprit = object_of(report, "culprit");
  if (culprit.is_null()) {
    add_no_culprit(report, rows);
  } else {
    add_culprit(report, culprit, cells, rows);
  }
  add_candidates(report, culprit, rows);
  const json& messages = array_of(report, "device_messages");
  if (messages.size() > 1)
    rows.push_back(row("device_messages", "messages",
                       {{std::to_string(messages.size()) + " assertion lines (see device_messages)"}}, true));
  add_secondary(report, rows);
  add_refused(report, rows);
  rows.push_back(row("written", "written",
                     {{text_of(report, "written_at", "?") +
                           (!flag_of(report, "final", false)
                                ? " (at detection; the process did not exit normally)"
                                : text_of(report, "final_at", "exit") == "shutdown"
                                      ? " (final, when the process was asked to end; its exit did not rewrite it)"
                                      : " (final, at exit)"),
                       Tone::quiet}},
                     true));
  return view;
}

}  // namespace firstassert::cli
