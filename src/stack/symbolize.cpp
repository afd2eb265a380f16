#include "symbolize.h"

#include <dlfcn.h>

#include <boost/stacktrace/frame.hpp>

#include "core/demangle.h"

namespace firstassert {

std::vector<ResolvedFrame> symbolize(const uintptr_t* pcs, size_t count) {
  std::vector<ResolvedFrame> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    ResolvedFrame r;
    r.pc = pcs[i];
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(r.pc), &info) != 0 && info.dli_fname != nullptr) {
      r.module = info.dli_fname;
      r.offset = r.pc - reinterpret_cast<uintptr_t>(info.dli_fbase);
      if (info.dli_sname != nullptr) r.function = demangle(info.dli_sname);
    }
    // A return address points after the call: the call's own line is one byte back.
    boost::stacktrace::frame call_site(reinterpret_cast<void*>(r.pc - 1));
    try {
      std::string name = call_site.name();
      if (!name.empty()) r.function = name;
      r.file = call_site.source_file();
      r.line = static_cast<unsigned>(call_site.source_line());
    } catch (const std::exception&) {
      // No debug information or an unreadable object: the module and offset still locate the frame.
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace firstassert
