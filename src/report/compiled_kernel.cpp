#include "compiled_kernel.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "user_code.h"

namespace firstassert {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "[embedding, sum_1]" after `label` in line: the names; empty when the label is not there.
std::vector<std::string> bracketed_list_after(std::string_view line, std::string_view label) {
  std::vector<std::string> names;
  size_t at = line.find(label);
  if (at == std::string_view::npos) return names;
  size_t open = line.find('[', at + label.size());
  size_t close = line.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return names;
  std::string_view list = line.substr(open + 1, close - open - 1);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = trimmed(list.substr(0, comma));
    if (!name.empty()) names.emplace_back(name);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return names;
}

// The file's text when it is a module Inductor generated (its first bytes say so, read before the rest).
std::optional<std::string> inductor_module_text(const char* path) {
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  if (!in.read(head, sizeof head) || !is_inductor_module_text(std::string_view(head, sizeof head))) return std::nullopt;
  std::string rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::string(head, sizeof head) + rest;
}

std::optional<std::string> whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether the file holds code (as a stack trace shows it: stripped) on that line.
bool file_holds(const std::string& file, int line, std::string_view code) {
  std::optional<std::string> text = whole_file(file);
  if (!text) return false;
  std::vector<std::string_view> lines = lines_of(*text);
  return line >= 1 && static_cast<size_t>(line) <= lines.size() && trimmed(lines[line - 1]) == trimmed(code);
}

// The nodes' stack traces kept beside the wrapper, in the order of the launch's source nodes.
void add_model_lines(CompiledLaunch& launch) {
  std::string path = launch.wrapper_file + ".firstassert-nodes.json";
  std::optional<std::string> text = whole_file(path);
  if (!text) {
    launch.model_lines_missing = "no stack traces of its FX nodes were kept beside the generated code (" + path +
                                 "): firstassert run keeps them when the graph is compiled";
    return;
  }
  nlohmann::json kept = nlohmann::json::parse(*text, nullptr, false);
  if (!kept.is_object() || !kept.contains("nodes") || !kept["nodes"].is_object()) {
    launch.model_lines_missing = path + " is not what firstassert writes there";
    return;
  }
  const nlohmann::json& nodes = kept["nodes"];
  for (const std::string& node : launch.source_nodes) {
    auto trace = nodes.find(node);
    if (trace == nodes.end() || !trace->is_string()) continue;
    std::optional<ModelLine> line = model_line_of_trace(trace->get<std::string>());
    if (!line) continue;
    bool seen = false;
    for (const ModelLine& l : launch.model_lines) seen = seen || (l.file == line->file && l.line == line->line);
    if (seen) continue;
    line->node = node;
    line->file_agrees = file_holds(line->file, line->line, line->code);
    launch.model_lines.push_back(std::move(*line));
  }
  if (launch.model_lines.empty())
    launch.model_lines_missing = "the stack traces kept for its FX nodes (" + path + ") hold no line of the user's "
                                 "code (the compiled code is a library's, such as one of torch's own modules)";
}

}  // namespace

std::optional<ModelLine> model_line_of_trace(std::string_view trace) {
  std::optional<ModelLine> innermost;
  std::vector<std::string_view> lines = lines_of(trace);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view text = trimmed(lines[i]);
    constexpr std::string_view kFile = "File \"";
    if (!text.starts_with(kFile)) continue;
    size_t quote = text.find('"', kFile.size());
    size_t line_at = text.find(", line ", quote);
    size_t in_at = text.find(", in ", line_at);
    if (quote == std::string_view::npos || line_at == std::string_view::npos) continue;
    ModelLine frame;
    frame.file = std::string(text.substr(kFile.size(), quote - kFile.size()));
    frame.line = std::atoi(std::string(text.substr(line_at + 7)).c_str());
    if (in_at != std::string_view::npos) frame.function = std::string(text.substr(in_at + 5));
    if (i + 1 < lines.size() && !trimmed(lines[i + 1]).starts_with(kFile))
      frame.code = std::string(trimmed(lines[i + 1]));
    if (frame.line > 0 && is_user_python_file(frame.file)) innermost = std::move(frame);
  }
  return innermost;
}

bool is_inductor_module_text(std::string_view text) { return text.starts_with("# AOT ID:"); }

std::optional<CompiledLaunch> compiled_launch_in(std::string_view wrapper_text, int line) {
  std::vector<std::string_view> lines = lines_of(wrapper_text);
  if (line < 1 || static_cast<size_t>(line) > lines.size()) return std::nullopt;
  std::string_view launch = trimmed(lines[line - 1]);
  size_t run = launch.find(".run(");
  if (run == std::string_view::npos || run == 0) return std::nullopt;
  std::string_view name = launch.substr(0, run);
  for (char c : name)
    if (!is_identifier_char(c)) return std::nullopt;

  CompiledLaunch out;
  out.wrapper_line = line;
  out.kernel = std::string(name);
  // The comment Inductor writes above each kernel's launch in call(), a few lines up (after the stream's lookup).
  constexpr std::string_view kNodes = "Source Nodes:";
  for (int i = line - 2; i >= 0; --i) {
    std::string_view text = trimmed(lines[i]);
    if (!text.starts_with("#")) {
      if (text.find(".run(") != std::string_view::npos) break;  // the previous launch: this one has no comment
      continue;
    }
    if (text.find(kNodes) != std::string_view::npos) {
      out.source_nodes = bracketed_list_after(text, kNodes);
      out.aten_ops = bracketed_list_after(text, "Original ATen:");
      break;
    }
  }
  // `NAME = async_compile.triton('NAME', ...` follows the comment block that starts with `# kernel path: FILE`.
  std::string definition = out.kernel + " = async_compile.";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with(definition)) continue;
    constexpr std::string_view kPath = "# kernel path: ";
    for (size_t j = i; j-- > 0 && lines[j].starts_with("#");) {
      if (lines[j].starts_with(kPath)) {
        out.kernel_file = std::string(trimmed(lines[j].substr(kPath.size())));
        break;
      }
    }
    break;
  }
  return out;
}

std::optional<CompiledLaunch> compiled_launch_of(const LaunchRecord& r) {
  for (unsigned i = 0; i < r.python_depth && i < kMaxPythonFrames; ++i) {
    const PythonFrame& frame = r.python[i];
    if (frame.file == nullptr || frame.file[0] != '/') continue;
    std::optional<std::string> text = inductor_module_text(frame.file);
    if (!text) continue;
    std::optional<CompiledLaunch> launch = compiled_launch_in(*text, frame.line);
    if (!launch) continue;
    launch->wrapper_file = frame.file;
    add_model_lines(*launch);
    return launch;
  }
  return std::nullopt;
}

}  // namespace firstassert
