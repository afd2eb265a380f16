// What `firstassert triage` finds in logs of a job that ran without the shim: the driver's assertion lines, grouped;
// the Python tracebacks carrying a CUDA error (the first one apart); the rank behind each line. Lines go in one at a
// time (logs may be huge), findings stay bounded whatever the logs hold.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/device_assert_line.h"
#include "triage_prefixes.h"

namespace firstassert::cli::triage {

// The CUDA error code a message names ("CUDA error: device-side assert triggered" -> 710), 0 when none is known.
int cuda_error_code(std::string_view text);

using Triple = std::array<uint32_t, 3>;

// Where a line is: the log's index among those read, and its 1-based line number there. Ordered as read.
struct Position {
  size_t log = 0;
  uint64_t line = 0;
  uint32_t cell = 0;  // in a notebook: the 1-based cell whose output holds the line; 0 elsewhere
  auto operator<=>(const Position&) const = default;
};

// Identical assertions (file, line, function, condition) over all blocks and threads that printed them.
struct AssertGroup {
  std::string file;
  uint32_t line = 0;
  std::string function;
  std::string condition;
  uint64_t lines = 0;
  std::set<Triple> blocks, threads;  // at most kMaxDistinct each; *_capped: that set stopped growing
  bool blocks_capped = false, threads_capped = false;
  Position first;
  int first_rank = kNoRank;
  Triple first_block{}, first_thread{};
  DeviceDialect dialect = DeviceDialect::cuda;  // SYCL: global id / local id; HIP: no block or thread at all
  uint8_t flags = 0;                // DeviceMessageFlag: what its lines lacked (any of them)
  uint64_t garbled_lines = 0;       // lines spliced with other output: only their intact fields were kept
  uint64_t reassembled_lines = 0;   // records wrapped onto several lines and joined again
};

struct CudaTraceback {
  Position at;             // the exception's line
  int rank = kNoRank;
  std::string exception;   // the exception line ("RuntimeError: CUDA error: device-side assert triggered")
  std::string cuda_error;  // the message line naming the CUDA error, when not the exception line itself
  std::string last_frame;  // `File "train.py", line 42, in step`, empty if the traceback had none
  int code = 0;
};

struct OtherCudaError {
  Position at;
  int rank = kNoRank;
  std::string text;
};

struct RankCounts {
  uint64_t assertion_lines = 0;
  uint64_t cuda_tracebacks = 0;
  uint64_t other_cuda_errors = 0;
  uint64_t watchdog_timeouts = 0;
};

struct LogInfo {
  std::string name;  // as given ("-" for stdin)
  bool notebook = false;  // read as a saved notebook: its positions are cells
  uint64_t lines = 0;
  uint64_t cut_lines = 0;
  bool unterminated = false;  // the last line had no newline: the log was cut
};

struct Findings {
  std::vector<LogInfo> logs;
  std::vector<AssertGroup> groups;  // in order of first appearance
  uint64_t assertion_lines = 0;            // assertion records (a line may hold several)
  uint64_t ungrouped_assertion_lines = 0;  // records of assertions past kMaxGroups distinct ones
  uint64_t garbled_lines = 0;
  uint64_t reassembled_lines = 0;
  uint64_t cut_conditions = 0;             // records whose condition was cut off
  uint64_t html_unescaped_lines = 0;       // lines a web page had HTML-escaped (&lt; &amp; &#96;), read undone
  uint64_t emphasis_lines = 0;             // assertion lines a page had put markdown emphasis (**) into
  uint64_t unquoted_conditions = 0;        // records whose condition had lost its backticks (or had other quotes)
  std::optional<CudaTraceback> first_traceback;
  uint64_t cuda_tracebacks = 0;
  std::optional<OtherCudaError> first_other_cuda_error;
  uint64_t other_cuda_errors = 0;  // lines naming a CUDA error outside a traceback (NCCL watchdog, c10 what())
  uint64_t watchdog_timeouts = 0;
  std::map<int, RankCounts> ranks;  // kNoRank: lines without a rank prefix
  bool ranks_capped = false;
  bool any_rank = false;  // some line carried a rank prefix

