// The stand-in libcublas.so.13 (libcublas.so.12 for CUDA 12), modelled where nn.Linear and matmul need it: the handle
// and its settings, and the GEMM family for float, double, half and bfloat16 (plus S/D gemv). Each GEMM is one kernel
// launched on the handle's stream through the driver, as real cuBLAS launches its own kernels (gemm.h); the rest of
// what PyTorch imports is in cublas_unsupported.cpp. Status codes follow the cuBLAS documentation of each function
// (docs.nvidia.com/cuda/cublas, "cuBLAS Helper Function Reference" and "cublas<t>gemm()" and after).
#include <cublas_api.h>
#include <cuda_runtime_api.h>  // CUDART_VERSION

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include "blas_handle.h"
#include "blas_status.h"
#include "blas_types.h"
#include "device_context.h"
#include "gemm.h"
#include "unsupported.h"

// What a cublasHandle_t points at (the type the header leaves opaque).
struct cublasContext {
  standins::HandleTag tag{standins::kBlasHandleTag};  // first: libcublasLt accepts this handle cast (blas_handle.h)
  cudaStream_t stream = nullptr;                      // the legacy default stream until cublasSetStream
  void* workspace = nullptr;                          // null: the library's own default pool
  size_t workspace_size = 0;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  int sm_count_target = 0;  // 0: all the device's SMs
};

namespace {

using standins::gemm::Operand;
using standins::gemm::Problem;

bool valid(cublasHandle_t handle) { return handle != nullptr && handle->tag.value == standins::kBlasHandleTag; }

bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

char op_letter(cublasOperation_t op) { return op == CUBLAS_OP_N ? 'n' : op == CUBLAS_OP_T ? 't' : 'c'; }

std::string type_name(cudaDataType type) {
  switch (type) {
    case CUDA_R_32F: return "CUDA_R_32F";
    case CUDA_R_64F: return "CUDA_R_64F";
    case CUDA_R_16F: return "CUDA_R_16F";
    case CUDA_R_16BF: return "CUDA_R_16BF";
    default: return "cudaDataType " + std::to_string(type);
  }
}

// A column-major matrix argument: its data, type, leading dimension and (strided batches) stride.
struct Matrix {
  const void* data;
  cudaDataType type;
  int ld;
  long long stride = 0;
};

Operand operand(const Matrix& x, cublasOperation_t op, bool pointer_array) {
  bool transposed = op != CUBLAS_OP_N;
  return Operand{x.data, x.type, transposed ? x.ld : 1, transposed ? 1 : x.ld, x.stride, pointer_array};
}

// alpha or beta as the kernel receives it: read now in host pointer mode, by the kernel in device pointer mode.
standins::gemm::Scalar scalar(cublasHandle_t handle, const void* value, cudaDataType scale_type) {
  if (handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) return {0, value};
  return {standins::gemm::read_scalar(value, scale_type), nullptr};
}

// A launch the driver refused (a lost context, a bad stream, a capture gone wrong) is the documented "the function
// failed to launch on the GPU".
cublasStatus_t launched(const Problem& problem, cudaStream_t stream) {
  return standins::gemm::launch(problem, stream) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS
                                                                 : CUBLAS_STATUS_EXECUTION_FAILED;
}

// BLAS's quick return: nothing to compute when C stays as it is (only knowable with host scalars).
bool nothing_to_do(const Problem& p) {
  return p.alpha.device == nullptr && p.beta.device == nullptr && (p.k == 0 || p.alpha.value == 0) &&
         p.beta.value == 1;
}

// Every GEMM entry point: the documented argument checks in order, the type combination, then one launch.
cublasStatus_t gemm(const char* api, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                    int n, int k, const void* alpha, const Matrix& a, const Matrix& b, const void* beta,
                    const Matrix& c, int batch, cublasComputeType_t compute, bool pointer_array) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0 || batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a.ld < std::max(1, transa == CUBLAS_OP_N ? m : k) || b.ld < std::max(1, transb == CUBLAS_OP_N ? k : n) ||
      c.ld < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  standins::ComputeMode mode;
  if (!standins::modelled_combination(compute, a.type, b.type, c.type, &mode)) {
    standins::say_unsupported_once(std::string(api) + " with A/B/C types " + type_name(a.type) + "/" +
                                   type_name(b.type) + "/" + type_name(c.type) + " and cublasComputeType_t " +
                                   std::to_string(compute));
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  Problem p;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  p.a = operand(a, transa, pointer_array);
  p.b = operand(b, transb, pointer_array);
  p.c = p.d = operand(c, CUBLAS_OP_N, pointer_array);
  p.scale_type = mode.scale_type;
  p.accumulate_in_double = mode.accumulate_in_double;
  p.alpha = scalar(handle, alpha, mode.scale_type);
  p.beta = scalar(handle, beta, mode.scale_type);
  p.op_a = op_letter(transa), p.op_b = op_letter(transb);
  if (nothing_to_do(p)) return CUBLAS_STATUS_SUCCESS;
  return launched(p, handle->stream);
}

// y = alpha op(A) x + beta y as a GEMM with one column; a negative increment walks its vector from the end, as BLAS
// specifies.
cublasStatus_t gemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const void* alpha, const void* a,
                    int lda, const void* x, int incx, const void* beta, void* y, int incy, cudaDataType type) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(trans) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const int64_t rows = trans == CUBLAS_OP_N ? m : n, inner = trans == CUBLAS_OP_N ? n : m;
  auto vector = [&](const void* data, int inc, int64_t length) {
    int64_t first = inc < 0 ? (1 - length) * inc : 0;
    const void* start = static_cast<const char*>(data) + first * static_cast<int64_t>(standins::gemm::type_size(type));
    return Operand{start, type, inc, 0, 0, false};
  };
  Problem p;
  p.m = rows, p.n = 1, p.k = inner;
  p.a = operand(Matrix{a, type, lda}, trans, false);
  p.b = vector(x, incx, inner);
  p.c = p.d = vector(y, incy, rows);
  p.scale_type = type;
  p.accumulate_in_double = type == CUDA_R_64F;
  p.alpha = scalar(handle, alpha, type);
  p.beta = scalar(handle, beta, type);
  p.op_a = op_letter(trans);
  p.gemv = true;
  if (nothing_to_do(p)) return CUBLAS_STATUS_SUCCESS;
  return launched(p, handle->stream);
}

}  // namespace

