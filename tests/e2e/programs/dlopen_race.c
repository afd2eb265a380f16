/* One thread loads and unloads a library over and over while another calls a CUDA entry point that no loaded library
   defines, so the preloaded shim's hook looks for it among the loaded objects on every call it cannot rule out. Had
   that search opened objects from inside dl_iterate_phdr, the two threads would take the loader's two locks in
   opposite orders and stop for good. Prints "progress: yes" when both threads still advanced in the last two
   seconds, and how far each went.

   usage: dlopen_race LIBRARY SECONDS */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int (*missing_entry_point)(void);
static atomic_long loads, calls;

static void* load_and_unload(void* library) {
  for (;;) {
    void* handle = dlopen((const char*)library, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) dlclose(handle);
    atomic_fetch_add(&loads, 1);
  }
  return NULL;
}

static void* call_cuda(void* unused) {
  (void)unused;
  for (;;) {
    missing_entry_point();
    atomic_fetch_add(&calls, 1);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  /* The shim's hook, found as any program finds a CUDA entry point at run time. */
  *(void**)&missing_entry_point = dlsym(RTLD_DEFAULT, "cudaGetLastError"); /* as POSIX suggests for functions */
  if (missing_entry_point == NULL) {
    puts("no cudaGetLastError: the shim is not preloaded");
    return 2;
  }
  pthread_t loader, caller;
  pthread_create(&loader, NULL, load_and_unload, argv[1]);
  pthread_create(&caller, NULL, call_cuda, NULL);
  sleep((unsigned)atoi(argv[2]));
  long loads_before = atomic_load(&loads), calls_before = atomic_load(&calls);
  sleep(2);
  long loads_after = atomic_load(&loads), calls_after = atomic_load(&calls);
  printf("progress: %s\nloads: %ld -> %ld\ncalls: %ld -> %ld\n",
         loads_after > loads_before && calls_after > calls_before ? "yes" : "no", loads_before, loads_after,
         calls_before, calls_after);
  fflush(stdout);
  _exit(0); /* a deadlocked thread would hold the loader's lock, which exit() needs */
}
