#include "offline_symbols.h"

#include <elf.h>
#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "report_reader.h"

namespace firstassert::cli {
namespace {

using nlohmann::json;

// The GNU build id of an ELF file on disk, as hex; empty when it has none or is not ELF64.
std::string build_id_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::string(reinterpret_cast<char*>(eh.e_ident), 4) != "\x7f" "ELF" ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return {};
    if (ph.p_type != PT_NOTE || ph.p_filesz > (1 << 20)) continue;
    std::vector<unsigned char> notes(ph.p_filesz);
    in.seekg(static_cast<std::streamoff>(ph.p_offset));
    if (!in.read(reinterpret_cast<char*>(notes.data()), static_cast<std::streamsize>(notes.size()))) return {};
    size_t at = 0;
    while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
      Elf64_Nhdr nh{};
      std::memcpy(&nh, notes.data() + at, sizeof nh);
      size_t name = at + sizeof nh, desc = name + ((nh.n_namesz + 3) & ~3u), next = desc + ((nh.n_descsz + 3) & ~3u);
      if (next > notes.size()) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(notes.data() + name, "GNU", 4) == 0) {
        static const char digits[] = "0123456789abcdef";
        std::string hex;
        for (unsigned j = 0; j < nh.n_descsz; ++j) {
          hex += digits[notes[desc + j] >> 4];
          hex += digits[notes[desc + j] & 15];
        }
        return hex;
      }
      at = next;
    }
  }
  return {};
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// addr2line -f -C -e module offset: two lines, function then file:line ("??" when unknown).
bool addr2line(const std::string& module, unsigned long long offset, std::string& function, std::string& file,
               unsigned& line) {
  char address[32];
  std::snprintf(address, sizeof address, "0x%llx", offset > 0 ? offset - 1 : 0);  // the call, not the return
  std::string command = "addr2line -f -C -e " + shell_quote(module) + " " + address + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  std::array<char, 4096> buffer{};
  std::string out;
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
  if (pclose(pipe) != 0) return false;
  size_t newline = out.find('\n');
  if (newline == std::string::npos) return false;
  function = out.substr(0, newline);
  std::string location = out.substr(newline + 1);
  while (!location.empty() && (location.back() == '\n' || location.back() == ' ')) location.pop_back();
  if (size_t paren = location.find(" ("); paren != std::string::npos) location.resize(paren);  // discriminators
  size_t colon = location.rfind(':');
  if (function == "??") function.clear();
  if (colon != std::string::npos && location.compare(0, 2, "??") != 0) {
    file = location.substr(0, colon);
    line = static_cast<unsigned>(std::strtoul(location.c_str() + colon + 1, nullptr, 10));
  }
  return !function.empty() || !file.empty();
}

}  // namespace

int resolve_offline(json& report) {
  // Which modules are here, unchanged: same build id as the report recorded.
  std::map<std::string, bool> usable;
  for (const json& m : array_of(report, "modules")) {
    std::string path = text_of(m, "path");
    if (path.empty()) continue;
    std::string recorded = text_of(m, "build_id");
    std::string here = build_id_of_file(path);
    usable[path] = !here.empty() && here == recorded;
  }
  int resolved = 0;
  auto fix_frames = [&](json& launch) {
    if (!launch.is_object() || !launch.contains("native_stack") || !launch["native_stack"].is_array()) return;
    for (json& frame : launch["native_stack"]) {
      if (!frame.is_object() || frame.value("function", json()).is_string()) continue;
      std::string module = text_of(frame, "module");
      std::string offset_text = text_of(frame, "offset");
      if (module.empty() || offset_text.empty() || !usable[module]) continue;
      std::string function, file;
      unsigned line = 0;
      if (!addr2line(module, std::strtoull(offset_text.c_str(), nullptr, 16), function, file, line)) continue;
      frame["function"] = function.empty() ? json(nullptr) : json(function);
      frame["file"] = file.empty() ? json(nullptr) : json(file);
      frame["line"] = line == 0 ? json(nullptr) : json(line);
      frame["resolved_offline"] = true;
      ++resolved;
    }
  };
  if (report.is_object()) {
    if (report.contains("culprit")) fix_frames(report["culprit"]);
    for (const char* list : {"candidates", "launch_errors"}) {
      if (report.contains(list) && report[list].is_array())
        for (json& launch : report[list]) fix_frames(launch);
    }
  }
  return resolved;
}

}  // namespace firstassert::cli
