#include "triage_json.h"

#include <nlohmann/json.hpp>

#include "core/device_assert_line.h"
#include "triage_report.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "firstassert-triage/1";

// Text from a log: valid UTF-8 whatever the log held, as in the text summary.
json text(std::string_view s) { return printable(s, 4096); }

json rank(int r) { return r == kNoRank ? json(nullptr) : json(r); }

json position(const Position& p, int r) {
  return {{"log", p.log}, {"line", p.line}, {"cell", p.cell == 0 ? json(nullptr) : json(p.cell)}, {"rank", rank(r)}};
}

json triple(const Triple& t) { return json::array({t[0], t[1], t[2]}); }

json hint(const std::optional<Hint>& h, bool with_text) {
  if (!h) return nullptr;
  json out = {{"id", h->id}, {"title", h->title}};
  if (with_text) out["text"] = h->text;
  return out;
}

const char* dialect_name(DeviceDialect dialect) {
  switch (dialect) {
    case DeviceDialect::sycl: return "sycl";
    case DeviceDialect::hip: return "hip";
    default: return "cuda";
  }
}

json group(const AssertGroup& g) {
  bool located = !(g.flags & kMessageNoLocation);
  json first = position(g.first, g.first_rank);
  bool positioned = !(g.flags & kMessageNoPosition);
  first["block"] = positioned ? triple(g.first_block) : json(nullptr);
  first["thread"] = positioned ? triple(g.first_thread) : json(nullptr);
  return {
      {"file", g.file.empty() ? json(nullptr) : text(g.file)},
      {"line", located ? json(g.line) : json(nullptr)},
      {"function", g.function.empty() ? json(nullptr) : text(g.function)},
      {"condition", text(g.condition)},
      {"condition_cut", (g.flags & kMessageConditionCut) != 0},
      {"dialect", dialect_name(g.dialect)},
      {"condition_unquoted", (g.flags & kMessageUnquoted) != 0},
      {"lines", g.lines},
      {"garbled_lines", g.garbled_lines},
      {"reassembled_lines", g.reassembled_lines},
      {"distinct_blocks", positioned ? json(g.blocks.size()) : json(nullptr)},
      {"distinct_blocks_capped", g.blocks_capped},
      {"distinct_threads", positioned ? json(g.threads.size()) : json(nullptr)},
      {"distinct_threads_capped", g.threads_capped},
      {"first", first},
      {"hint", hint(group_hint(g), false)},
  };
}

}  // namespace

void write_json(const Findings& f, std::ostream& out) {
  json logs = json::array();
  for (const LogInfo& log : f.logs) {
    logs.push_back({{"name", text(log.name)}, {"lines", log.lines}, {"cut_lines", log.cut_lines},
                    {"unterminated", log.unterminated}, {"notebook", log.notebook}});
  }
  json groups = json::array();
  for (const AssertGroup& g : f.groups) groups.push_back(group(g));
  json first_traceback = nullptr;
  if (f.first_traceback) {
    const CudaTraceback& tb = *f.first_traceback;
    first_traceback = position(tb.at, tb.rank);
    first_traceback["exception"] = text(tb.exception);
    first_traceback["cuda_error"] = tb.cuda_error.empty() ? json(nullptr) : text(tb.cuda_error);
    first_traceback["last_frame"] = tb.last_frame.empty() ? json(nullptr) : text(tb.last_frame);
    first_traceback["code"] = tb.code == 0 ? json(nullptr) : json(tb.code);
  }
  json first_other = nullptr;
  if (f.first_other_cuda_error) {
    first_other = position(f.first_other_cuda_error->at, f.first_other_cuda_error->rank);
    first_other["text"] = text(f.first_other_cuda_error->text);
  }
  json ranks = json::array();
  for (const auto& [r, c] : f.ranks) {
    ranks.push_back({{"rank", rank(r)}, {"assertion_lines", c.assertion_lines}, {"cuda_tracebacks", c.cuda_tracebacks},
                     {"other_cuda_errors", c.other_cuda_errors}, {"watchdog_timeouts", c.watchdog_timeouts}});
  }
  json doubts_json = json::array();
  for (const Doubt& d : doubts(f)) doubts_json.push_back({{"kind", d.kind}, {"text", d.text}});
  json doc = {
      {"schema", kSchema},
      {"found", f.found()},
      {"logs", logs},
      {"assertions",
       {{"lines", f.assertion_lines},
        {"distinct", f.groups.size()},
        {"ungrouped_lines", f.ungrouped_assertion_lines},
        {"garbled_lines", f.garbled_lines},
        {"reassembled_lines", f.reassembled_lines},
        {"cut_conditions", f.cut_conditions},
        {"html_unescaped_lines", f.html_unescaped_lines},
        {"emphasis_lines", f.emphasis_lines},
        {"unquoted_conditions", f.unquoted_conditions},
        {"first_group", f.groups.empty() ? json(nullptr) : json(first_complete_group(f))},
        {"groups", groups}}},
      {"tracebacks", {{"count", f.cuda_tracebacks}, {"first", first_traceback}}},
      {"other_cuda_errors", {{"count", f.other_cuda_errors}, {"first", first_other}}},
      {"watchdog_timeouts", f.watchdog_timeouts},
      {"ranks", ranks},
      {"ranks_capped", f.ranks_capped},
      {"hint", hint(summary_hint(f), true)},
      {"doubts", doubts_json},
  };
  out << doc.dump(2) << "\n";
}

}  // namespace firstassert::cli::triage
