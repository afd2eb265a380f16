#include "launch_origin.h"

#include <algorithm>
#include <cstdio>

#include "core/demangle.h"
#include "stack/symbolize.h"
#include "user_code.h"

namespace firstassert {
namespace {

// The innermost Python frame of the user's code, else the innermost frame; nullptr without Python frames.
const PythonFrame* origin_frame(const LaunchRecord& r) {
  if (r.python_depth == 0) return nullptr;
  for (unsigned i = 0; i < r.python_depth; ++i) {
    if (r.python[i].file != nullptr && is_user_python_file(r.python[i].file)) return &r.python[i];
  }
  return &r.python[0];
}

}  // namespace

std::string python_origin(const LaunchRecord& r) {
  const PythonFrame* chosen = origin_frame(r);
  if (chosen == nullptr) return {};
  return std::string(chosen->file ? chosen->file : "?") + ":" + std::to_string(chosen->line) + " in " +
         (chosen->function ? chosen->function : "?");
}

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

std::string short_origin(const LaunchRecord& r) {
  const PythonFrame* chosen = origin_frame(r);
  if (chosen == nullptr || chosen->file == nullptr) return native_origin(r, 1);
  std::string file = chosen->file;
  return file.substr(file.rfind('/') + 1) + ":" + std::to_string(chosen->line);
}

}  // namespace firstassert
