#include "render.h"

#include <ostream>

#include "word_lines.h"

namespace firstassert::cli {
namespace {

constexpr size_t kLabelWidth = 13;
constexpr size_t kTextWidth = 100;

std::string styled(const std::string& text, Tone tone, bool color) {
  if (!color || tone == Tone::plain) return text;
  const char* start = tone == Tone::strong ? "\033[1m" : tone == Tone::alarm ? "\033[1;31m" : "\033[2m";
  return start + text + "\033[0m";
}

}  // namespace

void render_text(const ReportView& view, std::ostream& out, bool color) {
  out << styled("firstassert report", Tone::strong, color) << " " << view.path << "\n";
  const std::string indent(kLabelWidth, ' ');
  for (const Row& row : view.rows) {
    if (row.starts_section) out << "\n";
    std::string label = row.label + std::string(kLabelWidth - std::min(kLabelWidth - 1, row.label.size()), ' ');
    bool first = true;
    for (const Line& line : row.lines) {
      std::vector<std::string> parts = line.wrap ? word_lines(line.text, kTextWidth) : std::vector{line.text};
      if (parts.empty()) parts.emplace_back();  // an empty line still shows its label
      for (const std::string& part : parts) {
        std::string text = (first ? label : indent) + styled(part, line.tone, color);
        out << text.substr(0, text.find_last_not_of(' ') + 1) << "\n";
        first = false;
      }
    }
  }
}

nlohmann::json render_rows(const ReportView& view) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : view.rows) {
    nlohmann::json lines = nlohmann::json::array();
    for (const Line& line : row.lines) lines.push_back(line.text);
    rows.push_back({{"key", row.key}, {"label", row.label}, {"lines", std::move(lines)}});
  }
  return {{"path", view.path}, {"rows", std::move(rows)}};
}

void render_report(const nlohmann::json& report, const std::string& path, std::ostream& out, bool color,
                   const CellNames& cells) {
  render_text(view_report(report, path, cells), out, color);
}

}  // namespace firstassert::cli
