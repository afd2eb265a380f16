// What the handles of the stand-in cuBLAS and cuBLASLt begin with. NVIDIA documents that a cublasHandle_t may be used,
// cast, wherever a cublasLtHandle_t is expected (cuBLAS documentation, cublasLtHandle_t), and PyTorch relies on it:
// it never calls cublasLtCreate. So libcublasLt accepts handles made by either library, told apart by this tag.
#pragma once

#include <cstdint>

namespace standins {

struct HandleTag {
  uint64_t value = 0;
};

inline constexpr uint64_t kBlasHandleTag = 0x73696d2d63626c73;    // "sim-cbls": a cublasHandle_t
inline constexpr uint64_t kBlasLtHandleTag = 0x73696d2d63626c74;  // "sim-cblt": a cublasLtHandle_t
inline constexpr uint64_t kDestroyedTag = 0;                     // written when a handle is destroyed

}  // namespace standins
