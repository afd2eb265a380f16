#include "report_json.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "compiled_kernel.h"
#include "core/demangle.h"
#include "core/hex_text.h"
#include "hints.h"
#include "job_environment.h"
#include "launch_origin.h"
#include "stack/symbolize.h"

namespace firstassert {
namespace {

// Keys keep the order written here: schema first, the way a person reads a report.
using json = nlohmann::ordered_json;

json dims(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

json python_frames(const LaunchRecord& r) {
  json frames = json::array();
  for (unsigned i = 0; i < r.python_depth && i < kMaxPythonFrames; ++i) {
    const PythonFrame& f = r.python[i];
    frames.push_back({{"file", f.file != nullptr ? f.file : ""},
                      {"function", f.function != nullptr ? f.function : ""},
                      {"line", f.line}});
  }
  return frames;
}

// Raw frames for every launch; resolved names, files and lines too when resolve is set (the culprit and the
// candidates: symbolizing the whole ring would cost more than it tells).
// Text, or null where there is none.
json text_or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json native_frames(const LaunchRecord& r, bool resolve) {
  json frames = json::array();
  unsigned depth = std::min<unsigned>(r.stack_depth, kMaxStackFrames);
  if (!resolve) {
    for (unsigned i = 0; i < depth; ++i) frames.push_back({{"pc", hex(r.stack[i])}});
    return frames;
  }
  for (const ResolvedFrame& f : symbolize(r.stack, depth)) {
    json frame = {{"pc", hex(f.pc)}, {"module", f.module}, {"offset", hex(f.offset)}};
    frame["function"] = text_or_null(f.function);
    frame["file"] = text_or_null(f.file);
    frame["line"] = f.line == 0 ? json(nullptr) : json(f.line);
    frames.push_back(frame);
  }
  return frames;
}

const char* state_name(GraphNodeState s) {
  switch (s) {
    case GraphNodeState::completed:
      return "completed";
    case GraphNodeState::not_completed:
      return "not completed";
    default:
      return "unknown";
  }
}

json origin_or_null(const LaunchRecord& r) {
  std::string where = short_origin(r);
  return text_or_null(where);
}

// A graph's kernel node: which one, and what its breadcrumb said in the replay that failed.
json graph_node(const LaunchRecord& r) {
  if (r.graph_node == 0) return nullptr;
  return {{"node", r.graph_node},
          {"nodes", r.graph_nodes},
          {"state", state_name(r.graph_state)},
          {"captured_at", origin_or_null(r)}};
}

// The culprit's graph: its kernel nodes in the order they were made, at most kListedNodes of them around the
// culprit (a compiled model's graph holds thousands; each listed node is symbolized).
constexpr size_t kListedNodes = 512;
json graph_node_list(const std::vector<LaunchRecord>& nodes, uint32_t culprit_node) {
  if (nodes.empty()) return nullptr;
  size_t first = 0;
  if (nodes.size() > kListedNodes)
    first = std::min<size_t>(culprit_node > kListedNodes / 2 ? culprit_node - kListedNodes / 2 : 0,
                             nodes.size() - kListedNodes);
  size_t end = std::min(nodes.size(), first + kListedNodes);
  json list = json::array();
  for (size_t i = first; i < end; ++i) {
    const LaunchRecord& n = nodes[i];
    json node = {{"node", n.graph_node}};
    node["kernel"] = n.kernel != nullptr ? json(demangle(n.kernel)) : json(nullptr);
    node["short_name"] = n.kernel != nullptr ? json(short_kernel_name(demangle(n.kernel))) : json(nullptr);
    node["mangled"] = n.kernel != nullptr ? json(n.kernel) : json(nullptr);
    node["grid"] = dims(n.grid);
    node["block"] = dims(n.block);
    node["shared_mem"] = n.shared_mem;
    node["state"] = state_name(n.graph_state);
    node["captured_at"] = origin_or_null(n);
    list.push_back(node);
  }
  return list;
}

// Text that is not a JSON object is left out rather than trusted.
void attach_values(json& j, const LaunchRecord& r, const std::map<uint64_t, std::string>* launch_values) {
  if (launch_values == nullptr) return;
  auto found = launch_values->find(r.seq);
  if (found == launch_values->end()) return;
  json values = json::parse(found->second, nullptr, false);
  if (values.is_object()) j["values"] = std::move(values);
}

json launch(const LaunchRecord& r, bool resolve_stack = false) {
  json j;
  j["seq"] = r.seq;
  j["api"] = launch_api_name(r.api);
  j["graph"] = r.graph;
  j["graph_node"] = graph_node(r);
  if (r.kernel != nullptr) {
    j["kernel"] = demangle(r.kernel);
    // The name as one-line summaries give it, so that every reader of the report names kernels alike.
    j["short_name"] = short_kernel_name(demangle(r.kernel));
    j["mangled"] = r.kernel;
  } else {
    j["kernel"] = nullptr;
    j["short_name"] = nullptr;
    j["mangled"] = nullptr;
  }
  j["grid"] = dims(r.grid);
  j["block"] = dims(r.block);
  j["shared_mem"] = r.shared_mem;
  j["stream"] = hex(r.stream);
  j["per_thread_default_stream"] = r.per_thread_default_stream;
  j["device"] = r.device;
  j["context"] = hex(r.context);
  j["thread"] = r.thread;
  j["time"] = iso_time(r.wall_ns);
  j["time_ns"] = r.wall_ns;
  j["correlation_id"] = r.correlation_id;
  // The order of launch calls across threads (LaunchFields): what ordered one stream's launches, for whoever checks.
  j["queue_mark"] = r.queue_mark;
  j["marks_at_entry"] = r.marks_at_entry;
  j["native_stack"] = native_frames(r, resolve_stack);
  j["python_stack"] = python_frames(r);
  return j;
}

json message(const DeviceMessage& m) {
  return {{"file", m.file},
          {"line", m.line},
          {"function", m.function},
          {"block", json::array({m.block[0], m.block[1], m.block[2]})},
          {"thread", json::array({m.thread[0], m.thread[1], m.thread[2]})},
          {"condition", m.condition},
          {"time", iso_time(m.wall_ns)}};
}

json sites(const std::vector<ErrorSite>& list) {
  json out = json::array();
  for (const ErrorSite& s : list) {
    out.push_back({{"api", s.api},
                   {"code", s.code},
                   {"name", error_name(s.domain, s.code)},
                   {"count", s.count},
                   {"first_time", iso_time(s.first_wall_ns)},
                   {"last_time", iso_time(s.last_wall_ns)}});
  }
  return out;
}

// --- One function per section of the report, in the order they are written ---

json tool_section(const ToolInfo& tool) {
  return {{"name", "firstassert"},
          {"version", tool.version},
          {"backend", tool.backend},
          {"cupti", tool.cupti_path},
          {"cupti_handed_over", tool.cupti_handed_over}};
}

json process_section(const ProcessInfo& process) {
  return {{"pid", process.pid},
          {"host", process.host},
          {"argv", process.argv},
          {"rank", process.rank ? json(*process.rank) : json(nullptr)},
          {"start_time", iso_time(process.start_time_ns)},
          {"start_time_ns", process.start_time_ns}};
}

json error_fields(const std::string& api, ApiDomain domain, int code, bool sticky, int64_t wall_ns, int32_t thread,
                  json launches_before) {
  const char* description = error_description(code);
  return {{"api", api},
          {"code", code},
          {"name", error_name(domain, code)},
          {"description", description != nullptr ? description : ""},
          {"sticky", sticky},
          {"time", iso_time(wall_ns)},
          {"time_ns", wall_ns},
          {"thread", thread},
          {"launches_before", std::move(launches_before)}};
}

// The first sticky error; without one, the first launch the API refused; null when neither was seen.
json first_error_section(const Findings& f) {
  if (f.has_primary) {
    const PrimaryError& p = f.primary;
    json j = error_fields(p.api, p.domain, p.code, true, p.wall_ns, p.thread, p.launches_before);
    bool named = !f.devices.empty() && f.devices.front().failed_first && f.devices.front().identity.ordinal >= 0;
    j["device"] = named ? json(f.devices.front().identity.ordinal) : json(nullptr);
    return j;
  }
  if (!f.launch_errors.empty()) {
    const LaunchError& e = f.launch_errors.front();
    return error_fields(launch_api_name(e.launch.api), e.domain, e.code, false, e.launch.wall_ns, e.launch.thread,
                        nullptr);
  }
  return nullptr;
}

// The GPUs the job used, the failing one first (core/device_use.h); for the others, what their calls showed after
// the first error.
json devices_section(const Findings& f) {
  json out = json::array();
  for (const DeviceUse& d : f.devices) {
    const DeviceIdentity& id = d.identity;
    json after = nullptr;
    if (f.has_primary && !d.failed_first) {
      after = {{"state", after_state(d.after)},
               {"syncs_succeeded", d.after.syncs_succeeded},
               {"launches_completed", d.after.launches_completed},
               {"sticky_errors", d.after.sticky_errors},
               {"first_error", nullptr}};
      if (d.after.sticky_errors > 0)
        after["first_error"] = {{"api", d.after.first_api},
                                {"code", d.after.first_code},
                                {"name", error_name(d.after.first_domain, d.after.first_code)}};
    }
    out.push_back({{"ordinal", id.ordinal >= 0 ? json(id.ordinal) : json(nullptr)},
                   {"name", text_or_null(id.name)},
                   {"uuid", text_or_null(id.uuid)},
                   {"pci_bus_id", text_or_null(id.pci_bus_id)},
                   {"context", hex(id.context)},
                   {"failed_first", d.failed_first},
                   {"after_first_error", std::move(after)}});
  }
  return out;
}

json decision_section(const Findings& f) {
  if (!f.has_primary && !f.culprit) return nullptr;
  return {{"confidence", f.confidence},
          {"reason", f.reason},
          {"candidates", f.candidates_total},
          {"fitting", f.candidates_fitting}};
}

json model_lines(const CompiledLaunch& c) {
  json out = json::array();
  for (const ModelLine& l : c.model_lines) {
    out.push_back({{"node", l.node},
                   {"file", l.file},
                   {"line", l.line},
                   {"function", l.function},
                   {"code", l.code},
                   {"file_agrees", l.file_agrees}});
  }
  return out;
}

// A kernel of a torch.compile graph: the generated code around its launch (compiled_kernel.h); null otherwise.
json compiled_section(const LaunchRecord& r) {
  std::optional<CompiledLaunch> c = compiled_launch_of(r);
  if (!c) return nullptr;
  return {{"kernel", c->kernel},
          {"kernel_file", c->kernel_file},
          {"launch", {{"file", c->wrapper_file}, {"line", c->wrapper_line}}},
          {"source_nodes", c->source_nodes},
          {"aten_ops", c->aten_ops},
          {"model_lines", model_lines(*c)},
          {"model_lines_missing", text_or_null(c->model_lines_missing)},
          // Triton compiles each tl.device_assert with its own source location: the device's line names the
          // kernel's generated file, never the model.
          {"device_line_location", "the Triton kernel's generated file"},
          {"values", kCompiledValuesAdvice}};
}

// The hint for the culprit, from its device line, its kernel and the error.
json culprit_hint(const Findings& f) {
  int code = f.has_primary ? f.primary.code : (f.launch_errors.empty() ? 0 : f.launch_errors.front().code);
  std::string kernel = f.culprit->kernel ? demangle(f.culprit->kernel) : std::string();
  std::optional<Hint> hint = hint_for_launch(f.culprit_message ? &*f.culprit_message : nullptr, kernel, code);
  return hint ? json{{"id", hint->id}, {"title", hint->title}, {"text", hint->text}} : json(nullptr);
}

json culprit_section(const Findings& f, const std::map<uint64_t, std::string>* launch_values) {
  if (!f.culprit) return nullptr;
  json culprit = launch(*f.culprit, true);
  if (!f.has_primary) culprit["seq"] = nullptr;  // a refused launch never entered the launch order
  culprit["confidence"] = f.confidence;
  culprit["reason"] = f.reason;
  culprit["device_message"] = f.culprit_message ? message(*f.culprit_message) : json(nullptr);
  culprit["hint"] = culprit_hint(f);
  culprit["graph_nodes"] = graph_node_list(f.culprit_graph, f.culprit->graph_node);
  culprit["compiled"] = compiled_section(*f.culprit);
  if (f.has_primary) attach_values(culprit, *f.culprit, launch_values);
  return culprit;
}

json candidates_section(const std::vector<LaunchRecord>& candidates,
                        const std::map<uint64_t, std::string>* launch_values) {
  json out = json::array();
  for (const LaunchRecord& c : candidates) {
    json candidate = launch(c, true);
    attach_values(candidate, c, launch_values);
    out.push_back(candidate);
  }
  return out;
}

json device_messages_section(const std::vector<DeviceMessage>& messages) {
  json out = json::array();
  for (const DeviceMessage& m : messages) out.push_back(message(m));
  return out;
}

json launch_errors_section(const std::vector<LaunchError>& errors) {
  json out = json::array();
  for (const LaunchError& e : errors) {
    json l = launch(e.launch, true);
    l["seq"] = nullptr;  // refused launches never entered the launch order
    l["code"] = e.code;
    l["name"] = error_name(e.domain, e.code);
    out.push_back(l);
  }
  return out;
}

json secondary_section(const Findings& f) { return {{"count", f.secondary_count}, {"sites", sites(f.secondary)}}; }

json recent_launches_section(const std::vector<LaunchRecord>& recent) {
  json out = json::array();
  for (const LaunchRecord& l : recent) out.push_back(launch(l));
  return out;
}

// Which CUDA runtime, CUPTI and PyTorch the job ran with (job_environment.h); null members for what it had not loaded.
json environment_section(const std::vector<LoadedModule>& modules, const ToolInfo& tool) {
  JobEnvironment e = job_environment(modules, tool.cupti_path, tool.cupti_api_version);
  json runtime = e.runtime_library.empty() ? json(nullptr)
                                           : json{{"library", e.runtime_library}, {"soname", e.runtime_soname}};
  json cupti = e.cupti_library.empty()
                   ? json(nullptr)
                   : json{{"library", e.cupti_library},
                          {"api_version", e.cupti_api_version == 0 ? json(nullptr) : json(e.cupti_api_version)}};
  json torch = e.torch_version.empty()
                   ? json(nullptr)
                   : json{{"version", e.torch_version}, {"cuda", text_or_null(e.torch_cuda)}, {"path", e.torch_dir}};
  return {{"cuda_runtime", runtime}, {"cupti", cupti}, {"torch", torch}};
}

json modules_section(const std::vector<LoadedModule>& modules) {
  json out = json::array();
  for (const LoadedModule& m : modules)
    out.push_back({{"path", m.path}, {"base", hex(m.base)}, {"build_id", m.build_id}});
  return out;
}

}  // namespace

std::string iso_time(int64_t wall_ns) {
  if (wall_ns <= 0) return {};
  time_t seconds = static_cast<time_t>(wall_ns / 1000000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%06lldZ", static_cast<long long>((wall_ns % 1000000000) / 1000));
  return text;
}

std::string report_json(const ReportInput& in) {
  const Findings& f = in.findings;
  json r;
  r["schema"] = kReportSchema;
  r["tool"] = tool_section(in.tool);
  r["process"] = process_section(in.process);
  r["final"] = in.final;
  r["final_at"] = in.final ? json(in.final_at) : json(nullptr);
  r["written_at"] = iso_time(in.written_ns);
  r["first_error"] = first_error_section(f);
  r["devices"] = devices_section(f);
  r["decision"] = decision_section(f);
  r["culprit"] = culprit_section(f, in.launch_values);
  r["candidates"] = candidates_section(f.candidates, in.launch_values);
  r["device_messages"] = device_messages_section(f.device_messages);
  r["launch_errors"] = launch_errors_section(f.launch_errors);
  r["secondary"] = secondary_section(f);
  r["other_errors"] = sites(f.other_errors);
  r["recent_launches"] = recent_launches_section(f.recent);
  r["launches_recorded"] = f.launches_recorded;
  r["environment"] = environment_section(in.modules, in.tool);
  r["modules"] = modules_section(in.modules);
  // Kernel names and argv may hold any bytes: invalid UTF-8 is replaced, never thrown on.
  return r.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace firstassert
