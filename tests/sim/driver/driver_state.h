// Process-wide driver state: initialization, the devices CUDA_VISIBLE_DEVICES leaves visible (device_table.h),
// each device's primary context, the calling thread's current context, and the allocations that device code may
// touch.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "../common/say_unsupported.h"

namespace simcuda {

bool driver_initialized();
// cuInit's work: apply CUDA_VISIBLE_DEVICES (CUDA_ERROR_NO_DEVICE when it leaves none), mark the driver
// initialized, then load the CUDA_INJECTION64_PATH library once.
CUresult initialize_driver();

// Each visible device (its ordinal, 0 .. visible_device_count() - 1) has one primary context, created (and
// announced to tools) on first retain.
CUcontext primary_context(int device);
CUcontext retain_primary_context(int device);
bool primary_context_retained(int device);
// The device ordinal a context belongs to, or -1 for a handle that names no context.
int context_device(CUcontext context);
// The context's id as CUPTI gives it (contextUid, cuptiGetContextId): 1 for device 0's primary context, in the
// order of ordinals; 0 for none.
uint32_t context_uid(CUcontext context);
// The calling thread's context stack: cuCtxSetCurrent replaces the top (nullptr pops it), push and pop as named.
CUcontext current_context();
void set_current_context(CUcontext context);
void push_context(CUcontext context);
CUcontext pop_context();  // nullptr when the stack is empty
bool is_context(CUcontext context);
// The device of the calling thread's current context, or -1 when none is current.
int current_device();

// Host: allocated by cuMemHostAlloc; Registered: the caller's memory, page-locked by cuMemHostRegister (never
// freed here).
enum class Memory { Device, Host, Registered };
// device: the ordinal of the context that allocates it (device memory lives on that device; host memory is
// mapped into every device's address space under unified addressing).
void* allocate(size_t bytes, Memory kind, int device);
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
  int device;  // the ordinal it was allocated in
};
// The live allocation or registered range holding pointer, as cuPointerGetAttribute describes it.
std::optional<AllocationInfo> allocation_of(const void* pointer);
// Bytes of device memory allocated now on that device (cuMemGetInfo).
size_t device_bytes_in_use(int device);

// Peer access (cuCtxEnablePeerAccess): whether from's context may reach to's memory.
enum class PeerChange { Done, AlreadyEnabled, NotEnabled };
PeerChange set_peer_access(int from, int to, bool enable);


}  // namespace simcuda
