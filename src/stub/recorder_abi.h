// The seam between the shim's two halves.
//
// libfirstassert.so, the library users preload, is small and links nothing but libc: every process under
// LD_PRELOAD pays for loading it, and most (shells, compilers, the data loader's helpers) never touch CUDA. It holds
// only what must sit in the preloaded object: the constructor that points CUDA_INJECTION64_PATH at it, the CUDA
// entry points and dlsym of the interposition fallback, CUPTI's subscription calls (so that a tool subscribing later
// is handed CUPTI), and the libc writers the device messages are read from.
// The recorder itself (C++, libstdc++, libunwind, Boost.Stacktrace, CUPTI) is libfirstassert_recorder.so, loaded from
// the same directory when CUDA initializes (InitializeInjection) or firstassert_enable() is called. Until then the
// hooks only pass calls through.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

// What the preloaded half tells the recorder when it loads it.
struct FirstassertStub {
  uint32_t abi;    // kFirstassertAbi of the stub that loaded the recorder
  int preloaded;   // the stub was preloaded: its definitions interpose and the hooks see the program's calls
  // The real definition of a CUDA entry point, as the stub's hooks call it (RTLD_NEXT from the preloaded object,
  // else any loaded object, even one loaded RTLD_LOCAL); nullptr when no loaded library has it.
  void* (*real)(const char* name);
  // How many objects the loader has loaded: a real entry point that was missing need not be looked for again
  // until this grows.
  unsigned long long (*loaded_generation)(void);
  // Points the stub's hooks at the recorder's implementations (firstassert_recorder_hook_*), when interposition
  // starts: until then, and with CUPTI recording, they pass calls straight through. 0 when one is missing.
  int (*route_hooks)(void);
};

// The recorder's entry points, found by the stub with dlsym. Each catches everything.
int firstassert_recorder_attach(const FirstassertStub* stub);  // once, right after the recorder is loaded; 0: unusable
int firstassert_recorder_initialize_injection(void);           // the driver's InitializeInjection, forwarded
int firstassert_recorder_enable(void);                         // firstassert_enable(), forwarded
const char* firstassert_recorder_report_path(void);            // firstassert_report_path(), forwarded
void firstassert_recorder_stderr(const char* bytes, size_t size);  // what the process wrote to stderr
int firstassert_recorder_refresh_report(void);                  // firstassert_refresh_report(), forwarded
int firstassert_recorder_finish_report(void);                   // firstassert_finish_report(), forwarded
const char* firstassert_recorder_set_report_dir(const char* dir);  // firstassert_set_report_dir(), forwarded
int firstassert_recorder_stderr_pipe(int on);                   // firstassert_stderr_pipe(), forwarded
int firstassert_recorder_disable(void);                         // firstassert_disable(), forwarded
uint64_t firstassert_recorder_launch_count(void);               // firstassert_launch_count(), forwarded
int firstassert_recorder_set_launch_values(uint64_t seq, const char* json_object);  // forwarded likewise
// Another tool is about to subscribe to CUPTI (the stub's hooks of cuptiSubscribe and cuptiSubscribe_v2, preloaded
// only): the recorder hands CUPTI over if it holds it. name: the tool's subscriberName, or NULL.
void firstassert_recorder_cupti_subscribing(const char* name);

}  // extern "C"

// Raised when the structure above changes: a stub never drives a recorder built for another.
inline constexpr uint32_t kFirstassertAbi = 5;
inline constexpr const char* kRecorderLibrary = "libfirstassert_recorder.so";

// The recorder's implementation of the hook for a CUDA entry point `name`: firstassert_recorder_hook_<name>, with the
// entry point's own signature (interpose_hooks.h).
#define FIRSTASSERT_RECORDER_HOOK_NAME(name) firstassert_recorder_hook_##name
