// The stand-in libcusparse.so.12. cuSPARSE is not modelled: each entry point PyTorch imports says so once and returns
// CUSPARSE_STATUS_NOT_SUPPORTED (cusparse.h), except cusparseGetErrorString, which names a status.
#include <cusparse.h>

#include "unsupported.h"

extern "C" const char* cusparseGetErrorString(cusparseStatus_t status) {
  switch (status) {
    case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
    case CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
    case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
    case CUSPARSE_STATUS_ARCH_MISMATCH: return "CUSPARSE_STATUS_ARCH_MISMATCH";
    case CUSPARSE_STATUS_MAPPING_ERROR: return "CUSPARSE_STATUS_MAPPING_ERROR";
    case CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
    case CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSPARSE_STATUS_ZERO_PIVOT: return "CUSPARSE_STATUS_ZERO_PIVOT";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES";
  }
  return "CUSPARSE_STATUS_UNKNOWN";
}

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, CUSPARSE_STATUS_NOT_SUPPORTED, STANDIN_NO_NOTE)

UNSUPPORTED(cusparseCbsrmm) UNSUPPORTED(cusparseCbsrmv) UNSUPPORTED(cusparseCbsrsm2_analysis)
UNSUPPORTED(cusparseCbsrsm2_bufferSize) UNSUPPORTED(cusparseCbsrsm2_solve) UNSUPPORTED(cusparseCbsrsv2_analysis)
UNSUPPORTED(cusparseCbsrsv2_bufferSize) UNSUPPORTED(cusparseCbsrsv2_solve) UNSUPPORTED(cusparseCcsrgeam2)
UNSUPPORTED(cusparseCcsrgeam2_bufferSizeExt) UNSUPPORTED(cusparseCreate) UNSUPPORTED(cusparseCreateBsrsm2Info)
UNSUPPORTED(cusparseCreateBsrsv2Info) UNSUPPORTED(cusparseCreateCoo) UNSUPPORTED(cusparseCreateCsr)
UNSUPPORTED(cusparseCreateDnMat) UNSUPPORTED(cusparseCreateDnVec) UNSUPPORTED(cusparseCreateIdentityPermutation)
UNSUPPORTED(cusparseCreateMatDescr) UNSUPPORTED(cusparseCsrSetPointers) UNSUPPORTED(cusparseCsrSetStridedBatch)
UNSUPPORTED(cusparseDbsrmm) UNSUPPORTED(cusparseDbsrmv) UNSUPPORTED(cusparseDbsrsm2_analysis)
UNSUPPORTED(cusparseDbsrsm2_bufferSize) UNSUPPORTED(cusparseDbsrsm2_solve) UNSUPPORTED(cusparseDbsrsv2_analysis)
UNSUPPORTED(cusparseDbsrsv2_bufferSize) UNSUPPORTED(cusparseDbsrsv2_solve) UNSUPPORTED(cusparseDcsrgeam2)
UNSUPPORTED(cusparseDcsrgeam2_bufferSizeExt) UNSUPPORTED(cusparseDestroy) UNSUPPORTED(cusparseDestroyBsrsm2Info)
UNSUPPORTED(cusparseDestroyBsrsv2Info) UNSUPPORTED(cusparseDestroyDnMat) UNSUPPORTED(cusparseDestroyDnVec)
UNSUPPORTED(cusparseDestroyMatDescr) UNSUPPORTED(cusparseDestroySpMat) UNSUPPORTED(cusparseDnMatSetStridedBatch)
UNSUPPORTED(cusparseSDDMM) UNSUPPORTED(cusparseSDDMM_bufferSize) UNSUPPORTED(cusparseSDDMM_preprocess)
UNSUPPORTED(cusparseSbsrmm) UNSUPPORTED(cusparseSbsrmv) UNSUPPORTED(cusparseSbsrsm2_analysis)
UNSUPPORTED(cusparseSbsrsm2_bufferSize) UNSUPPORTED(cusparseSbsrsm2_solve) UNSUPPORTED(cusparseSbsrsv2_analysis)
UNSUPPORTED(cusparseSbsrsv2_bufferSize) UNSUPPORTED(cusparseSbsrsv2_solve) UNSUPPORTED(cusparseScsrgeam2)
UNSUPPORTED(cusparseScsrgeam2_bufferSizeExt) UNSUPPORTED(cusparseSetMatDiagType) UNSUPPORTED(cusparseSetMatFillMode)
UNSUPPORTED(cusparseSetMatIndexBase) UNSUPPORTED(cusparseSetMatType) UNSUPPORTED(cusparseSetPointerMode)
UNSUPPORTED(cusparseSetStream) UNSUPPORTED(cusparseSpGEMM_compute) UNSUPPORTED(cusparseSpGEMM_copy)
UNSUPPORTED(cusparseSpGEMM_createDescr) UNSUPPORTED(cusparseSpGEMM_destroyDescr)
UNSUPPORTED(cusparseSpGEMM_workEstimation) UNSUPPORTED(cusparseSpMM) UNSUPPORTED(cusparseSpMM_bufferSize)
UNSUPPORTED(cusparseSpMV) UNSUPPORTED(cusparseSpMV_bufferSize) UNSUPPORTED(cusparseSpMatGetSize)
UNSUPPORTED(cusparseSpMatSetAttribute) UNSUPPORTED(cusparseSpSM_analysis) UNSUPPORTED(cusparseSpSM_bufferSize)
UNSUPPORTED(cusparseSpSM_createDescr) UNSUPPORTED(cusparseSpSM_destroyDescr) UNSUPPORTED(cusparseSpSM_solve)
UNSUPPORTED(cusparseSpSV_analysis) UNSUPPORTED(cusparseSpSV_bufferSize) UNSUPPORTED(cusparseSpSV_createDescr)
UNSUPPORTED(cusparseSpSV_destroyDescr) UNSUPPORTED(cusparseSpSV_solve) UNSUPPORTED(cusparseXbsrsm2_zeroPivot)
UNSUPPORTED(cusparseXbsrsv2_zeroPivot) UNSUPPORTED(cusparseXcoo2csr) UNSUPPORTED(cusparseXcoosortByRow)
UNSUPPORTED(cusparseXcoosort_bufferSizeExt) UNSUPPORTED(cusparseXcsrgeam2Nnz) UNSUPPORTED(cusparseXcsrsort)
UNSUPPORTED(cusparseXcsrsort_bufferSizeExt) UNSUPPORTED(cusparseZbsrmm) UNSUPPORTED(cusparseZbsrmv)
UNSUPPORTED(cusparseZbsrsm2_analysis) UNSUPPORTED(cusparseZbsrsm2_bufferSize) UNSUPPORTED(cusparseZbsrsm2_solve)
UNSUPPORTED(cusparseZbsrsv2_analysis) UNSUPPORTED(cusparseZbsrsv2_bufferSize) UNSUPPORTED(cusparseZbsrsv2_solve)
UNSUPPORTED(cusparseZcsrgeam2) UNSUPPORTED(cusparseZcsrgeam2_bufferSizeExt)
