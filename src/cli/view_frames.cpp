#include "view_frames.h"

#include "report/user_code.h"
#include "report_reader.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

constexpr size_t kPythonLines = 12;
constexpr size_t kNativeFrames = 8;

// Where a notebook's or a runner's own machinery lives: its frames say nothing of the user's code.
struct Framework {
  const char* name;
  const char* path_part;
};
constexpr Framework kFrameworks[] = {
    {"IPython", "/IPython/"},   {"ipykernel", "/ipykernel/"}, {"ipykernel", "/ipykernel_launcher.py"},
    {"asyncio", "/asyncio/"},   {"tornado", "/tornado/"},     {"traitlets", "/traitlets/"},
    {"zmq", "/zmq/"},           {"runpy", "/runpy.py"},       {"runpy", "<frozen runpy>"},
};

const char* framework_of(const std::string& file) {
  for (const Framework& f : kFrameworks) {
    if (file.find(f.path_part) != std::string::npos) return f.name;
  }
  return nullptr;
}

// "... 5 frames of asyncio, IPython": one line for a run of framework frames, each name once, in order.
std::string folded(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen = seen || names[j] == names[i];
    if (!seen) list += (list.empty() ? "" : ", ") + names[i];
  }
  return "... " + std::to_string(names.size()) + (names.size() == 1 ? " frame of " : " frames of ") + list;
}

std::string native_frame(const json& f) {
  std::string function = text_of(f, "function");
  if (function.empty()) {
    std::string module = text_of(f, "module");
    return module.empty() ? text_of(f, "pc", "?") : module + "+" + text_of(f, "offset", "?");
  }
  std::string file = text_of(f, "file");
  return file.empty() ? function : function + " (" + file + ":" + std::to_string(number_of(f, "line")) + ")";
}

Line whole(std::string text) { return {std::move(text), Tone::plain, false}; }

}  // namespace

const json* launching_frame(const json& launch) {
  const json& frames = array_of(launch, "python_stack");
  for (const json& f : frames) {
    if (is_user_python_file(text_of(f, "file"))) return &f;
  }
  return frames.empty() ? nullptr : &frames[0];
}

std::vector<Line> python_lines(const json& launch, const CellNames& cells) {
  std::vector<Line> lines;
  std::vector<std::string> run;  // the framework frames not yet folded into a line
  for (const json& frame : array_of(launch, "python_stack")) {
    if (const char* framework = framework_of(text_of(frame, "file"))) {
      run.push_back(framework);
      continue;
    }
    if (!run.empty()) lines.push_back(whole(folded(run)));
    run.clear();
    lines.push_back(whole(frame_where(frame, cells)));
  }
  if (!run.empty()) lines.push_back(whole(folded(run)));
  if (lines.size() > kPythonLines) {
    size_t more = lines.size() - kPythonLines;
    lines.resize(kPythonLines);
    lines.push_back({"... " + std::to_string(more) + " more", Tone::quiet, false});
  }
  return lines;
}

std::vector<Line> native_lines(const json& launch) {
  const json& frames = array_of(launch, "native_stack");
  std::vector<Line> lines;
  for (size_t i = 0; i < frames.size() && i < kNativeFrames; ++i) lines.push_back(whole(native_frame(frames[i])));
  if (frames.size() > kNativeFrames)
    lines.push_back({"... " + std::to_string(frames.size() - kNativeFrames) + " more", Tone::quiet, false});
  return lines;
}

}  // namespace firstassert::cli
