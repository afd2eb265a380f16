#include "cell_names.h"

#include <fstream>
#include <sstream>

#include "report_reader.h"

namespace firstassert::cli {
namespace {

std::string trimmed(const std::string& line) {
  size_t begin = line.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  return line.substr(begin, line.find_last_not_of(" \t\r") - begin + 1);
}

std::string nth_line(std::istream& in, long long number) {
  std::string line;
  for (long long i = 1; std::getline(in, line); ++i) {
    if (i == number) return trimmed(line);
  }
  return {};
}

}  // namespace

CellNames cell_names_from(const nlohmann::json& document) {
  CellNames names;
  if (!document.is_object()) return names;
  for (const auto& [file, entry] : document.items()) {
    std::string cell = text_of(entry, "cell");
    if (!cell.empty()) names[file] = {cell, text_of(entry, "source")};
  }
  return names;
}

CellNames cell_names_beside(const std::string& report_path) {
  std::ifstream in(report_path + ".cells");
  if (!in) return {};
  return cell_names_from(nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false));
}

std::string frame_where(const nlohmann::json& frame, const CellNames& cells) {
  std::string file = text_of(frame, "file", "?");
  std::string function = text_of(frame, "function", "?");
  std::string line = frame.is_object() && frame.contains("line") && frame["line"].is_number_integer()
                         ? std::to_string(frame["line"].get<long long>())
                         : "?";
  auto cell = cells.find(file);
  if (cell == cells.end()) return file + ":" + line + " in " + function;
  std::string where = "Cell " + cell->second.cell + ", line " + line;
  return function == "<module>" ? where : where + ", in " + function;
}

std::string frame_source_line(const nlohmann::json& frame, const CellNames& cells) {
  long long line = number_of(frame, "line");
  if (line < 1) return {};
  std::string file = text_of(frame, "file");
  auto cell = cells.find(file);
  if (cell != cells.end()) {
    std::istringstream source(cell->second.source);
    return nth_line(source, line);
  }
  if (file.empty() || file.front() == '<') return {};
  std::ifstream in(file);
  return in ? nth_line(in, line) : std::string();
}

}  // namespace firstassert::cli
