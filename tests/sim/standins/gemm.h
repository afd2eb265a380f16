// The simulated GEMM kernel that cuBLAS and cuBLASLt launch: D = act(alpha * op(A) op(B) + beta * C + bias), over a
// batch, for float, double, half and bfloat16 operands. One problem is one kernel launch, queued on a stream through
// the driver API under a cuBLAS-like kernel name (see kernel_name); its body computes the result for real when the
// simulated device runs it.
#pragma once

#include <cuda.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace standins::gemm {

// One operand after its transpose: element (i, j) of op(X) lies at data[i * row_stride + j * col_stride] (in
// elements). Column-major X with leading dimension ld is {1, ld}, its transpose {ld, 1}.
struct Operand {
  const void* data = nullptr;  // the first matrix, or (pointer_array) a device array of one pointer per matrix
  cudaDataType type = CUDA_R_32F;
  int64_t row_stride = 1;
  int64_t col_stride = 1;
  int64_t batch_stride = 0;  // elements from one matrix of a strided batch to the next
  bool pointer_array = false;
};

// alpha or beta: a value read when the call was made (host pointer mode), or a device pointer the kernel reads when
// it runs (device pointer mode), both in the scale type.
struct Scalar {
  double value = 0;
  const void* device = nullptr;
};

enum class Activation : uint8_t { none, relu, gelu };  // GELU: the tanh approximation cuBLASLt documents

// A problem as the kernel receives it (its one launch argument, copied at launch like any kernel argument).
struct Problem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  Operand a, b, c, d;  // op(A) is m x k, op(B) k x n, C and D m x n; C is read only when beta != 0
  cudaDataType scale_type = CUDA_R_32F;
  bool accumulate_in_double = false;  // CUBLAS_COMPUTE_64F*; every other compute type accumulates in float
  Scalar alpha, beta;
  Activation activation = Activation::none;
  const void* bias = nullptr;  // m elements per matrix, added to every column of D
  cudaDataType bias_type = CUDA_R_32F;
  int64_t bias_batch_stride = 0;
  char op_a = 'n', op_b = 'n';  // 'n', 't' or 'c' (the same as 't' for real types), for the kernel's name
  bool gemv = false;            // a matrix-vector product (n == 1): named like one
};

// The types the kernel loads and stores: CUDA_R_32F, CUDA_R_64F, CUDA_R_16F and CUDA_R_16BF.
bool modelled_type(cudaDataType type);
size_t type_size(cudaDataType type);

// A scalar in the scale type, read from host memory.
double read_scalar(const void* value, cudaDataType scale_type);

// The kernel's name, after the sm_90 kernels cuBLAS launches, e.g.
// "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel__5x_cublas"
// (operand types, C and D types, accumulator, the transposes of A and B, then the tile); Lt epilogues add
// "_bias_<type>", "_relu" or "_gelu"; matrix-vector products are "gemv2N_kernel_<types>" or "gemv2T_kernel_<types>".
// Modelled on the shape of the names profilers show for cuBLAS 12/13 kernels, not copied from any list.
std::string kernel_name(const Problem& problem);

// Queues the problem's kernel on stream with cuLaunchKernel, in the calling thread's context (bind_context). The
// first time a name is launched in a context, the kernel is registered with the simulator and obtained as real
// cuBLAS obtains its kernels: cuModuleLoadData, then cuModuleGetFunction. Nothing is queued for an empty problem.
CUresult launch(const Problem& problem, CUstream stream);

}  // namespace standins::gemm
