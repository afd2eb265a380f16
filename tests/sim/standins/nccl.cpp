// The stand-in libnccl.so.2. NCCL is not modelled (the simulator has one device and no transport): every entry point
// PyTorch imports exists, unversioned as NVIDIA exports them. ncclGetVersion answers, ncclGetErrorString and
// ncclGetLastError describe; everything else says it is not supported, once, and returns ncclInvalidUsage, so that
// a process group over NCCL fails at its first call (ncclGetUniqueId, ncclCommInitRank...) with the reason in
// ncclGetLastError, which torch adds to its error.
//
// nccl.h is not part of the CUDA toolkit, so the codes are restated here from the NCCL API documentation
// (docs.nvidia.com/deeplearning/nccl, "Types": ncclResult_t; "Version": NCCL_VERSION_CODE).
#include <atomic>
#include <mutex>
#include <string>

#include "unsupported.h"

namespace {

enum NcclResult : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

// The NCCL this stand-in presents itself as: 2.30.7, the version the PyPI torch 2.15 wheels for CUDA 13 require
// (nvidia-nccl-cu13==2.30.7), encoded as NCCL 2.9 and later encode it: major * 10000 + minor * 100 + patch.
constexpr int kVersionCode = 2 * 10000 + 30 * 100 + 7;

std::mutex last_error_mutex;
std::string last_error;

void note_refusal(const char* function) {
  std::lock_guard lock(last_error_mutex);
  last_error = std::string("simcuda: ") + function + " is not supported by the simulator";
}

}  // namespace

extern "C" {

int ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = kVersionCode;
  return ncclSuccess;
}

const char* ncclGetErrorString(int result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "a CUDA call failed";
    case ncclSystemError: return "a system call failed";
    case ncclInternalError: return "an internal check failed";
    case ncclInvalidArgument: return "an argument is not valid";
    case ncclInvalidUsage: return "the call is not valid here";
    case ncclRemoteError: return "a remote process or the network failed";
    case ncclInProgress: return "the operation is still in progress";
    default: return "unknown result code";
  }
}

// The last refusal in the process, whichever communicator is asked about (the stand-in has no communicators).
const char* ncclGetLastError(void*) {
  static thread_local std::string copy;
  std::lock_guard lock(last_error_mutex);
  copy = last_error;
  return copy.c_str();
}

}  // extern "C"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, ncclInvalidUsage, note_refusal)

UNSUPPORTED(ncclAllGather) UNSUPPORTED(ncclAllReduce) UNSUPPORTED(ncclAlltoAll) UNSUPPORTED(ncclBcast)
UNSUPPORTED(ncclBroadcast) UNSUPPORTED(ncclCommAbort) UNSUPPORTED(ncclCommCount) UNSUPPORTED(ncclCommDeregister)
UNSUPPORTED(ncclCommDestroy) UNSUPPORTED(ncclCommFinalize) UNSUPPORTED(ncclCommGetAsyncError)
UNSUPPORTED(ncclCommGetUniqueId) UNSUPPORTED(ncclCommGrow) UNSUPPORTED(ncclCommInitAll)
UNSUPPORTED(ncclCommInitRank) UNSUPPORTED(ncclCommInitRankConfig) UNSUPPORTED(ncclCommInitRankScalable)
UNSUPPORTED(ncclCommMemStats) UNSUPPORTED(ncclCommRegister) UNSUPPORTED(ncclCommResume) UNSUPPORTED(ncclCommRevoke)
UNSUPPORTED(ncclCommShrink) UNSUPPORTED(ncclCommSplit) UNSUPPORTED(ncclCommSuspend) UNSUPPORTED(ncclCommUserRank)
UNSUPPORTED(ncclCommWindowDeregister) UNSUPPORTED(ncclCommWindowRegister) UNSUPPORTED(ncclDevCommCreate)
UNSUPPORTED(ncclDevCommDestroy) UNSUPPORTED(ncclGather) UNSUPPORTED(ncclGetLsaMultimemDevicePointer)
UNSUPPORTED(ncclGetPeerDevicePointer) UNSUPPORTED(ncclGetUniqueId) UNSUPPORTED(ncclGroupEnd)
UNSUPPORTED(ncclGroupSimulateEnd) UNSUPPORTED(ncclGroupStart) UNSUPPORTED(ncclMemAlloc) UNSUPPORTED(ncclMemFree)
UNSUPPORTED(ncclPutSignal) UNSUPPORTED(ncclRecv) UNSUPPORTED(ncclRedOpCreatePreMulSum) UNSUPPORTED(ncclRedOpDestroy)
UNSUPPORTED(ncclReduce) UNSUPPORTED(ncclReduceScatter) UNSUPPORTED(ncclSend) UNSUPPORTED(ncclSignal)
UNSUPPORTED(ncclWaitSignal) UNSUPPORTED(ncclWinGetUserPtr)
