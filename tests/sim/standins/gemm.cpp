#include "gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "../simcuda.h"
#include "device_context.h"
#include "half_float.h"

namespace standins::gemm {
namespace {

// ---- the device side: what the kernel computes -------------------------------------------------------------------

template <typename Acc>
Acc load(const void* base, cudaDataType type, int64_t index) {
  switch (type) {
    case CUDA_R_32F: return static_cast<Acc>(static_cast<const float*>(base)[index]);
    case CUDA_R_64F: return static_cast<Acc>(static_cast<const double*>(base)[index]);
    case CUDA_R_16F: return static_cast<Acc>(half_to_float(static_cast<const uint16_t*>(base)[index]));
    case CUDA_R_16BF: return static_cast<Acc>(bf16_to_float(static_cast<const uint16_t*>(base)[index]));
    default: return Acc{};  // unreachable: problems are checked for modelled types before launch
  }
}

template <typename Acc>
void store(void* base, cudaDataType type, int64_t index, Acc value) {
  switch (type) {
    case CUDA_R_32F: static_cast<float*>(base)[index] = static_cast<float>(value); break;
    case CUDA_R_64F: static_cast<double*>(base)[index] = static_cast<double>(value); break;
    case CUDA_R_16F: static_cast<uint16_t*>(base)[index] = float_to_half(static_cast<float>(value)); break;
    case CUDA_R_16BF: static_cast<uint16_t*>(base)[index] = float_to_bf16(static_cast<float>(value)); break;
    default: break;
  }
}

// The matrix of batch entry `entry`.
const void* matrix(const Operand& operand, int64_t entry) {
  if (operand.pointer_array) return static_cast<const void* const*>(operand.data)[entry];
  return static_cast<const char*>(operand.data) +
         static_cast<ptrdiff_t>(entry * operand.batch_stride * static_cast<int64_t>(type_size(operand.type)));
}

template <typename Acc>
Acc scalar(const Scalar& s, cudaDataType scale_type) {
  return s.device != nullptr ? load<Acc>(s.device, scale_type, 0) : static_cast<Acc>(s.value);
}

template <typename Acc>
Acc activate(Activation activation, Acc x) {
  switch (activation) {
    case Activation::relu: return x > Acc{0} ? x : Acc{0};
    case Activation::gelu: {
      const Acc c = static_cast<Acc>(0.7978845608028654);  // sqrt(2 / pi)
      return static_cast<Acc>(0.5) * x * (Acc{1} + std::tanh(c * (x + static_cast<Acc>(0.044715) * x * x * x)));
    }
    case Activation::none: break;
  }
  return x;
}

// Column by column: op(A), converted once per matrix, times one column of op(B), then the epilogue. When alpha is
// zero A and B are not read, and when beta is zero C is not read, as BLAS specifies.
template <typename Acc>
void compute(const Problem& p) {
  const Acc alpha = scalar<Acc>(p.alpha, p.scale_type);
  const Acc beta = scalar<Acc>(p.beta, p.scale_type);
  const auto m = p.m, n = p.n, k = p.k;
  std::vector<Acc> a(static_cast<size_t>(alpha != Acc{0} ? m * k : 0));
  std::vector<Acc> column(static_cast<size_t>(m));
  for (int64_t entry = 0; entry < p.batch; ++entry) {
    const void* A = alpha != Acc{0} ? matrix(p.a, entry) : nullptr;
    const void* B = alpha != Acc{0} ? matrix(p.b, entry) : nullptr;
    const void* C = beta != Acc{0} ? matrix(p.c, entry) : nullptr;
    void* D = const_cast<void*>(matrix(p.d, entry));
    for (int64_t l = 0; A != nullptr && l < k; ++l)
      for (int64_t i = 0; i < m; ++i) a[i + l * m] = load<Acc>(A, p.a.type, i * p.a.row_stride + l * p.a.col_stride);
    for (int64_t j = 0; j < n; ++j) {
      std::fill(column.begin(), column.end(), Acc{0});
      for (int64_t l = 0; B != nullptr && l < k; ++l) {
        const Acc b = load<Acc>(B, p.b.type, l * p.b.row_stride + j * p.b.col_stride);
        const Acc* a_column = a.data() + l * m;
        for (int64_t i = 0; i < m; ++i) column[i] += a_column[i] * b;
      }
      for (int64_t i = 0; i < m; ++i) {
        Acc v = alpha * column[i];
        if (C != nullptr) v += beta * load<Acc>(C, p.c.type, i * p.c.row_stride + j * p.c.col_stride);
        if (p.bias != nullptr) v += load<Acc>(p.bias, p.bias_type, entry * p.bias_batch_stride + i);
        store<Acc>(D, p.d.type, i * p.d.row_stride + j * p.d.col_stride, activate(p.activation, v));
      }
    }
  }
}

// Simulated time on the device: a few microseconds of launch latency plus the arithmetic at 50 TFLOP/s, at most
// 20 ms, so that work queues behind a GEMM as it would on a GPU.
unsigned simulated_us(const Problem& p) {
  double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
                 static_cast<double>(p.batch);
  return static_cast<unsigned>(std::min(5.0 + flops / 5e7, 20000.0));
}

void gemm_body(void** args, dim3, dim3) {
  Problem p;
  std::memcpy(&p, args[0], sizeof p);
  if (p.accumulate_in_double)
    compute<double>(p);
  else
    compute<float>(p);
  simcuda_sleep_us(simulated_us(p));
}

// ---- the host side: naming, loading and launching ----------------------------------------------------------------

const char* type_code(cudaDataType type) {
  switch (type) {
    case CUDA_R_32F: return "f32";
    case CUDA_R_64F: return "f64";
    case CUDA_R_16F: return "f16";
    case CUDA_R_16BF: return "bf16";
    default: return "x";
  }
}

// The image handed to cuModuleLoadData: the simulated driver does not interpret module images, it finds functions
// among the registered kernels by name.
constexpr char kModuleImage[] = "simcuda stand-in cuBLAS kernels";

// Functions by (context, kernel name); a context's module is loaded once, as cuBLAS loads its kernels once.
CUresult function_for(const std::string& name, CUfunction* function) {
  static std::mutex mutex;
  static auto* modules = new std::map<CUcontext, CUmodule>;
  static auto* functions = new std::map<std::pair<CUcontext, std::string>, CUfunction>;
  CUcontext context = nullptr;
  if (CUresult r = cuCtxGetCurrent(&context); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(mutex);
  if (auto it = functions->find({context, name}); it != functions->end()) {
    *function = it->second;
    return CUDA_SUCCESS;
  }
  CUmodule& module = (*modules)[context];
  if (module == nullptr) {
    if (CUresult r = cuModuleLoadData(&module, kModuleImage); r != CUDA_SUCCESS) {
      modules->erase(context);
      return r;
    }
  }
  const size_t param_size = sizeof(Problem);
  simcuda_register_kernel_with_params(nullptr, name.c_str(), gemm_body, 1, &param_size);
  if (CUresult r = cuModuleGetFunction(function, module, name.c_str()); r != CUDA_SUCCESS) return r;
  functions->emplace(std::make_pair(context, name), *function);
  return CUDA_SUCCESS;
}

unsigned tiles(int64_t extent, unsigned limit) {
  return static_cast<unsigned>(std::clamp<int64_t>((extent + 127) / 128, 1, limit));
}

}  // namespace

bool modelled_type(cudaDataType type) {
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

size_t type_size(cudaDataType type) {
  switch (type) {
    case CUDA_R_64F: return 8;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    default: return 4;
  }
}

double read_scalar(const void* value, cudaDataType scale_type) { return load<double>(value, scale_type, 0); }

std::string kernel_name(const Problem& p) {
  std::string types = std::string(type_code(p.a.type)) + type_code(p.b.type) + "_" + type_code(p.c.type) +
                      type_code(p.d.type) + "_" + (p.accumulate_in_double ? "f64" : "f32");
  if (p.gemv) return std::string(p.op_a == 'n' ? "gemv2N_kernel_" : "gemv2T_kernel_") + types;
  std::string name = "sm90_xmma_gemm_" + types + "_" + p.op_a + p.op_b +
                     "_n_tilesize128x128x32_warpgroupsize1x1x1";
  if (p.bias != nullptr) name += std::string("_bias_") + type_code(p.bias_type);
  if (p.activation == Activation::relu) name += "_relu";
  if (p.activation == Activation::gelu) name += "_gelu";
  return name + "_execute_kernel__5x_cublas";
}

CUresult launch(const Problem& problem, CUstream stream) {
  if (problem.m == 0 || problem.n == 0 || problem.batch == 0) return CUDA_SUCCESS;
  if (CUresult r = bind_context(); r != CUDA_SUCCESS) return r;
  CUfunction function = nullptr;
  if (CUresult r = function_for(kernel_name(problem), &function); r != CUDA_SUCCESS) return r;
  Problem argument = problem;
  void* params[] = {&argument};
  // A 128 x 128 tile per CTA of two warpgroups, the batch along z.
  return cuLaunchKernel(function, tiles(problem.m, 0x7fffffffu), tiles(problem.n, 65535),
                        static_cast<unsigned>(std::min<int64_t>(problem.batch, 65535)), 256, 1, 1, 0, stream, params,
                        nullptr);
}

}  // namespace standins::gemm
