#include "triage_formats.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <sstream>

#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

using nlohmann::json;

// A notebook is read whole (it is one JSON document); past this, triage asks for its outputs as text instead.
constexpr std::streamsize kMaxNotebookBytes = std::streamsize{512} << 20;

// Each line of a text, in order; a text without a final newline still ends its last line.
template <typename Fn>
void each_line(std::string_view text, Fn&& take) {
  while (!text.empty()) {
    size_t newline = text.find('\n');
    take(text.substr(0, newline));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
}

// The lines of a text, each fed (as lines of one log line, for a record).
void feed_text(Scanner& scanner, std::string_view text, bool one_record = false) {
  bool first = true;
  each_line(text, [&](std::string_view line) {
    scanner.line(line, false, one_record && !first);
    first = false;
  });
}

// A string member of a JSON object, or "" when it is missing or of another type (a notebook written by hand).
std::string string_of(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A notebook's multiline string: a string, or a list of strings to concatenate.
std::string multiline(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string out;
  if (value.is_array()) {
    for (const json& part : value) {
      if (part.is_string()) out += part.get<std::string>();
    }
  }
  return out;
}

// IPython's traceback entries (coloured) as the Python traceback the scanner reads: the frames (IPython names them
// "Cell In[3], line 6" and "File /x.py:50, in f"), then the exception and its message.
void feed_error(Scanner& scanner, const json& output) {
  std::string ename = string_of(output, "ename"), evalue = string_of(output, "evalue");
  scanner.line("Traceback (most recent call last):", false);
  std::string scratch;
  const json traceback = output.contains("traceback") && output["traceback"].is_array() ? output["traceback"]
                                                                                         : json::array();
  for (const json& entry : traceback) {
    if (!entry.is_string()) continue;
    std::string plain(strip_ansi(entry.get<std::string>(), scratch));
    each_line(plain, [&](std::string_view line) {
      if (line.starts_with("Cell In[") || line.starts_with("File ")) scanner.line("  " + std::string(line), false);
    });
  }
  size_t newline = evalue.find('\n');
  scanner.line(ename + ": " + evalue.substr(0, newline), false);
  if (newline != std::string::npos) feed_text(scanner, std::string_view(evalue).substr(newline + 1));
  scanner.line("", false);
}

}  // namespace

bool looks_like_notebook(std::string_view name, std::string_view start) {
  if (name.ends_with(".ipynb")) return true;
  size_t brace = start.find_first_not_of(" \t\r\n");
  return brace != std::string_view::npos && start[brace] == '{' && start.find("\"cells\"") != std::string_view::npos &&
         start.find("\"nbformat") != std::string_view::npos;
}

namespace {

// A notebook's text whole, growing as it is read: at most kMaxNotebookBytes, else false.
bool read_whole(std::istream& in, std::string& text, std::string& error) {
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (static_cast<std::streamsize>(text.size()) > kMaxNotebookBytes) {
      error = "a notebook over 512 MiB is not read whole (save its outputs as text: jupyter nbconvert --to script, "
              "or copy them into a file)";
      return false;
    }
  }
  if (in.bad()) {
    error = "read error";
    return false;
  }
  return true;
}

void feed_cells(const json& notebook, Scanner& scanner) {
  uint32_t number = 0;
  for (const json& cell : notebook["cells"]) {
    ++number;
    if (!cell.is_object() || !cell.contains("outputs") || !cell["outputs"].is_array()) continue;
    scanner.set_cell(number);
    // ipykernel splits a stream where it flushed, not where lines end: a stream's unfinished line goes on in its
    // next output.
    std::string open_line[2];  // stdout, stderr
    auto flush = [&](std::string& pending) {
      if (!pending.empty()) feed_text(scanner, pending);
      pending.clear();
    };
    for (const json& output : cell["outputs"]) {
      if (!output.is_object()) continue;
      std::string type = string_of(output, "output_type");
      if (type == "stream") {
        std::string& pending = open_line[string_of(output, "name") == "stderr" ? 1 : 0];
        pending += multiline(output.contains("text") ? output["text"] : json());
        size_t last_newline = pending.rfind('\n');
        if (last_newline != std::string::npos) {
          feed_text(scanner, std::string_view(pending).substr(0, last_newline + 1));
          pending.erase(0, last_newline + 1);
        }
      } else if (type == "error") {
        flush(open_line[0]);
        flush(open_line[1]);
        feed_error(scanner, output);
      }
    }
    flush(open_line[0]);
    flush(open_line[1]);
  }
  scanner.set_cell(0);
}

}  // namespace

bool scan_notebook(std::istream& in, Scanner& scanner, std::string& error) {
  std::string text;
  bool read = read_whole(in, text, error);
  json notebook = read ? json::parse(text, nullptr, false) : json();
  text = std::string();
  if (read && (notebook.is_discarded() || !notebook.is_object() || !notebook.contains("cells") ||
               !notebook["cells"].is_array())) {
    error = "not a notebook (no JSON object with \"cells\"); read it as a plain log by another name";
    read = false;
  }
  if (read) {
    try {
      feed_cells(notebook, scanner);
    } catch (const std::exception& e) {  // a value of an unexpected type: what was fed before it still counts
      error = std::string("a cell's output is not as nbformat writes it (") + e.what() + "); the cells before it were read";
      read = false;
    }
  }
  scanner.end_log(false);
  return read;
}

void feed_log_line(Scanner& scanner, std::string_view raw, bool cut) {
  // A JSON record: its message, as the service received it from the program (several lines, perhaps).
  if (raw.size() > 2 && raw.front() == '{' && (raw.back() == '}' || raw.ends_with("}\r")) &&
      raw.find("\"message\"") != std::string_view::npos) {
    json record = json::parse(raw, nullptr, false);
    if (record.is_object() && record.contains("message") && record["message"].is_string()) {
      std::string message = record["message"].get<std::string>();
      if (message.empty()) {
        scanner.line(message, cut);
        return;
      }
      feed_text(scanner, message, true);
      return;
    }
  }
  scanner.line(raw, cut);
}

}  // namespace firstassert::cli::triage
