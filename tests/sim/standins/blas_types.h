// Which combinations of compute type and operand types the stand-in GEMM models: the floating-point rows of the
// table of supported combinations in the cuBLAS documentation (cublasGemmEx), for the types the simulated kernel
// loads (float, double, half, bfloat16). Integer, complex and FP8 GEMMs are not modelled.
#pragma once

#include <cublas_api.h>

#include "gemm.h"

namespace standins {

struct ComputeMode {
  cudaDataType scale_type = CUDA_R_32F;  // what alpha and beta are
  bool accumulate_in_double = false;
};

inline bool is_float32_compute(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: return true;
    default: return false;
  }
}

inline bool is_float64_compute(cublasComputeType_t compute) {
  return compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC ||
         compute == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT;
}

inline bool is_float16_compute(cublasComputeType_t compute) {
  return compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC;
}

// A and B of one type; C (and D) of that type, or float for half and bfloat16 inputs under a float compute type.
// Half compute (alpha and beta in half) is modelled accumulating in float and rounding the result once; the fast and
// emulated float modes are computed in full float precision, which they approximate.
inline bool modelled_combination(cublasComputeType_t compute, cudaDataType a, cudaDataType b, cudaDataType c,
                                 ComputeMode* mode) {
  if (a != b || !gemm::modelled_type(a) || !gemm::modelled_type(c)) return false;
  if (is_float64_compute(compute)) {
    *mode = {CUDA_R_64F, true};
    return a == CUDA_R_64F && c == CUDA_R_64F;
  }
  if (is_float32_compute(compute)) {
    *mode = {CUDA_R_32F, false};
    if (a == CUDA_R_32F) return c == CUDA_R_32F;
    return (a == CUDA_R_16F || a == CUDA_R_16BF) && (c == a || c == CUDA_R_32F);
  }
  if (is_float16_compute(compute)) {
    *mode = {CUDA_R_16F, false};
    return a == CUDA_R_16F && c == CUDA_R_16F;
  }
  return false;
}

}  // namespace standins
