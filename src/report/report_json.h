// The report, schema "firstassert/1": what the CLI, the merge of a distributed job's reports and other tools read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tracker.h"
#include "process_info.h"
#include "stack/module_map.h"

namespace firstassert {

inline constexpr const char* kReportSchema = "firstassert/1";

struct ToolInfo {
  std::string version;
  std::string backend;      // "cupti"
  std::string cupti_path;   // the CUPTI library in use
  uint32_t cupti_api_version = 0;  // its cuptiGetVersion; 0 unknown
  bool cupti_handed_over = false;  // another tool subscribed to CUPTI later and got it; recording went on by hooks
};

struct ReportInput {
  const ProcessInfo& process;
  const Findings& findings;
  const std::vector<LoadedModule>& modules;
  ToolInfo tool;
  bool final = false;       // false: written at detection; true: rewritten at exit with the final counts
  int64_t written_ns = 0;
  // What the job's own side (the Python package's values probe) found in the values a launch was given, by launch
  // seq: a JSON object each, written as `values` into the culprit or candidate with that seq.
  const std::map<uint64_t, std::string>* launch_values = nullptr;
  // When final: "exit" (the exit handler), or "shutdown" (the process said it was about to end: finish_report).
  const char* final_at = "exit";
};

std::string report_json(const ReportInput& input);

// 2026-11-30T03:12:45.123456Z
std::string iso_time(int64_t wall_ns);

}  // namespace firstassert
