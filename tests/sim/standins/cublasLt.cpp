// The stand-in libcublasLt.so.13 (.so.12 for CUDA 12), modelled: handles (its own, and cuBLAS handles cast, as PyTorch
// passes them), matmul/layout/preference descriptors with their attributes, a heuristic offering one algorithm, algo
// init, check and configuration, and cublasLtMatmul, which launches one simulated GEMM kernel on the given stream
// (gemm.h), bias/ReLU/GELU epilogues included. Status codes are those cublasLt.h documents for each function.
#include <cublasLt.h>
#include <cuda_runtime_api.h>  // CUDART_VERSION

#include <new>
#include <string>

#include "blas_handle.h"
#include "blas_status.h"
#include "blas_types.h"
#include "gemm.h"
#include "lt_descriptors.h"
#include "unsupported.h"

// What a cublasLtHandle_t made by cublasLtCreate points at.
struct cublasLtContext {
  standins::HandleTag tag{standins::kBlasLtHandleTag};
};

namespace {

using standins::lt::Layout;
using standins::lt::MatmulDesc;

// A handle of either library: cuBLAS documents a cublasHandle_t cast to cublasLtHandle_t as valid (blas_handle.h).
bool valid(cublasLtHandle_t handle) {
  if (handle == nullptr) return false;
  uint64_t tag = reinterpret_cast<const standins::HandleTag*>(handle)->value;
  return tag == standins::kBlasLtHandleTag || tag == standins::kBlasHandleTag;
}

struct Described {
  MatmulDesc* desc;
  Layout *a, *b, *c, *d;
  bool complete() const { return desc != nullptr && a != nullptr && b != nullptr && c != nullptr && d != nullptr; }
};

Described described(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d) {
  return {standins::lt::matmul_desc(desc), standins::lt::layout(a), standins::lt::layout(b), standins::lt::layout(c),
          standins::lt::layout(d)};
}

// The plan, saying once what is not modelled when it is not.
cublasStatus_t plan(const Described& x, standins::gemm::Problem* problem) {
  std::string unsupported;
  cublasStatus_t status = standins::lt::plan(*x.desc, *x.a, *x.b, *x.c, *x.d, problem, &unsupported);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) standins::say_unsupported_once(unsupported);
  return status;
}

// What the heuristic and the check report for the one algorithm: no workspace, one wave.
void describe_result(cublasLtMatmulHeuristicResult_t* result) {
  result->workspaceSize = 0;
  result->state = CUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
}

template <typename Object, typename Handle>
cublasStatus_t create(Handle* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* created = new (std::nothrow) Object;
  if (created == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = reinterpret_cast<Handle>(created);
  return CUBLAS_STATUS_SUCCESS;
}

template <typename Object>
cublasStatus_t destroy(Object* object) {
  if (object == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  object->tag = 0;
  delete object;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

// ---- library and handles ------------------------------------------------------------------------------------------

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* created = new (std::nothrow) cublasLtContext;
  if (created == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = created;
  return CUBLAS_STATUS_SUCCESS;
}

// Only handles cublasLtCreate made: a cuBLAS handle is released with cublasDestroy.
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr || handle->tag.value != standins::kBlasLtHandleTag) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->tag.value = standins::kDestroyedTag;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }  // the cuBLAS of the headers built with

size_t cublasLtGetCudartVersion(void) { return CUDART_VERSION; }

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

const char* cublasLtGetStatusName(cublasStatus_t status) { return standins::blas_status_name(status); }

const char* cublasLtGetStatusString(cublasStatus_t status) { return standins::blas_status_string(status); }

// ---- descriptors --------------------------------------------------------------------------------------------------

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType,
                                        cudaDataType_t scaleType) {
  cublasStatus_t status = create<MatmulDesc>(desc);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  MatmulDesc* created = standins::lt::matmul_desc(*desc);
  created->attributes.put<int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, computeType);
  created->attributes.put<int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE, scaleType);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  return destroy(standins::lt::matmul_desc(desc));
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t sizeInBytes) {
  MatmulDesc* d = standins::lt::matmul_desc(desc);
  return d != nullptr ? d->attributes.set(attr, buf, sizeInBytes) : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  MatmulDesc* d = standins::lt::matmul_desc(desc);
  return d != nullptr ? d->attributes.get(attr, buf, sizeInBytes, sizeWritten) : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  cublasStatus_t status = create<Layout>(layout);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  Layout* created = standins::lt::layout(*layout);
  created->attributes.put<uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE, type);
  created->attributes.put<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS, rows);
  created->attributes.put<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS, cols);
  created->attributes.put<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD, ld);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return destroy(standins::lt::layout(layout));
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t sizeInBytes) {
  Layout* l = standins::lt::layout(layout);
  return l != nullptr ? l->attributes.set(attr, buf, sizeInBytes) : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  Layout* l = standins::lt::layout(layout);
  return l != nullptr ? l->attributes.get(attr, buf, sizeInBytes, sizeWritten) : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return create<standins::lt::Preference>(pref);
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy(standins::lt::preference(pref));
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t sizeInBytes) {
  standins::lt::Preference* p = standins::lt::preference(pref);
  return p != nullptr ? p->attributes.set(attr, buf, sizeInBytes) : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                                    size_t sizeInBytes, size_t* sizeWritten) {
  standins::lt::Preference* p = standins::lt::preference(pref);
  return p != nullptr ? p->attributes.get(attr, buf, sizeInBytes, sizeWritten) : CUBLAS_STATUS_INVALID_VALUE;
}

