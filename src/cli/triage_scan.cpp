#include "triage_scan.h"

#include <algorithm>

#include "core/cuda_errors.h"
#include "core/device_assert_line.h"
#include "triage_prefixes.h"
#include "triage_text.h"

namespace firstassert::cli::triage {
namespace {

constexpr std::string_view kTracebackHeader = "Traceback (most recent call last):";
constexpr std::string_view kWatchdogTimeout = "Watchdog caught collective operation timeout";
// How a CUDA error is named: PyTorch's c10 message ("CUDA error: device-side assert triggered") and NCCL's warning
// ("Cuda failure 'device-side assert triggered'").
// ROCm's PyTorch says "HIP error: " where CUDA's says "CUDA error: "; ROCm's runtime aborts a queue whose kernel
// trapped (a failed assert among other faults) with HSA_STATUS_ERROR_EXCEPTION (rocclr's rocdevice.cpp).
constexpr std::string_view kCudaErrorMarkers[] = {"CUDA error: ", "Cuda failure '", "HIP error: ",
                                                  "HSA_STATUS_ERROR_EXCEPTION"};
// Lines kept for the summary are cut here: enough for any real exception line, and memory stays small.
constexpr size_t kMaxKeptBytes = 4096;

size_t find_cuda_error_marker(std::string_view text) {
  size_t best = std::string_view::npos;
  for (std::string_view marker : kCudaErrorMarkers) best = std::min(best, text.find(marker));
  return best;
}

bool names_cuda_error(std::string_view text) { return find_cuda_error_marker(text) != std::string_view::npos; }

// Python prints an exception line at column 0; frames, source lines and carets are indented.
bool is_traceback_body(std::string_view text) {
  return text.starts_with(' ') || text.starts_with('\t') || text.starts_with("[Previous line repeated");
}

}  // namespace

int cuda_error_code(std::string_view text) {
  size_t marker = find_cuda_error_marker(text);
  if (marker == std::string_view::npos) return 0;
  std::string_view rest = text.substr(text.find_first_of(":'", marker) + 1);
  rest = trim_left(rest);
  // The codes a message of this kind names, the sticky ones first; descriptions come from the shared table.
  for (int code : {710, 700, 702, 714, 715, 716, 717, 718, 719, 226, 721, 701, 9, 98, 2, 1, 3, 100, 201, 400, 999}) {
    const char* description = error_description(code);
    if (description != nullptr && rest.starts_with(description)) return code;
  }
  return 0;
}

void Scanner::begin_log(std::string name) {
  findings_.logs.push_back(LogInfo{std::move(name)});
  position_ = Position{findings_.logs.size() - 1, 0};
  pending_.clear();
  wrapped_.reset();  // the previous log's (its end_log has flushed it)
  previous_[0].usable = previous_[1].usable = false;
}

void Scanner::end_log(bool unterminated) {
  flush_wrapped();
  while (!pending_.empty()) finish(pending_.begin()->first);
  if (!findings_.logs.empty()) findings_.logs.back().unterminated = unterminated;
}

// The steps a line goes through (count_line, as_printed, on_assertion_pieces, remember, extend_wrapped) are defined
// inline: they run for every line of a log that may hold gigabytes, and inlined they cost what one function would.
void Scanner::line(std::string_view raw, bool cut, bool part_of_last) {
  count_line(cut, part_of_last);
  PrefixedLine l = as_printed(raw);
  if (l.rank != kNoRank) {
    findings_.any_rank = true;
    counts(l.rank);  // listed even if it printed nothing of note: a quiet rank is information too
  }
  // The driver prints its lines between a program's lines, never inside a traceback.
  if (on_assertion_pieces(l, raw.size())) {
    previous_[0].usable = previous_[1].usable = false;
    return;
  }
  remember(l, raw.size());
  if (!on_traceback_line(l.text, l.rank)) on_other_line(l.text, l.rank);
}

inline void Scanner::count_line(bool cut, bool part_of_last) {
  if (part_of_last && position_.line != 0) return;
  LogInfo& log = findings_.logs.back();
  ++position_.line;
  log.lines = position_.line;
  if (cut) ++log.cut_lines;
}

inline PrefixedLine Scanner::as_printed(std::string_view raw) {
  bool unescaped = false, unmarked = false;
  PrefixedLine l = strip_prefixes(
      strip_emphasis(unescape_html(strip_ansi(raw, scratch_), unescaped_, unescaped), unmarked_, unmarked));
  if (unescaped) ++findings_.html_unescaped_lines;
  if (unmarked) ++findings_.emphasis_lines;
  return l;
}

// Another process's line may have been spliced into this one, with its own launcher prefix: each piece is read with
// its own rank.
inline bool Scanner::on_assertion_pieces(const PrefixedLine& l, size_t width) {
  if (inline_rank_prefix(l.full) == std::string_view::npos) return on_assertion_text(l.full, l.rank, width);
  bool any = false;
  std::string_view rest = l.full;
  int rank = l.rank;
  while (true) {
    size_t at = inline_rank_prefix(rest);
    any |= on_assertion_text(rest.substr(0, at), rank, width);
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at);
    strip_torchrun_prefix(rest, rank);
    if (rank != kNoRank) counts(rank);
  }
  return any;
}

