// The stand-in libcudnn.so.9. cuDNN is not modelled: every entry point PyTorch imports exists and, except for the
// version queries and error strings below, returns CUDNN_STATUS_NOT_SUPPORTED after saying so once. torch imports
// and reports a cuDNN version (torch.backends.cudnn.version()); cudnnCreate fails, so any use of cuDNN (a convolution
// with torch.backends.cudnn.enabled) raises "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED" with this line on stderr.
//
// cudnn.h is not part of the CUDA toolkit, so the codes are restated here, from the cuDNN 9 API reference
// (docs.nvidia.com/deeplearning/cudnn/api, cudnnStatus_t; libraryPropertyType comes with the toolkit).
#include <cuda_runtime_api.h>  // CUDART_VERSION
#include <library_types.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "unsupported.h"

namespace {

enum CudnnStatus : int {
  CUDNN_STATUS_SUCCESS = 0,
  CUDNN_STATUS_NOT_INITIALIZED = 1001,
  CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH = 1002,
  CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH = 1003,
  CUDNN_STATUS_DEPRECATED = 1004,
  CUDNN_STATUS_LICENSE_ERROR = 1005,
  CUDNN_STATUS_RUNTIME_IN_PROGRESS = 1006,
  CUDNN_STATUS_RUNTIME_FP_OVERFLOW = 1007,
  CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED = 1008,
  CUDNN_STATUS_BAD_PARAM = 2000,
  CUDNN_STATUS_BAD_PARAM_NULL_POINTER = 2002,
  CUDNN_STATUS_NOT_SUPPORTED = 3000,
  CUDNN_STATUS_INTERNAL_ERROR = 4000,
  CUDNN_STATUS_EXECUTION_FAILED = 5000,
};

// The cuDNN this stand-in presents itself as: 9.26.0, the version the PyPI torch 2.15 wheels for CUDA 13 require
// (nvidia-cudnn-cu13==9.26.0.51). torch refuses a runtime whose major differs from, or whose minor is below, the one
// it was built with (torch/backends/cudnn/__init__.py).
constexpr int kMajor = 9, kMinor = 26, kPatch = 0;

// What cudnnGetLastErrorString reports: the calling thread's last refusal, as cuDNN keeps its messages per thread.
thread_local std::string last_error;

void note_refusal(const char* function) {
  last_error = std::string("simcuda: ") + function + " is not supported by the simulator";
}

}  // namespace

extern "C" {

// cuDNN 9 encodes its version as major * 10000 + minor * 100 + patch.
size_t cudnnGetVersion(void) { return kMajor * 10000 + kMinor * 100 + kPatch; }

// The CUDA runtime this cuDNN was built against: the toolkit's headers it was compiled with.
size_t cudnnGetCudartVersion(void) { return CUDART_VERSION; }

int cudnnGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  switch (type) {
    case MAJOR_VERSION: *value = kMajor; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = kMinor; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = kPatch; return CUDNN_STATUS_SUCCESS;
  }
  return CUDNN_STATUS_BAD_PARAM;
}

const char* cudnnGetErrorString(int status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH: return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
    case CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH: return "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH";
    case CUDNN_STATUS_DEPRECATED: return "CUDNN_STATUS_DEPRECATED";
    case CUDNN_STATUS_LICENSE_ERROR: return "CUDNN_STATUS_LICENSE_ERROR";
    case CUDNN_STATUS_RUNTIME_IN_PROGRESS: return "CUDNN_STATUS_RUNTIME_IN_PROGRESS";
    case CUDNN_STATUS_RUNTIME_FP_OVERFLOW: return "CUDNN_STATUS_RUNTIME_FP_OVERFLOW";
    case CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_UNKNOWN_STATUS";
  }
}

void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (message == nullptr || max_size == 0) return;
  size_t length = std::min(last_error.size(), max_size - 1);
  std::memcpy(message, last_error.data(), length);
  message[length] = '\0';
}

}  // extern "C"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, CUDNN_STATUS_NOT_SUPPORTED, note_refusal)

