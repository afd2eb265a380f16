/* firstassert: names the first CUDA kernel whose device-side assert fired.
 *
 * Usually nothing here is called: the shim activates itself when preloaded (LD_PRELOAD=libfirstassert.so) or
 * loaded by the driver (CUDA_INJECTION64_PATH=libfirstassert.so). A process that is already running, such as a
 * notebook, can dlopen the library and call firstassert_enable(), before or after CUDA was initialized. */
#ifndef FIRSTASSERT_FIRSTASSERT_H
#define FIRSTASSERT_FIRSTASSERT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Starts recording (once; later calls only report). Returns 1 when launches are being recorded, 0 when recording
 * is off, in which case one line on stderr has said why. Never fails the program. */
int firstassert_enable(void);

/* The path of the report written for the first sticky CUDA error, or NULL while there is none. */
const char* firstassert_report_path(void);

#ifdef __cplusplus
}
#endif

#endif
