#include "compiled_kernel.h"

#include <fstream>
#include <iterator>

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
  return std::string(head, sizeof head) + std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

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
    return launch;
  }
  return std::nullopt;
}

}  // namespace firstassert
