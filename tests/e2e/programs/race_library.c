/* What dlopen_race loads and unloads: a library with nothing in it, so each cycle is the loader's work alone. */
int firstassert_race_library(void) { return 0; }