extern "C" {

// ---- the handle ---------------------------------------------------------------------------------------------------

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  // The documented failure of a runtime that cannot initialize (no driver, no device).
  if (standins::bind_context() != CUDA_SUCCESS) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto* created = new (std::nothrow) cublasContext;
  if (created == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = created;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  // cuBLAS documents that releasing a handle's resources implicitly synchronizes the device.
  cuCtxSynchronize();
  handle->tag.value = standins::kDestroyedTag;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t, int* version) {
  if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;  // the cuBLAS of the headers this stand-in was built with
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

size_t cublasGetCudartVersion(void) { return CUDART_VERSION; }

const char* cublasGetStatusName(cublasStatus_t status) { return standins::blas_status_name(status); }

const char* cublasGetStatusString(cublasStatus_t status) { return standins::blas_status_string(status); }

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  // Documented: setting a stream resets the workspace to the library's default pool.
  handle->workspace = nullptr;
  handle->workspace_size = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

// The simulated kernels need no workspace; the buffer is only kept. cuBLAS documents the 256-byte alignment check.
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t size) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspace_size = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t* mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED) return CUBLAS_STATUS_INVALID_VALUE;
  handle->atomics_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

// Kept and reported back; the simulated kernels compute in full float precision whatever the mode allows.
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (mode & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) {
    case CUBLAS_DEFAULT_MATH:
    case CUBLAS_TENSOR_OP_MATH:
    case CUBLAS_PEDANTIC_MATH:
    case CUBLAS_TF32_TENSOR_OP_MATH:
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH: handle->math_mode = mode; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int* count) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (count == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *count = handle->sm_count_target;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int count) {
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (count < 0) return CUBLAS_STATUS_INVALID_VALUE;
  handle->sm_count_target = count;
  return CUBLAS_STATUS_SUCCESS;
}

