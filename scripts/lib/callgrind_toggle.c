/* Switches callgrind's counting on and off from inside the measured program (scripts/lib/torch_bench.py loads it with
 * ctypes when TORCH_BENCH_TOGGLE names it), so that a run under --instr-atstart=no counts only the measured steps:
 * importing torch and the warm-up run uninstrumented, several times faster. Built by scripts/torch-bench; outside
 * valgrind the client requests do nothing. */
#include <valgrind/callgrind.h>

void torch_bench_start(void) {
  CALLGRIND_ZERO_STATS;
  CALLGRIND_START_INSTRUMENTATION;
}

void torch_bench_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
