/* Preloaded by startup_bench.py beside the shim: a library with nothing in it, so that the figures show what any
   LD_PRELOAD costs (opening, mapping and relocating one more object) apart from what firstassert adds to that. */
int firstassert_bench_empty_preload(void) { return 0; }
