// The stand-in libcusparseLt.so.0 (torch's semi-structured sparsity). cuSPARSELt is not modelled: each entry point
// PyTorch imports says so once and returns CUSPARSE_STATUS_NOT_SUPPORTED; cuSPARSELt reports its errors as
// cusparseStatus_t (cuSPARSELt documentation, "cuSPARSELt Data Types"), whose codes come with the toolkit's cusparse.h.
// NVIDIA's library exports these symbols unversioned, and torch imports them so.
#include <cusparse.h>

#include "unsupported.h"

#define UNSUPPORTED(name) STANDIN_UNSUPPORTED(name, CUSPARSE_STATUS_NOT_SUPPORTED, STANDIN_NO_NOTE)

UNSUPPORTED(cusparseLtDenseDescriptorInit) UNSUPPORTED(cusparseLtInit) UNSUPPORTED(cusparseLtMatDescriptorDestroy)
UNSUPPORTED(cusparseLtMatmul) UNSUPPORTED(cusparseLtMatmulAlgGetAttribute)
UNSUPPORTED(cusparseLtMatmulAlgSelectionInit) UNSUPPORTED(cusparseLtMatmulAlgSetAttribute)
UNSUPPORTED(cusparseLtMatmulDescSetAttribute) UNSUPPORTED(cusparseLtMatmulDescriptorInit)
UNSUPPORTED(cusparseLtMatmulGetWorkspace) UNSUPPORTED(cusparseLtMatmulPlanDestroy)
UNSUPPORTED(cusparseLtMatmulPlanInit) UNSUPPORTED(cusparseLtMatmulSearch) UNSUPPORTED(cusparseLtSpMMACompress2)
UNSUPPORTED(cusparseLtSpMMACompressedSize2) UNSUPPORTED(cusparseLtStructuredDescriptorInit)
