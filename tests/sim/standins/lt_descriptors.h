// The objects behind cuBLASLt's descriptor handles, and how a matmul described by them becomes one simulated GEMM
// problem (gemm.h). Each object starts with a tag, so that a stale or foreign handle is refused rather than read.
#pragma once

#include <cublasLt.h>

#include <string>

#include "gemm.h"
#include "lt_attributes.h"

namespace standins::lt {

inline constexpr uint64_t kMatmulDescTag = 0x73696d2d6d64736b;  // "sim-mdsk"
inline constexpr uint64_t kLayoutTag = 0x73696d2d6c61796f;      // "sim-layo"
inline constexpr uint64_t kPreferenceTag = 0x73696d2d70726566;  // "sim-pref"

struct MatmulDesc {
  uint64_t tag = kMatmulDescTag;
  Attributes attributes;
  MatmulDesc();
};

struct Layout {
  uint64_t tag = kLayoutTag;
  Attributes attributes;
  Layout();
};

struct Preference {
  uint64_t tag = kPreferenceTag;
  Attributes attributes;
  Preference();
};

// The descriptor a handle names, or nullptr when it names none (null, destroyed, or of another kind).
MatmulDesc* matmul_desc(cublasLtMatmulDesc_t handle);
Layout* layout(cublasLtMatrixLayout_t handle);
Preference* preference(cublasLtMatmulPreference_t handle);

// The one algorithm the simulator offers, as a cublasLtMatmulAlgo_t: recognizable, id 0, its configuration
// attributes kept (they change nothing in the simulated kernel).
void init_algo(cublasLtMatmulAlgo_t* algo);
bool is_algo(const cublasLtMatmulAlgo_t* algo);
cublasStatus_t set_algo_config(cublasLtMatmulAlgo_t* algo, int attribute, const void* buffer, size_t size);
cublasStatus_t get_algo_config(const cublasLtMatmulAlgo_t* algo, int attribute, void* buffer, size_t size,
                               size_t* written);

// The simulated problem a matmul descriptor and four layouts describe, pointers and scalars left for the caller.
// CUBLAS_STATUS_INVALID_VALUE when the shapes conflict (cublasLt.h: "parameters ... in conflict or in an impossible
// configuration"), CUBLAS_STATUS_NOT_SUPPORTED with *unsupported saying what, when the configuration is one the
// simulator does not model (FP8 scaling, auxiliary epilogue outputs, non-column orders, pointer-array batches, ...).
cublasStatus_t plan(const MatmulDesc& desc, const Layout& a, const Layout& b, const Layout& c, const Layout& d,
                    gemm::Problem* problem, std::string* unsupported);

}  // namespace standins::lt
