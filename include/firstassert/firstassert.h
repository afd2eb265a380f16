/* firstassert: names the first CUDA kernel whose device-side assert fired.
 *
 * Usually nothing here is called: the shim activates itself when preloaded (LD_PRELOAD=libfirstassert.so) or
 * loaded by the driver (CUDA_INJECTION64_PATH=libfirstassert.so). A process that is already running, such as a
 * notebook, can dlopen the library and call firstassert_enable(), before or after CUDA was initialized. */
#ifndef FIRSTASSERT_FIRSTASSERT_H
#define FIRSTASSERT_FIRSTASSERT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts recording (once; later calls only report, or start again after firstassert_disable()). Returns 1 when
 * launches are being recorded, 0 when recording is off, in which case one line on stderr has said why. Never fails
 * the program. */
int firstassert_enable(void);

/* Stops recording and gives back what it holds: the CUPTI subscriber slot, so that a profiler started afterwards
 * (torch.profiler, Nsight Systems) gets it, and fd 2 (firstassert_stderr_pipe). What was found stays and is still
 * reported. It waits for the CUDA calls CUPTI is in the middle of on other threads, at most a second. Preloaded, this
 * is rarely needed: a tool that subscribes to CUPTI later is handed it, and firstassert records on through its hooks.
 * Returns 1 when it stopped a recording, 0 when none ran. */
int firstassert_disable(void);

/* The path of the report written for the first sticky CUDA error, or NULL while there is none. */
const char* firstassert_report_path(void);

/* Rewrites the report with what is known now: the secondary errors so far and the device's assertion lines still on
 * their way through the stderr pipe (see firstassert_stderr_pipe). Returns 1 when there is a report, else 0. */
int firstassert_refresh_report(void);

/* The process is about to end (a notebook kernel asked to shut down, which its front end kills if it takes long to
 * exit): the report is rewritten now as it is at exit, final. The exit handler rewrites it again if it runs. Returns
 * 1 when there is a report, else 0. */
int firstassert_finish_report(void);

/* Where reports go from now on. Returns the directory they go to: dir, or, when a report was already written
 * elsewhere, that report's directory (it is not moved). Before recording starts, FIRSTASSERT_DIR decides instead. */
const char* firstassert_set_report_dir(const char* dir);

/* Not preloaded, the shim reads the device's assertion lines through a pipe on fd 2 whose reader forwards every byte
 * to what fd 2 was (FIRSTASSERT_STDERR_PIPE). on=0 drains it and restores fd 2; on=1 starts it again where
 * FIRSTASSERT_STDERR_PIPE allows. Returns 1 when the pipe runs afterwards. */
int firstassert_stderr_pipe(int on);

/* How many kernel and graph launches have been recorded in this process so far, which is the seq the next one gets
 * (the report's "seq"); UINT64_MAX while nothing is recorded. A caller that reads it before and after a call of its
 * own knows the launches that call made: those of its thread (the report's "thread") numbered in between. */
uint64_t firstassert_launch_count(void);

/* Attaches what the caller found in the values launch `seq` was given, a JSON object, to that launch in the report
 * (its "values"), when the launch is the culprit or a candidate; written at the next report write
 * (firstassert_refresh_report). At most 64 launches are kept. Returns 1 when kept, 0 otherwise. */
int firstassert_set_launch_values(uint64_t seq, const char* json_object);

#ifdef __cplusplus
}
#endif

#endif