// The two lines before, newest first: this one replaces the older.
inline void Scanner::remember(const PrefixedLine& l, size_t width) {
  std::swap(previous_[0], previous_[1]);
  Previous& last = previous_[0];
  last.usable = l.full.size() <= kMaxKeptBytes;
  if (last.usable) {
    last.text.assign(l.full);
    last.rank = l.rank;
    last.at = position_;
    last.width = width;
  }
}

namespace {

// The widths terminals wrap at: a wrapped piece of one of these lengths was cut mid-word, with nothing lost; any
// other break (a web page's reflow, an editor's) replaced a blank.
bool terminal_width(size_t width) {
  for (size_t w : {80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256}) {
    if (width == w) return true;
  }
  return false;
}

std::string joined(std::string_view first, size_t first_width, std::string_view rest) {
  std::string out(first);
  if (!first.ends_with(' ') && !rest.starts_with(' ') && !terminal_width(first_width)) out += ' ';
  out += rest;
  return out;
}

// The rest of a record wrapped onto this line: text that finishes what the record lacks ("Assertion `" after a
// signature cut short, "` failed" after a condition), before any record of its own. A line without either is not
// taken: a record left incomplete by a cut log must not swallow the lines after it.
bool continues_record(std::string_view pending, std::string_view text) {
  size_t own = find_device_assert_signature(text);
  size_t last_signature = find_last_device_assert_signature(pending);
  bool needs_assertion = pending.find("Assertion `", last_signature == std::string_view::npos ? 0 : last_signature) ==
                         std::string_view::npos;
  size_t wanted = text.find(needs_assertion ? "Assertion `" : "` failed");
  return wanted != std::string_view::npos && (own == std::string_view::npos || wanted < own);
}

}  // namespace

void Scanner::flush_wrapped() {
  if (!wrapped_) return;
  Wrapped w = std::move(*wrapped_);
  wrapped_.reset();
  take_assertions(w.text, w.rank, w.at, w.pieces);
}

// A record may be wrapped onto up to three lines (a terminal, a web page): its start waits for its rest, and a line
// that only continues a record finds its start on the line before.
bool Scanner::on_assertion_text(std::string_view text, int rank, size_t width) {
  if (extend_wrapped(text, rank, width)) return true;
  bool has_record = text.find("ssertion") != std::string_view::npos ||
                    find_device_assert_signature(text) != std::string_view::npos;
  if (!has_record) return false;
  size_t n = parse_records(text);
  // No record starts here, or the first lacks its location: the line may finish a record begun before.
  if (n == 0 || records_[0].has(kMessageNoLocation)) {
    if (std::optional<Wrapped> record = record_begun_before(text, rank)) return take_or_wait(std::move(*record));
  }
  if (text.size() <= kMaxKeptBytes && device_assert_incomplete(text)) {
    wrapped_ = Wrapped{std::string(text), rank, position_, width, 1};
    return true;
  }
  if (n == 0) return false;
  take_records(n, rank, position_, 1);
  return true;
}

// Text added to the record waiting in wrapped_, when it continues it (true); the record is taken once whole, or at its
// last piece. Otherwise the waiting record is taken as it is, and text is left to be read on its own (false).
inline bool Scanner::extend_wrapped(std::string_view text, int rank, size_t width) {
  constexpr int kMaxPieces = 3;
  if (!wrapped_) return false;
  if (wrapped_->rank == rank && continues_record(wrapped_->text, text) &&
      wrapped_->text.size() + text.size() <= 2 * kMaxKeptBytes) {
    wrapped_->text = joined(wrapped_->text, wrapped_->width, text);
    wrapped_->width = width;
    if (++wrapped_->pieces >= kMaxPieces || !device_assert_incomplete(wrapped_->text)) flush_wrapped();
    return true;
  }
  flush_wrapped();
  return false;
}

