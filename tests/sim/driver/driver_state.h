// Process-wide driver state: initialization, the (single) device's primary context, the calling thread's current
// context, and the allocations that device code may touch.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

#include "../common/say_unsupported.h"

namespace simcuda {

bool driver_initialized();
// cuInit's work: mark the driver initialized, then load the CUDA_INJECTION64_PATH library once.
CUresult initialize_driver();

CUcontext primary_context();       // created (and announced to tools) on first retain
CUcontext retain_primary_context();
bool primary_context_retained();
// The calling thread's context stack: cuCtxSetCurrent replaces the top (nullptr pops it), push and pop as named.
CUcontext current_context();
void set_current_context(CUcontext context);
void push_context(CUcontext context);
CUcontext pop_context();  // nullptr when the stack is empty
bool is_context(CUcontext context);

// Host: allocated by cuMemHostAlloc; Registered: the caller's memory, page-locked by cuMemHostRegister (never
// freed here).
enum class Memory { Device, Host, Registered };
void* allocate(size_t bytes, Memory kind);
bool release(void* pointer, Memory kind);
// True when [pointer, pointer + bytes) lies inside one live allocation (device memory or mapped host memory).
bool device_accessible(const void* pointer, size_t bytes);
bool is_host_allocation(const void* pointer);
// cuMemHostRegister/Unregister: the caller's range becomes (stops being) device accessible.
bool register_host_range(void* pointer, size_t bytes);
bool unregister_host_range(void* pointer);

struct AllocationInfo {
  void* begin;
  size_t bytes;
  Memory kind;
};
// The live allocation or registered range holding pointer, as cuPointerGetAttribute describes it.
std::optional<AllocationInfo> allocation_of(const void* pointer);
// Bytes of device memory allocated now (cuMemGetInfo).
size_t device_bytes_in_use();


}  // namespace simcuda
