// Process-wide driver state: initialization, the (single) device's primary context, the calling thread's current
// context, and the allocations that device code may touch.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace simcuda {

bool driver_initialized();
// cuInit's work: mark the driver initialized, then load the CUDA_INJECTION64_PATH library once.
CUresult initialize_driver();

CUcontext primary_context();       // created (and announced to tools) on first retain
CUcontext retain_primary_context();
// The calling thread's context stack: cuCtxSetCurrent replaces the top (nullptr pops it), push and pop as named.
CUcontext current_context();
void set_current_context(CUcontext context);
void push_context(CUcontext context);
CUcontext pop_context();  // nullptr when the stack is empty
bool is_context(CUcontext context);

enum class Memory { Device, Host };
void* allocate(size_t bytes, Memory kind);
bool release(void* pointer, Memory kind);
// True when [pointer, pointer + bytes) lies inside one live allocation (device memory or mapped host memory).
bool device_accessible(const void* pointer, size_t bytes);
bool is_host_allocation(const void* pointer);

// "simcuda: <what> is not supported by the simulator" on stderr, once per distinct what.
void say_unsupported_once(const char* what);

}  // namespace simcuda
