// Brings firstassert up once per process, whichever way it was reached (LD_PRELOAD + CUDA_INJECTION64_PATH,
// CUDA_INJECTION64_PATH alone, or firstassert_enable()), and owns what lives for the rest of the process.
#pragma once

#include <cstdint>
#include <string>

namespace firstassert {

enum class ActivatedBy { injection, enable_call };

// True when launches are being recorded. Safe to call from any thread, any number of times; after disable() it starts
// recording again.
bool activate(ActivatedBy by);
// Stops recording and gives back what it holds: CUPTI (another tool may subscribe), the stderr pipe's fd 2. What was
// found stays, and is still reported. False when nothing was recording.
bool disable();
// Empty while no report has been written.
std::string report_path();
// Rewrites the report with what is known now (secondary errors so far, device lines the stderr pipe still held),
// when one has been written. False when there is none.
bool refresh_report();
// The process is about to end (a notebook kernel asked to shut down, which its front end may kill before it exits):
// the report is rewritten as at exit, final, now, without a word on stderr; the exit handler rewrites it again if it
// runs, and says what it says. False when there is nothing to report.
bool finish_report();
// How many launches have been recorded so far (the next launch's seq), or kNotRecording. The job's side brackets a
// call with it to know which launches the call made (the launches of its thread numbered in between).
inline constexpr uint64_t kNotRecording = UINT64_MAX;
uint64_t launch_count();
// What the job's side found in the values launch `seq` was given (a JSON object), for the report to carry as that
// launch's `values`; the report is not rewritten here (refresh_report). False when it cannot be kept.
bool set_launch_values(uint64_t seq, std::string json_object);
// Where reports go from now on: dir, or, once a report has been written, the directory it was written in (returned).
std::string set_report_dir(const std::string& dir);
// Starts (when recording, not preloaded, and FIRSTASSERT_STDERR_PIPE allows it) or stops the stderr pipe
// (stderr_pipe.h); true when it runs afterwards.
bool stderr_pipe(bool on);

}  // namespace firstassert
