// The rest of the cuBLAS API that PyTorch imports: present, so that torch loads, and not modelled. Each says so once
// ("simcuda: <function> is not supported by the simulator") and returns CUBLAS_STATUS_NOT_SUPPORTED, cuBLAS's status
// for "the functionality requested is not supported" (cublas_api.h), so that torch raises a clear error.
#include <cublas_api.h>

#include "unsupported.h"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, CUBLAS_STATUS_NOT_SUPPORTED, STANDIN_NO_NOTE)

// Data movement between host and device
UNSUPPORTED(cublasGetMatrixAsync) UNSUPPORTED(cublasGetVectorAsync) UNSUPPORTED(cublasSetMatrixAsync)
UNSUPPORTED(cublasSetVectorAsync)

// Level-1 BLAS
UNSUPPORTED(cublasCaxpy_v2) UNSUPPORTED(cublasCcopy_v2) UNSUPPORTED(cublasCdotc_v2) UNSUPPORTED(cublasCdotu_v2)
UNSUPPORTED(cublasCrot_v2) UNSUPPORTED(cublasCrotg_v2) UNSUPPORTED(cublasCscal_v2) UNSUPPORTED(cublasCsrot_v2)
UNSUPPORTED(cublasCsscal_v2) UNSUPPORTED(cublasCswap_v2) UNSUPPORTED(cublasDasum_v2) UNSUPPORTED(cublasDaxpy_v2)
UNSUPPORTED(cublasDcopy_v2) UNSUPPORTED(cublasDdot_v2) UNSUPPORTED(cublasDnrm2_v2) UNSUPPORTED(cublasDotEx)
UNSUPPORTED(cublasDrot_v2) UNSUPPORTED(cublasDrotg_v2) UNSUPPORTED(cublasDrotm_v2) UNSUPPORTED(cublasDrotmg_v2)
UNSUPPORTED(cublasDscal_v2) UNSUPPORTED(cublasDswap_v2) UNSUPPORTED(cublasDzasum_v2) UNSUPPORTED(cublasDznrm2_v2)
UNSUPPORTED(cublasIcamax_v2) UNSUPPORTED(cublasIcamin_v2) UNSUPPORTED(cublasIdamax_v2) UNSUPPORTED(cublasIdamin_v2)
UNSUPPORTED(cublasIsamax_v2) UNSUPPORTED(cublasIsamin_v2) UNSUPPORTED(cublasIzamax_v2) UNSUPPORTED(cublasIzamin_v2)
UNSUPPORTED(cublasSasum_v2) UNSUPPORTED(cublasSaxpy_v2) UNSUPPORTED(cublasScasum_v2) UNSUPPORTED(cublasScnrm2_v2)
UNSUPPORTED(cublasScopy_v2) UNSUPPORTED(cublasSdot_v2) UNSUPPORTED(cublasSnrm2_v2) UNSUPPORTED(cublasSrot_v2)
UNSUPPORTED(cublasSrotg_v2) UNSUPPORTED(cublasSrotm_v2) UNSUPPORTED(cublasSrotmg_v2) UNSUPPORTED(cublasSscal_v2)
UNSUPPORTED(cublasSswap_v2) UNSUPPORTED(cublasZaxpy_v2) UNSUPPORTED(cublasZcopy_v2) UNSUPPORTED(cublasZdotc_v2)
UNSUPPORTED(cublasZdotu_v2) UNSUPPORTED(cublasZdrot_v2) UNSUPPORTED(cublasZdscal_v2) UNSUPPORTED(cublasZrot_v2)
UNSUPPORTED(cublasZrotg_v2) UNSUPPORTED(cublasZscal_v2) UNSUPPORTED(cublasZswap_v2)

