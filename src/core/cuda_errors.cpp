#include "cuda_errors.h"

namespace firstassert {
namespace {

struct Known {
  int code;
  const char* runtime_name;
  const char* driver_name;
  const char* description;
  const char* headline;
};

// The codes a device fault or its aftermath produces, plus the common synchronous ones. Values are CUDA 13's.
constexpr Known kKnown[] = {
    {1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument", "invalid argument"},
    {2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", "out of memory"},
    {3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", "initialization error", "initialization error"},
    {9, "cudaErrorInvalidConfiguration", nullptr, "invalid configuration argument", "invalid launch configuration"},
    {98, "cudaErrorInvalidDeviceFunction", nullptr, "invalid device function", "invalid device function"},
    {100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", "no CUDA device"},
    {201, "cudaErrorDeviceUninitialized", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context", "invalid context"},
    {226, "cudaErrorContained", "CUDA_ERROR_CONTAINED", "device-side error contained", "contained device error"},
    {400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle",
     "invalid handle"},
    {500, "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found", "symbol not found"},
    {600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "device not ready", "not ready"},
    {700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered",
     "illegal memory access"},
    {701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch", "launch out of resources"},
    {702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated",
     "kernel timeout"},
    {710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered", "device-side assert"},
    {714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error",
     "hardware stack error"},
    {715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered",
     "illegal instruction"},
    {716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address", "misaligned address"},
    {717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space", "invalid address space"},
    {718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "invalid program counter", "invalid program counter"},
    {719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure",
     "unspecified launch failure"},
    {720, "cudaErrorCooperativeLaunchTooLarge", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch", "cooperative launch too large"},
    {721, "cudaErrorTensorMemoryLeak", "CUDA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory not completely freed",
     "tensor memory leak"},
    {801, "cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported", "not supported"},
    {900, "cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing", "not permitted while capturing"},
    {999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error", "unknown error"},
};

const Known* find(int code) {
  for (const Known& k : kKnown) {
    if (k.code == code) return &k;
  }
  return nullptr;
}

}  // namespace

bool is_sticky_error(int code) {
  switch (code) {
    case 700: case 702: case 710: case 714: case 715: case 716: case 717: case 718: case 719: case 226: case 721:
      return true;
    default:
      return false;
  }
}

const char* error_name(ApiDomain domain, int code) {
  const Known* k = find(code);
  if (k == nullptr) return domain == ApiDomain::runtime ? "cudaErrorUnrecognized" : "CUDA_ERROR_UNRECOGNIZED";
  if (domain == ApiDomain::driver && k->driver_name != nullptr) return k->driver_name;
  return k->runtime_name;
}

const char* error_description(int code) {
  const Known* k = find(code);
  return k != nullptr ? k->description : nullptr;
}

const char* error_headline(int code) {
  const Known* k = find(code);
  return k != nullptr ? k->headline : "CUDA error";
}

bool is_status_not_error(int code) { return code == 600; }

}  // namespace firstassert
