// What launchers, log servers and loggers put before a program's own text on a log line, removed, and the rank a
// launcher's prefix names (triage_prefixes.cpp lists the producers).
#pragma once

#include <cstddef>
#include <string_view>

namespace firstassert::cli::triage {

inline constexpr int kNoRank = -1;

// A line with the prefixes a launcher or a log server put before the program's own text removed.
struct PrefixedLine {
  std::string_view text;  // as a terminal shows it: after the last carriage return
  std::string_view full;  // with what carriage returns overwrote (a device line glued between progress bar redraws)
  int rank = kNoRank;
};

// The line without its prefixes: a launcher's, which names the rank (srun --label's "3: ", mpirun --tag-output's
// "[1,3]<stderr>:", torchrun's "[rank3]:" or "[default3]:"; srun's and torchrun's may stack, and torchrun's rank
// wins), and those that are not ranks (a Jupyter server's record prefix, a tab-separated "<time>\t<LEVEL>\t", Ray's
// worker prefix, a time stamp, a logger's level, a markdown quote's "> "); trailing carriage returns, and what a
// carriage return inside the line overwrote on a terminal (progress bars).
PrefixedLine strip_prefixes(std::string_view line);

// torchrun's "[rank3]:" or "[default3]:" at the start of s, and the blank after it, removed; its number in rank.
// False, s and rank untouched, when s does not start with one.
bool strip_torchrun_prefix(std::string_view& s, int& rank);

// Where a torchrun prefix ("[rank3]:", "[default3]:") starts inside the text, after its first byte: another
// process's output spliced into this line; npos when there is none.
size_t inline_rank_prefix(std::string_view s);

}  // namespace firstassert::cli::triage