// ---- GEMM ---------------------------------------------------------------------------------------------------------

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                              const float* beta, float* C, int ldc) {
  return gemm("cublasSgemm_v2", handle, transa, transb, m, n, k, alpha, {A, CUDA_R_32F, lda}, {B, CUDA_R_32F, ldb},
              beta, {C, CUDA_R_32F, ldc}, 1, CUBLAS_COMPUTE_32F, false);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  return gemm("cublasDgemm_v2", handle, transa, transb, m, n, k, alpha, {A, CUDA_R_64F, lda}, {B, CUDA_R_64F, ldb},
              beta, {C, CUDA_R_64F, ldc}, 1, CUBLAS_COMPUTE_64F, false);
}

cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                             int k, const float* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                             cudaDataType Btype, int ldb, const float* beta, void* C, cudaDataType Ctype, int ldc) {
  return gemm("cublasSgemmEx", handle, transa, transb, m, n, k, alpha, {A, Atype, lda}, {B, Btype, ldb}, beta,
              {C, Ctype, ldc}, 1, CUBLAS_COMPUTE_32F, false);
}

// algo: every cublasGemmAlgo_t names a heuristic choice among kernels; the simulator has one kernel per problem.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm("cublasGemmEx", handle, transa, transb, m, n, k, alpha, {A, Atype, lda}, {B, Btype, ldb}, beta,
              {C, Ctype, ldc}, 1, computeType, false);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float* alpha, const float* const Aarray[], int lda,
                                  const float* const Barray[], int ldb, const float* beta, float* const Carray[],
                                  int ldc, int batchCount) {
  return gemm("cublasSgemmBatched", handle, transa, transb, m, n, k, alpha, {Aarray, CUDA_R_32F, lda},
              {Barray, CUDA_R_32F, ldb}, beta, {Carray, CUDA_R_32F, ldc}, batchCount, CUBLAS_COMPUTE_32F, true);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const double* alpha, const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb, const double* beta, double* const Carray[],
                                  int ldc, int batchCount) {
  return gemm("cublasDgemmBatched", handle, transa, transb, m, n, k, alpha, {Aarray, CUDA_R_64F, lda},
              {Barray, CUDA_R_64F, ldb}, beta, {Carray, CUDA_R_64F, ldc}, batchCount, CUBLAS_COMPUTE_64F, true);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void* alpha, const void* const Aarray[], cudaDataType Atype,
                                   int lda, const void* const Barray[], cudaDataType Btype, int ldb, const void* beta,
                                   void* const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm("cublasGemmBatchedEx", handle, transa, transb, m, n, k, alpha, {Aarray, Atype, lda},
              {Barray, Btype, ldb}, beta, {Carray, Ctype, ldc}, batchCount, computeType, true);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long strideA, const float* B, int ldb, long long strideB,
                                         const float* beta, float* C, int ldc, long long strideC, int batchCount) {
  return gemm("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, {A, CUDA_R_32F, lda, strideA},
              {B, CUDA_R_32F, ldb, strideB}, beta, {C, CUDA_R_32F, ldc, strideC}, batchCount, CUBLAS_COMPUTE_32F,
              false);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double* alpha, const double* A, int lda,
                                         long long strideA, const double* B, int ldb, long long strideB,
                                         const double* beta, double* C, int ldc, long long strideC, int batchCount) {
  return gemm("cublasDgemmStridedBatched", handle, transa, transb, m, n, k, alpha, {A, CUDA_R_64F, lda, strideA},
              {B, CUDA_R_64F, ldb, strideB}, beta, {C, CUDA_R_64F, ldc, strideC}, batchCount, CUBLAS_COMPUTE_64F,
              false);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t) {
  return gemm("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, {A, Atype, lda, strideA},
              {B, Btype, ldb, strideB}, beta, {C, Ctype, ldc, strideC}, batchCount, computeType, false);
}

// ---- GEMV ---------------------------------------------------------------------------------------------------------

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float* alpha,
                              const float* A, int lda, const float* x, int incx, const float* beta, float* y,
                              int incy) {
  return gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy, CUDA_R_32F);
}

cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double* alpha,
                              const double* A, int lda, const double* x, int incx, const double* beta, double* y,
                              int incy) {
  return gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy, CUDA_R_64F);
}

}  // extern "C"
