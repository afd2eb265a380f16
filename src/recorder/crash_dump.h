// The last word of a process that dies of a signal before any CUDA error was recorded: the recent launches, written
// from the signal handler itself (async-signal-safe: a static buffer, write(2), no allocation, no lock), then the
// program's own handler (or the default action) runs as if firstassert were not there.
#pragma once

#include <atomic>
#include <string>

#include "core/tracker.h"

namespace firstassert {

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT and SIGTERM (not for a signal the program
// ignores). path: the dump's file, decided now because nothing may be computed in the handler. No dump is written
// once report_written is set (a report, of a sticky error or a refused launch, already says what there is to say).
void install_crash_dump(const Tracker& tracker, const std::atomic<bool>& report_written, const std::string& path,
                        int pid, const std::string& host);
// The dump's file from now on (the report directory was changed). Not for two threads at once.
void move_crash_dump(const std::string& path);

}  // namespace firstassert
