// The few driver entry points firstassert itself calls (to synchronize a stream, write a breadcrumb, learn a
// context's device), taken from the libcuda.so.1 the process already loaded, through cuGetProcAddress so that the
// versioned entry point (cuStreamWriteValue64 -> _v2) is the one the driver means today. Never loads the driver.
#pragma once

#include <cuda.h>

namespace firstassert {

struct DriverCalls {
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*stream_write_value64)(CUstream, CUdeviceptr, cuuint64_t, unsigned int) = nullptr;
  CUresult (*mem_host_alloc)(void**, size_t, unsigned int) = nullptr;
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr*, void*, unsigned int) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
};

// The entry points found (each may be null); nullptr while the driver is not loaded yet.
const DriverCalls* driver_calls();

}  // namespace firstassert