  bool found() const { return assertion_lines > 0 || cuda_tracebacks > 0 || other_cuda_errors > 0; }
};

class Scanner {
 public:
  static constexpr size_t kMaxGroups = 256;
  static constexpr size_t kMaxDistinct = 65536;
  static constexpr size_t kMaxRanks = 4096;
  static constexpr int kMaxMessageLines = 12;

  // Logs are read one after the other; lines go to the log begun last.
  void begin_log(std::string name);
  // A line of the log; part_of_last: another line of the same record (a JSON record's message), at its position.
  void line(std::string_view raw, bool cut, bool part_of_last = false);
  void end_log(bool unterminated);
  // In a notebook: the lines fed from now on are in this cell's outputs (0: not a notebook's).
  void set_cell(uint32_t cell) {
    position_.cell = cell;
    if (cell != 0 && !findings_.logs.empty()) findings_.logs.back().notebook = true;
  }
  const Findings& findings() const { return findings_; }

 private:
  // A traceback being read, one per rank: ranks' lines interleave.
  struct Pending {
    bool in_message = false;  // past the frames, reading the exception's message
    int message_lines = 0;
    size_t indent = 0;        // the header's: a log pasted indented (a markdown block) is read as if it were not
    CudaTraceback tb;
  };

  // A record wrapped onto the next lines, waiting for the rest of it.
  struct Wrapped {
    std::string text;
    int rank = kNoRank;
    Position at;
    size_t width = 0;  // of its first line as the terminal had it: where a terminal wraps
    int pieces = 1;
  };
  // A line before, kept (when short) in case a later one is the rest of a record it began.
  struct Previous {
    std::string text;
    int rank = kNoRank;
    Position at;
    size_t width = 0;
    bool usable = false;
  };

  void count_line(bool cut, bool part_of_last);  // position_ moved on, the log's counts with it
  PrefixedLine as_printed(std::string_view raw);  // without colour codes, a page's markup, and the prefixes
  bool on_assertion_pieces(const PrefixedLine& l, size_t width);  // false: no piece holds the driver's records
  void remember(const PrefixedLine& l, size_t width);  // into previous_
  size_t parse_records(std::string_view text);  // into records_: how many
  bool take_assertions(std::string_view text, int rank, const Position& at, int pieces);  // false: none there
  void take_records(size_t n, int rank, const Position& at, int pieces);  // counts and groups records_[0, n)
  bool on_assertion_text(std::string_view text, int rank, size_t width);  // false: not the driver's
  bool extend_wrapped(std::string_view text, int rank, size_t width);
  std::optional<Wrapped> record_begun_before(std::string_view text, int rank) const;
  bool take_or_wait(Wrapped record);
  void flush_wrapped();
  bool on_traceback_line(std::string_view text, int rank);
  void begin_traceback(int rank, size_t indent);
  bool on_frames_line(Pending& p, std::string_view text);
  bool on_exception_message(Pending& p, std::string_view text, int rank);
  void on_other_line(std::string_view text, int rank);
  void finish(int rank);
  RankCounts* counts(int rank);
  AssertGroup* group_for(std::string_view file, uint32_t line, std::string_view function, std::string_view condition);

  Findings findings_;
  std::map<std::tuple<std::string, uint32_t, std::string, std::string>, size_t> group_index_;
  std::map<int, Pending> pending_;
  std::string scratch_;
  std::string unescaped_;  // a line with its HTML references undone
  std::string unmarked_;   // and its markdown emphasis
  Position position_;
  std::optional<Wrapped> wrapped_;
  Previous previous_[2];  // the line before, then the one before it
  std::vector<DeviceMessage> records_ = std::vector<DeviceMessage>(32);  // a line's records (a line holds a few)
};

}  // namespace firstassert::cli::triage