// The record text finishes, begun on the line or two before it (a long signature wrapped by a terminal), joined
// again; nullopt when neither line (of the same rank) holds its start.
std::optional<Scanner::Wrapped> Scanner::record_begun_before(std::string_view text, int rank) const {
  for (int back = 1; back <= 2; ++back) {
    const Previous& start = previous_[back - 1];
    if (!start.usable || start.rank != rank) break;
    std::string whole = start.text;
    size_t width = start.width;
    for (int i = back - 1; i > 0; --i) {
      whole = joined(whole, width, previous_[i - 1].text);
      width = previous_[i - 1].width;
    }
    if (!ends_like_device_assert_head(whole)) continue;
    whole = joined(whole, width, text);
    DeviceMessage rejoined;
    if (parse_device_asserts(whole, &rejoined, 1) == 0 || rejoined.has(kMessageNoLocation)) continue;
    return Wrapped{std::move(whole), rank, start.at, width, back + 1};
  }
  return std::nullopt;
}

// A record joined again: taken when whole, else kept in wrapped_ to wait for its rest.
bool Scanner::take_or_wait(Wrapped record) {
  if (device_assert_incomplete(record.text)) {
    wrapped_ = std::move(record);
    return true;
  }
  return take_assertions(record.text, record.rank, record.at, record.pieces);
}

size_t Scanner::parse_records(std::string_view text) {
  return std::min(parse_device_asserts(text, records_.data(), records_.size()), records_.size());
}

bool Scanner::take_assertions(std::string_view text, int rank, const Position& at, int pieces) {
  size_t n = parse_records(text);
  if (n == 0) return false;
  take_records(n, rank, at, pieces);
  return true;
}

void Scanner::take_records(size_t n, int rank, const Position& at, int pieces) {
  if (pieces > 1) findings_.reassembled_lines += n;
  for (size_t i = 0; i < n; ++i) {
    const DeviceMessage& m = records_[i];
    std::string_view file = m.file;
    ++findings_.assertion_lines;
    if (m.has(kMessageGarbled)) ++findings_.garbled_lines;
    if (m.has(kMessageConditionCut)) ++findings_.cut_conditions;
    if (m.has(kMessageUnquoted)) ++findings_.unquoted_conditions;
    if (RankCounts* c = counts(rank)) ++c->assertion_lines;
    AssertGroup* g = group_for(file, m.line, m.function, m.condition);
    if (g == nullptr) {
      ++findings_.ungrouped_assertion_lines;
      continue;
    }
    Triple block{m.block[0], m.block[1], m.block[2]}, thread{m.thread[0], m.thread[1], m.thread[2]};
    if (g->lines++ == 0) {
      g->first = at;
      g->first_rank = rank;
      g->first_block = block;
      g->first_thread = thread;
      g->dialect = m.dialect;
    }
    g->flags |= m.flags;
    if (m.has(kMessageGarbled)) ++g->garbled_lines;
    if (pieces > 1) ++g->reassembled_lines;
    // Bounded: a kernel over millions of threads may print a line for each.
    auto note = [](std::set<Triple>& set, bool& capped, const Triple& value) {
      if (set.size() < kMaxDistinct)
        set.insert(value);
      else if (!set.contains(value))
        capped = true;
    };
    note(g->blocks, g->blocks_capped, block);
    note(g->threads, g->threads_capped, thread);
  }
}

AssertGroup* Scanner::group_for(std::string_view file, uint32_t line, std::string_view function,
                                std::string_view condition) {
  auto key = std::make_tuple(std::string(file), line, std::string(function), std::string(condition));
  if (auto it = group_index_.find(key); it != group_index_.end()) return &findings_.groups[it->second];
  if (findings_.groups.size() >= kMaxGroups) return nullptr;
  group_index_.emplace(key, findings_.groups.size());
  AssertGroup& g = findings_.groups.emplace_back();
  std::tie(g.file, g.line, g.function, g.condition) = key;
  return &g;
}

