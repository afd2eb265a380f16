// One-line messages on stderr, each "firstassert: ...\n" written with a single write(2): no stdio, so that a
// message never interleaves with the program's own buffered output mid-line and never allocates.
#pragma once

namespace firstassert {

enum class LogLevel { quiet, info, debug };

void set_log_level(LogLevel level);
LogLevel log_level();

// Always printed: what the user must know (a failure of ours, the first-error summary).
[[gnu::format(printf, 1, 2)]] void say(const char* format, ...);
// Printed at FIRSTASSERT_LOG=info or debug.
[[gnu::format(printf, 1, 2)]] void info(const char* format, ...);
[[gnu::format(printf, 1, 2)]] void debug(const char* format, ...);

}  // namespace firstassert
