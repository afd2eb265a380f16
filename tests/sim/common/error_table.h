// The CUDA error codes the simulator produces, with the names and descriptions the driver (cuGetErrorName/String)
// and the runtime (cudaGetErrorName/String) give them. One table serves both libraries.
#pragma once

// X(code, driver name, runtime name, description); the driver name is empty where the code is runtime-only.
#define SIMCUDA_ERROR_TABLE(X)                                                                                        \
  X(0, "CUDA_SUCCESS", "cudaSuccess", "no error")                                                                       \
  X(1, "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue", "invalid argument")                                         \
  X(2, "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "out of memory")                                        \
  X(3, "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError", "initialization error")                           \
  X(4, "CUDA_ERROR_DEINITIALIZED", "cudaErrorCudartUnloading", "driver shutting down")                                  \
  X(9, "", "cudaErrorInvalidConfiguration", "invalid configuration argument")                  \
  X(35, "", "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version") \
  X(98, "", "cudaErrorInvalidDeviceFunction", "invalid device function")                                           \
  X(100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "no CUDA-capable device is detected")                             \
  X(101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", "invalid device ordinal")                               \
  X(201, "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized", "invalid device context")                        \
  X(226, "CUDA_ERROR_CONTAINED", "cudaErrorContained", "device-side error contained")                                   \
  X(400, "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle", "invalid resource handle")                      \
  X(401, "CUDA_ERROR_ILLEGAL_STATE", "cudaErrorIllegalState", "the operation cannot be performed in the present state") \
  X(500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "named symbol not found")                                   \
  X(600, "CUDA_ERROR_NOT_READY", "cudaErrorNotReady", "device not ready")                                               \
  X(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress", "an illegal memory access was encountered")           \
  X(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorLaunchOutOfResources", "too many resources requested for launch") \
  X(702, "CUDA_ERROR_LAUNCH_TIMEOUT", "cudaErrorLaunchTimeout", "the launch timed out and was terminated")              \
  X(710, "CUDA_ERROR_ASSERT", "cudaErrorAssert", "device-side assert triggered")                                        \
  X(714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "cudaErrorHardwareStackError", "hardware stack error")                      \
  X(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "cudaErrorIllegalInstruction", "an illegal instruction was encountered")     \
  X(716, "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorMisalignedAddress", "misaligned address")                           \
  X(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "cudaErrorInvalidAddressSpace", "operation not supported on global/shared address space") \
  X(718, "CUDA_ERROR_INVALID_PC", "cudaErrorInvalidPc", "invalid program counter")                                      \
  X(719, "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure", "unspecified launch failure")                            \
  X(720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch") \
  X(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "cudaErrorTensorMemoryLeak", "tensor memory not completely freed")             \
  X(801, "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", "operation not supported")                                \
  X(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing") \
  X(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture") \
  X(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "cudaErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
  X(999, "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", "unknown error")

namespace simcuda {

// Errors after which the context is unusable: every later call returns them (see design.md).
constexpr bool is_sticky_error(int code) {
  switch (code) {
    case 700: case 702: case 710: case 714: case 715: case 716: case 717: case 718: case 719: case 226: case 721:
      return true;
    default:
      return false;
  }
}

}  // namespace simcuda