// A traceback is followed per rank: from its header through its frames (the last one kept) to the exception line
// and a few message lines after it, where PyTorch and NCCL name the CUDA error. True when the line belonged to one.
bool Scanner::on_traceback_line(std::string_view text, int rank) {
  std::string_view trimmed = trim_left(text);
  size_t leading = text.size() - trimmed.size();
  if (trimmed.starts_with(kTracebackHeader)) {
    begin_traceback(rank, leading);
    return true;
  }
  auto it = pending_.find(rank);
  if (it == pending_.end()) return false;
  Pending& p = it->second;
  if (p.indent > 0 && !trimmed.empty()) text.remove_prefix(std::min(leading, p.indent));
  if (p.in_message) return on_exception_message(p, text, rank);
  if (!on_frames_line(p, text)) pending_.erase(it);  // no exception line: not a traceback Python printed whole
  return true;
}

void Scanner::begin_traceback(int rank, size_t indent) {
  finish(rank);  // a chained exception ("During handling of the above exception...") starts a new one
  Pending& p = pending_[rank];
  p.tb.rank = rank;
  p.indent = indent;
}

// A line after the header: a frame (the last one is kept), its source line or caret, or the exception line, which
// ends the frames. False for a blank line, which Python never prints there.
bool Scanner::on_frames_line(Pending& p, std::string_view text) {
  std::string_view body = trim_left(text);
  if (body.starts_with("File ") || body.starts_with("Cell In[")) {  // Python's, IPython's
    p.tb.last_frame = body.substr(0, kMaxKeptBytes);
  } else if (text.empty()) {
    return false;
  } else if (!is_traceback_body(text)) {
    p.in_message = true;
    p.tb.at = position_;
    p.tb.exception = text.substr(0, kMaxKeptBytes);
    p.tb.code = cuda_error_code(text);
  }
  return true;
}

// A line after the exception line. The message ends at a blank line, at a logger's next record, or after a few lines;
// the traceback is finished then, and the line is not its (false).
bool Scanner::on_exception_message(Pending& p, std::string_view text, int rank) {
  if (trim_left(text).empty() || text.starts_with('[') || p.message_lines >= kMaxMessageLines) {
    finish(rank);
    return false;
  }
  ++p.message_lines;
  if (p.tb.cuda_error.empty() && !names_cuda_error(p.tb.exception) && names_cuda_error(text)) {
    p.tb.cuda_error = text.substr(0, kMaxKeptBytes);
    p.tb.code = cuda_error_code(text);
  }
  return true;
}

// Only tracebacks that name a CUDA error count; the earliest exception line is the first, the others secondary.
void Scanner::finish(int rank) {
  auto it = pending_.find(rank);
  if (it == pending_.end()) return;
  CudaTraceback tb = std::move(it->second.tb);
  bool complete = it->second.in_message;
  pending_.erase(it);
  if (!complete || (!names_cuda_error(tb.exception) && tb.cuda_error.empty())) return;
  ++findings_.cuda_tracebacks;
  if (RankCounts* c = counts(rank)) ++c->cuda_tracebacks;
  if (!findings_.first_traceback || tb.at < findings_.first_traceback->at) findings_.first_traceback = std::move(tb);
}

void Scanner::on_other_line(std::string_view text, int rank) {
  if (names_cuda_error(text)) {
    ++findings_.other_cuda_errors;
    if (RankCounts* c = counts(rank)) ++c->other_cuda_errors;
    if (!findings_.first_other_cuda_error)
      findings_.first_other_cuda_error = OtherCudaError{position_, rank, std::string(text.substr(0, kMaxKeptBytes))};
  }
  if (text.find(kWatchdogTimeout) != std::string_view::npos) {
    ++findings_.watchdog_timeouts;
    if (RankCounts* c = counts(rank)) ++c->watchdog_timeouts;
  }
}

// The rank's counters; nullptr past kMaxRanks distinct ranks (a log full of numbered lines is not that many ranks).
RankCounts* Scanner::counts(int rank) {
  if (auto it = findings_.ranks.find(rank); it != findings_.ranks.end()) return &it->second;
  if (findings_.ranks.size() >= kMaxRanks) {
    findings_.ranks_capped = true;
    return nullptr;
  }
  return &findings_.ranks[rank];
}

}  // namespace firstassert::cli::triage
