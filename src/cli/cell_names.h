// Notebook cells named as the user knows them ("Cell In[4], line 2", as IPython's traceback says) instead of the file
// the kernel compiled the cell under (/tmp/ipykernel_23482/3664598579.py). The Python package writes the names beside
// a report, in <report>.cells (python/firstassert/cells.py): JSON, file name -> {"cell": "In[4]", "source": code}.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace firstassert::cli {

struct CellName {
  std::string cell;    // "In[4]"
  std::string source;  // the cell's code, for the text of a line
};
using CellNames = std::map<std::string, CellName>;  // by the file name the frames carry

// The names in a .cells document; entries of another shape are left out.
CellNames cell_names_from(const nlohmann::json& document);
// The names kept beside the report at report_path; none when there is no such file or it is unreadable.
CellNames cell_names_beside(const std::string& report_path);

// A Python frame of a report in the user's terms: "Cell In[4], line 2, in f" for a cell, else "path:line in f".
std::string frame_where(const nlohmann::json& frame, const CellNames& cells);
// The text of the frame's line, trimmed: from a cell's code, else from the file where this machine has it; "" when
// neither is at hand.
std::string frame_source_line(const nlohmann::json& frame, const CellNames& cells);

}  // namespace firstassert::cli