// Level-2 BLAS (S/D gemv are modelled, in cublas.cpp)
UNSUPPORTED(cublasCgemv_v2) UNSUPPORTED(cublasCgerc_v2) UNSUPPORTED(cublasCgeru_v2) UNSUPPORTED(cublasChemv_v2)
UNSUPPORTED(cublasCher2_v2) UNSUPPORTED(cublasCher_v2) UNSUPPORTED(cublasCsymv_v2) UNSUPPORTED(cublasCsyr2_v2)
UNSUPPORTED(cublasCsyr_v2) UNSUPPORTED(cublasCtrmv_v2) UNSUPPORTED(cublasCtrsv_v2) UNSUPPORTED(cublasDger_v2)
UNSUPPORTED(cublasDsymv_v2) UNSUPPORTED(cublasDsyr2_v2) UNSUPPORTED(cublasDsyr_v2) UNSUPPORTED(cublasDtrmv_v2)
UNSUPPORTED(cublasDtrsv_v2) UNSUPPORTED(cublasSger_v2) UNSUPPORTED(cublasSsymv_v2) UNSUPPORTED(cublasSsyr2_v2)
UNSUPPORTED(cublasSsyr_v2) UNSUPPORTED(cublasStrmv_v2) UNSUPPORTED(cublasStrsv_v2) UNSUPPORTED(cublasZgemv_v2)
UNSUPPORTED(cublasZgerc_v2) UNSUPPORTED(cublasZgeru_v2) UNSUPPORTED(cublasZhemv_v2) UNSUPPORTED(cublasZher2_v2)
UNSUPPORTED(cublasZher_v2) UNSUPPORTED(cublasZsymv_v2) UNSUPPORTED(cublasZsyr2_v2) UNSUPPORTED(cublasZsyr_v2)
UNSUPPORTED(cublasZtrmv_v2) UNSUPPORTED(cublasZtrsv_v2)

// Level-3 BLAS other than the float GEMMs (complex GEMMs, symmetric, triangular)
UNSUPPORTED(cublasCgemmBatched) UNSUPPORTED(cublasCgemmStridedBatched) UNSUPPORTED(cublasCgemm_v2)
UNSUPPORTED(cublasChemm_v2) UNSUPPORTED(cublasCher2k_v2) UNSUPPORTED(cublasCherk_v2) UNSUPPORTED(cublasCsymm_v2)
UNSUPPORTED(cublasCsyr2k_v2) UNSUPPORTED(cublasCsyrk_v2) UNSUPPORTED(cublasCtrmm_v2) UNSUPPORTED(cublasCtrsmBatched)
UNSUPPORTED(cublasCtrsm_v2) UNSUPPORTED(cublasDsymm_v2) UNSUPPORTED(cublasDsyr2k_v2) UNSUPPORTED(cublasDsyrk_v2)
UNSUPPORTED(cublasDtrmm_v2) UNSUPPORTED(cublasDtrsmBatched) UNSUPPORTED(cublasDtrsm_v2) UNSUPPORTED(cublasSsymm_v2)
UNSUPPORTED(cublasSsyr2k_v2) UNSUPPORTED(cublasSsyrk_v2) UNSUPPORTED(cublasStrmm_v2) UNSUPPORTED(cublasStrsmBatched)
UNSUPPORTED(cublasStrsm_v2) UNSUPPORTED(cublasZgemmBatched) UNSUPPORTED(cublasZgemmStridedBatched)
UNSUPPORTED(cublasZgemm_v2) UNSUPPORTED(cublasZhemm_v2) UNSUPPORTED(cublasZher2k_v2) UNSUPPORTED(cublasZherk_v2)
UNSUPPORTED(cublasZsymm_v2) UNSUPPORTED(cublasZsyr2k_v2) UNSUPPORTED(cublasZsyrk_v2) UNSUPPORTED(cublasZtrmm_v2)
UNSUPPORTED(cublasZtrsmBatched) UNSUPPORTED(cublasZtrsm_v2)

// Batched factorizations and solvers
UNSUPPORTED(cublasCgelsBatched) UNSUPPORTED(cublasCgeqrfBatched) UNSUPPORTED(cublasCgetrfBatched)
UNSUPPORTED(cublasCgetrsBatched) UNSUPPORTED(cublasDgelsBatched) UNSUPPORTED(cublasDgeqrfBatched)
UNSUPPORTED(cublasDgetrfBatched) UNSUPPORTED(cublasDgetrsBatched) UNSUPPORTED(cublasSgelsBatched)
UNSUPPORTED(cublasSgeqrfBatched) UNSUPPORTED(cublasSgetrfBatched) UNSUPPORTED(cublasSgetrsBatched)
UNSUPPORTED(cublasZgelsBatched) UNSUPPORTED(cublasZgeqrfBatched) UNSUPPORTED(cublasZgetrfBatched)
UNSUPPORTED(cublasZgetrsBatched)