// ---- algorithms ---------------------------------------------------------------------------------------------------

// One algorithm for every modelled configuration (it needs no workspace, so every preference admits it); none, and
// CUBLAS_STATUS_NOT_SUPPORTED, for a configuration the simulator does not model.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int* returnAlgoCount) {
  if (!valid(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  Described x = described(operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
  if (!x.complete() || standins::lt::preference(preference) == nullptr || heuristicResultsArray == nullptr ||
      returnAlgoCount == nullptr || requestedAlgoCount <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  *returnAlgoCount = 0;
  standins::gemm::Problem problem;
  if (cublasStatus_t status = plan(x, &problem); status != CUBLAS_STATUS_SUCCESS) return status;
  heuristicResultsArray[0] = cublasLtMatmulHeuristicResult_t{};
  standins::lt::init_algo(&heuristicResultsArray[0].algo);
  describe_result(&heuristicResultsArray[0]);
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t lightHandle, cublasComputeType_t computeType,
                                      cudaDataType_t scaleType, cudaDataType_t Atype, cudaDataType_t Btype,
                                      cudaDataType_t Ctype, cudaDataType_t Dtype, int algoId,
                                      cublasLtMatmulAlgo_t* algo) {
  if (!valid(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (algo == nullptr || algoId != 0) return CUBLAS_STATUS_INVALID_VALUE;  // the only id there is
  standins::ComputeMode mode;
  if (!standins::modelled_combination(computeType, Atype, Btype, Ctype, &mode) || Dtype != Ctype ||
      (scaleType != mode.scale_type && !(standins::is_float16_compute(computeType) && scaleType == CUDA_R_32F)))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  standins::lt::init_algo(algo);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                       cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                       cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                       const cublasLtMatmulAlgo_t* algo, cublasLtMatmulHeuristicResult_t* result) {
  if (!valid(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  Described x = described(operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
  if (!x.complete() || !standins::lt::is_algo(algo) || result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  standins::gemm::Problem problem;
  if (cublasStatus_t status = plan(x, &problem); status != CUBLAS_STATUS_SUCCESS) return status;
  describe_result(result);  // its algo field is never written (cublasLt.h): algo may point to it
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
                                                    size_t sizeInBytes) {
  return standins::lt::set_algo_config(algo, attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
                                                    size_t sizeInBytes, size_t* sizeWritten) {
  return standins::lt::get_algo_config(algo, attr, buf, sizeInBytes, sizeWritten);
}

// ---- the matmul ---------------------------------------------------------------------------------------------------

// algo may be null (the heuristic's choice is made internally); workspace is not used by the simulated kernel.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void*, size_t,
                              cudaStream_t stream) {
  if (!valid(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  Described x = described(computeDesc, Adesc, Bdesc, Cdesc, Ddesc);
  if (!x.complete() || alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (algo != nullptr && !standins::lt::is_algo(algo)) return CUBLAS_STATUS_INVALID_VALUE;
  standins::gemm::Problem p;
  if (cublasStatus_t status = plan(x, &p); status != CUBLAS_STATUS_SUCCESS) return status;

  const auto& attributes = x.desc->attributes;
  bool device_scalars = attributes.value<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE) == CUBLASLT_POINTER_MODE_DEVICE;
  p.alpha = device_scalars ? standins::gemm::Scalar{0, alpha}
                           : standins::gemm::Scalar{standins::gemm::read_scalar(alpha, p.scale_type), nullptr};
  p.beta = device_scalars ? standins::gemm::Scalar{0, beta}
                          : standins::gemm::Scalar{standins::gemm::read_scalar(beta, p.scale_type), nullptr};
  p.a.data = A, p.b.data = B, p.c.data = C, p.d.data = D;
  p.bias = reinterpret_cast<const void*>(attributes.value<uint64_t>(CUBLASLT_MATMUL_DESC_BIAS_POINTER));
  uint32_t epilogue = attributes.value<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE);
  bool wants_bias = (epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
  if (!wants_bias) p.bias = nullptr;
  // The operands the product reads must be there; C only when beta may be non-zero.
  bool empty = p.m == 0 || p.n == 0;
  if (!empty && (D == nullptr || (p.k > 0 && (A == nullptr || B == nullptr)) ||
                 (C == nullptr && (device_scalars || p.beta.value != 0)) || (wants_bias && p.bias == nullptr)))
    return CUBLAS_STATUS_INVALID_VALUE;
  return standins::gemm::launch(p, stream) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
