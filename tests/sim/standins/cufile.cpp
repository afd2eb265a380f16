// The stand-in libcufile.so.0 (GPUDirect Storage, behind torch.cuda.gds). Not modelled: the simulated platform has no
// GPUDirect Storage, so every entry point torch imports reports CU_FILE_PLATFORM_NOT_SUPPORTED after saying so once.
// NVIDIA's library exports these symbols unversioned, and torch imports them so.
//
// cufile.h is not part of the CUDA toolkit headers here; signatures and codes are restated from the cuFile API
// reference (docs.nvidia.com/gpudirect-storage/api-reference-guide: CUfileOpError, CUfileError_t, cuFileRead):
// status-returning calls return a CUfileError_t {CUfileOpError err; CUresult cu_err;} by value, the data path
// calls return the negated CUfileOpError as their ssize_t.
#include <sys/types.h>

#include <atomic>
#include <cstddef>

#include "unsupported.h"

namespace {

constexpr int kPlatformNotSupported = 5007;  // CU_FILE_PLATFORM_NOT_SUPPORTED (CUFILEOP_BASE_ERR 5000 + 7)

struct CUfileError_t {
  int err;     // CUfileOpError
  int cu_err;  // CUresult: CUDA_SUCCESS, no driver call failed
};

CUfileError_t refuse(std::atomic<bool>& said, const char* function) {
  standins::say_unsupported(said, function);
  return {kPlatformNotSupported, 0};
}

}  // namespace

extern "C" {

CUfileError_t cuFileHandleRegister(void** fh, void*) {
  static std::atomic<bool> said{false};
  if (fh != nullptr) *fh = nullptr;
  return refuse(said, "cuFileHandleRegister");
}

void cuFileHandleDeregister(void*) {
  static std::atomic<bool> said{false};
  standins::say_unsupported(said, "cuFileHandleDeregister");
}

CUfileError_t cuFileBufRegister(const void*, size_t, int) {
  static std::atomic<bool> said{false};
  return refuse(said, "cuFileBufRegister");
}

CUfileError_t cuFileBufDeregister(const void*) {
  static std::atomic<bool> said{false};
  return refuse(said, "cuFileBufDeregister");
}

ssize_t cuFileRead(void*, void*, size_t, off_t, off_t) {
  static std::atomic<bool> said{false};
  standins::say_unsupported(said, "cuFileRead");
  return -kPlatformNotSupported;
}

ssize_t cuFileWrite(void*, const void*, size_t, off_t, off_t) {
  static std::atomic<bool> said{false};
  standins::say_unsupported(said, "cuFileWrite");
  return -kPlatformNotSupported;
}

}  // extern "C"