UNSUPPORTED(cudnnBackendCreateDescriptor) UNSUPPORTED(cudnnBackendDestroyDescriptor)
UNSUPPORTED(cudnnBackendExecute) UNSUPPORTED(cudnnBackendFinalize) UNSUPPORTED(cudnnBackendGetAttribute)
UNSUPPORTED(cudnnBackendSetAttribute) UNSUPPORTED(cudnnBatchNormalizationBackwardEx)
UNSUPPORTED(cudnnBatchNormalizationForwardInference) UNSUPPORTED(cudnnBatchNormalizationForwardTrainingEx)
UNSUPPORTED(cudnnCTCLoss) UNSUPPORTED(cudnnCTCLoss_v8) UNSUPPORTED(cudnnConvolutionBackwardData)
UNSUPPORTED(cudnnConvolutionBackwardFilter) UNSUPPORTED(cudnnConvolutionBiasActivationForward)
UNSUPPORTED(cudnnConvolutionForward) UNSUPPORTED(cudnnCreate) UNSUPPORTED(cudnnCreateActivationDescriptor)
UNSUPPORTED(cudnnCreateCTCLossDescriptor) UNSUPPORTED(cudnnCreateConvolutionDescriptor)
UNSUPPORTED(cudnnCreateDropoutDescriptor) UNSUPPORTED(cudnnCreateFilterDescriptor)
UNSUPPORTED(cudnnCreatePoolingDescriptor) UNSUPPORTED(cudnnCreateRNNDataDescriptor)
UNSUPPORTED(cudnnCreateRNNDescriptor) UNSUPPORTED(cudnnCreateSpatialTransformerDescriptor)
UNSUPPORTED(cudnnCreateTensorDescriptor) UNSUPPORTED(cudnnDestroyActivationDescriptor)
UNSUPPORTED(cudnnDestroyCTCLossDescriptor) UNSUPPORTED(cudnnDestroyConvolutionDescriptor)
UNSUPPORTED(cudnnDestroyDropoutDescriptor) UNSUPPORTED(cudnnDestroyFilterDescriptor)
UNSUPPORTED(cudnnDestroyRNNDataDescriptor) UNSUPPORTED(cudnnDestroyRNNDescriptor)
UNSUPPORTED(cudnnDestroySpatialTransformerDescriptor) UNSUPPORTED(cudnnDestroyTensorDescriptor)
UNSUPPORTED(cudnnDropoutGetStatesSize) UNSUPPORTED(cudnnFindConvolutionBackwardDataAlgorithmEx)
UNSUPPORTED(cudnnFindConvolutionBackwardFilterAlgorithmEx) UNSUPPORTED(cudnnFindConvolutionForwardAlgorithmEx)
UNSUPPORTED(cudnnGetBatchNormalizationBackwardExWorkspaceSize)
UNSUPPORTED(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize)
UNSUPPORTED(cudnnGetBatchNormalizationTrainingExReserveSpaceSize) UNSUPPORTED(cudnnGetCTCLossWorkspaceSize)
UNSUPPORTED(cudnnGetCTCLossWorkspaceSize_v8) UNSUPPORTED(cudnnGetConvolutionBackwardDataAlgorithm_v7)
UNSUPPORTED(cudnnGetConvolutionBackwardDataWorkspaceSize) UNSUPPORTED(cudnnGetConvolutionBackwardFilterAlgorithm_v7)
UNSUPPORTED(cudnnGetConvolutionBackwardFilterWorkspaceSize) UNSUPPORTED(cudnnGetConvolutionForwardAlgorithm_v7)
UNSUPPORTED(cudnnGetConvolutionForwardWorkspaceSize) UNSUPPORTED(cudnnGetFilterNdDescriptor)
UNSUPPORTED(cudnnGetRNNTempSpaceSizes) UNSUPPORTED(cudnnGetRNNWeightParams) UNSUPPORTED(cudnnGetRNNWeightSpaceSize)
UNSUPPORTED(cudnnGetStream) UNSUPPORTED(cudnnGetTensorNdDescriptor) UNSUPPORTED(cudnnPoolingForward)
UNSUPPORTED(cudnnRNNBackwardData_v8) UNSUPPORTED(cudnnRNNBackwardWeights_v8) UNSUPPORTED(cudnnRNNForward)
UNSUPPORTED(cudnnRestoreDropoutDescriptor) UNSUPPORTED(cudnnSetActivationDescriptor)
UNSUPPORTED(cudnnSetCTCLossDescriptorEx) UNSUPPORTED(cudnnSetCTCLossDescriptor_v9)
UNSUPPORTED(cudnnSetConvolutionGroupCount) UNSUPPORTED(cudnnSetConvolutionMathType)
UNSUPPORTED(cudnnSetConvolutionNdDescriptor) UNSUPPORTED(cudnnSetDropoutDescriptor)
UNSUPPORTED(cudnnSetFilterNdDescriptor) UNSUPPORTED(cudnnSetPooling2dDescriptor)
UNSUPPORTED(cudnnSetRNNDataDescriptor) UNSUPPORTED(cudnnSetRNNDescriptor_v8)
UNSUPPORTED(cudnnSetSpatialTransformerNdDescriptor) UNSUPPORTED(cudnnSetStream)
UNSUPPORTED(cudnnSetTensorNdDescriptor) UNSUPPORTED(cudnnSpatialTfGridGeneratorBackward)
UNSUPPORTED(cudnnSpatialTfGridGeneratorForward) UNSUPPORTED(cudnnSpatialTfSamplerBackward)
UNSUPPORTED(cudnnSpatialTfSamplerForward)
