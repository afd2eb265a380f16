// The NVIDIA library stand-ins on the simulator: cuBLAS and cuBLASLt GEMMs run as one named kernel launched through
// the driver on the stream they were given (seen by a CUPTI subscriber, results read back after a stream sync), their
// documented argument checks, and what an entry point the simulator does not model does.
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cupti.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "standins/half_float.h"
#include "support/fresh_process.h"

// cuDNN and NCCL headers are not part of the toolkit: the few entry points used here, as their libraries export them.
extern "C" {
size_t cudnnGetVersion(void);
int cudnnCreate(void** handle);
const char* cudnnGetErrorString(int status);
int ncclGetVersion(int* version);
int ncclGetUniqueId(void* id);
const char* ncclGetLastError(void* comm);
}

namespace {

struct Launch {
  std::string symbol;
  CUstream stream;
  unsigned grid_x, grid_z;
};

std::mutex launches_mutex;
std::vector<Launch> launches;

void CUPTIAPI record_launch(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
      cb->callbackSite != CUPTI_API_ENTER)
    return;
  const auto* params = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
  std::lock_guard lock(launches_mutex);
  launches.push_back({cb->symbolName != nullptr ? cb->symbolName : "", params->hStream, params->gridDimX,
                      params->gridDimZ});
}

// Device memory holding values (the simulated device's memory is host-addressable only through copies here, as on a
// GPU).
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& values) : size_(values.size()) {
    EXPECT_EQ(cudaMalloc(&data_, size_ * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, values.data(), size_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return static_cast<T*>(data_); }
  std::vector<T> read() const {
    std::vector<T> out(size_);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* data_ = nullptr;
  size_t size_;
};

// Column-major reference: C = alpha op(A) op(B) + beta C.
std::vector<double> reference_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const std::vector<float>& a,
                                   int lda, const std::vector<float>& b, int ldb, double beta,
                                   const std::vector<float>& c, int ldc) {
  std::vector<double> out(c.begin(), c.end());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += double(ta ? a[l + i * lda] : a[i + l * lda]) * double(tb ? b[j + l * ldb] : b[l + j * ldb]);
      out[i + j * ldc] = alpha * sum + beta * c[i + j * ldc];
    }
  return out;
}

std::vector<float> counting(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float(int(i % 7) - 3);
  return v;
}

class Standins : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      std::lock_guard lock(launches_mutex);
      launches.clear();
    }
    ASSERT_EQ(cuptiSubscribe(&subscriber_, record_launch, nullptr), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
              CUPTI_SUCCESS);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cublasCreate_v2(&handle_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cublasDestroy_v2(handle_), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    EXPECT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
  }
  static std::vector<Launch> seen() {
    std::lock_guard lock(launches_mutex);
    return launches;
  }

  CUpti_SubscriberHandle subscriber_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

TEST_F(Standins, SgemmRunsOneNamedKernelOnTheHandlesStream) {
  const int m = 5, n = 4, k = 3, lda = 3, ldb = 3, ldc = 6;  // op(A) = A^T: A is k x m
  std::vector<float> a = counting(lda * m, 0.5f), b = counting(ldb * n, 1.0f), c = counting(ldc * n, 2.0f);
  DeviceArray<float> da(a), db(b), dc(c);
  const float alpha = 2.0f, beta = 0.5f;
  ASSERT_EQ(cublasSetStream_v2(handle_, stream_), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da.get(), lda, db.get(), ldb, &beta,
                           dc.get(), ldc),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);

  std::vector<double> expected = reference_gemm(true, false, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  std::vector<float> got = dc.read();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i)
      EXPECT_FLOAT_EQ(got[i + j * ldc], i < m ? float(expected[i + j * ldc]) : c[i + j * ldc]) << i << "," << j;

  std::vector<Launch> l = seen();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].symbol,
            "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel__5x_cublas");
  EXPECT_EQ(l[0].stream, stream_);
}

TEST_F(Standins, DefaultStreamIsTheLegacyStreamAndDeviceScalarsAreReadByTheKernel) {
  const int m = 3, n = 2, k = 4;
  std::vector<double> a(m * k), b(k * n), c(m * n, 1.0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = double(i) - 2;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25 * double(i);
  DeviceArray<double> da(a), db(b), dc(c), scalars(std::vector<double>{3.0, -1.0});
  ASSERT_EQ(cublasSetPointerMode_v2(handle_, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasDgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, scalars.get(), da.get(), m, db.get(), k,
                           scalars.get() + 1, dc.get(), m),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<double> got = dc.read();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l) sum += a[i + l * m] * b[l + j * k];
      EXPECT_DOUBLE_EQ(got[i + j * m], 3.0 * sum - 1.0);
    }
  std::vector<Launch> l = seen();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].stream, nullptr);
  EXPECT_NE(l[0].symbol.find("f64f64_f64f64_f64_nn"), std::string::npos) << l[0].symbol;
}

TEST_F(Standins, StridedBatchedHalfInputsAccumulateIntoFloat) {
  const int m = 2, n = 2, k = 3, batch = 3;
  std::vector<float> a = counting(m * k * batch, 0.5f), b = counting(k * n * batch, 0.25f);
  std::vector<uint16_t> ha, hb;
  for (float x : a) ha.push_back(standins::float_to_half(x));
  for (float x : b) hb.push_back(standins::float_to_half(x));
  DeviceArray<uint16_t> da(ha), db(hb);
  DeviceArray<float> dc(std::vector<float>(m * n * batch, 0.0f));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_EQ(cublasSetStream_v2(handle_, stream_), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGemmStridedBatchedEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da.get(), CUDA_R_16F, m,
                                       m * k, db.get(), CUDA_R_16F, k, k * n, &beta, dc.get(), CUDA_R_32F, m, m * n,
                                       batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<float> got = dc.read();
  for (int e = 0; e < batch; ++e)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        float sum = 0;
        for (int l = 0; l < k; ++l) sum += a[e * m * k + i + l * m] * b[e * k * n + l + j * k];
        EXPECT_FLOAT_EQ(got[e * m * n + i + j * m], sum);
      }
  std::vector<Launch> l = seen();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].grid_z, unsigned(batch));
  EXPECT_NE(l[0].symbol.find("f16f16_f32f32_f32"), std::string::npos) << l[0].symbol;
}

TEST_F(Standins, LtMatmulWithBiasOnACublasHandleRunsOnTheGivenStream) {
  // torch passes its cuBLAS handle, cast, as the cuBLASLt handle.
  auto lt = reinterpret_cast<cublasLtHandle_t>(handle_);
  const int m = 4, n = 3, k = 2;
  std::vector<float> a = counting(m * k, 1.0f), b = counting(k * n, 0.5f), bias{1, 2, 3, 4};
  DeviceArray<float> da(a), db(b), dbias(bias), dd(std::vector<float>(m * n, -7.0f));

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  const float* bias_pointer = dbias.get();
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer,
                                           sizeof bias_pointer),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  uint64_t workspace = 1 << 20;
  ASSERT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                 sizeof workspace),
            CUBLAS_STATUS_SUCCESS);

  cublasLtMatmulHeuristicResult_t results[4] = {};
  int count = -1;
  ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 4, results, &count),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(count, 1);
  EXPECT_EQ(results[0].state, CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(results[0].workspaceSize, 0u);

  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_EQ(cublasLtMatmul(lt, desc, &alpha, da.get(), la, db.get(), lb, &beta, dd.get(), ld, dd.get(), ld,
                           &results[0].algo, nullptr, 0, stream_),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<float> got = dd.read();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float sum = bias[i];
      for (int l = 0; l < k; ++l) sum += a[i + l * m] * b[l + j * k];
      EXPECT_FLOAT_EQ(got[i + j * m], std::max(sum, 0.0f)) << i << "," << j;
    }
  std::vector<Launch> l = seen();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].stream, stream_);
  EXPECT_EQ(l[0].symbol,
            "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_bias_f32_relu"
            "_execute_kernel__5x_cublas");

  // Every attribute reads back with its documented size.
  size_t needed = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, nullptr, 0, &needed),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(needed, sizeof(uint32_t));
  cublasLtEpilogue_t read_back{};
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &read_back, sizeof read_back,
                                           nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(read_back, CUBLASLT_EPILOGUE_RELU_BIAS);

  EXPECT_EQ(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(ld), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(lb), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(la), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
}

TEST_F(Standins, BadArgumentsGetTheDocumentedStatusAndLaunchNothing) {
  float x = 0;
  const float one = 1.0f;
  EXPECT_EQ(cublasSgemm_v2(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, &x, 1, &x, 1, &one, &x, 1),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1, &one, &x, 1, &x, 1, &one, &x, 1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm_v2(handle_, static_cast<cublasOperation_t>(7), CUBLAS_OP_N, 1, 1, 1, &one, &x, 1, &x, 1,
                           &one, &x, 1),
            CUBLAS_STATUS_INVALID_VALUE);
  // lda must cover op(A)'s rows as stored: m for N, k for T.
  EXPECT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 2, &one, &x, 3, &x, 2, &one, &x, 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_T, CUBLAS_OP_N, 4, 1, 2, &one, &x, 1, &x, 2, &one, &x, 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 1, 2, nullptr, &x, 4, &x, 2, &one, &x, 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, &x, 1, 1, &x, 1, 1, &one,
                                      &x, 1, 1, -1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, &x, CUDA_C_32F, 1, &x, CUDA_C_32F, 1, &one,
                         &x, CUDA_C_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasSetWorkspace_v2(handle_, reinterpret_cast<void*>(uintptr_t{4096 + 8}), 1024),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSetPointerMode_v2(handle_, static_cast<cublasPointerMode_t>(5)), CUBLAS_STATUS_INVALID_VALUE);
  // An empty product is a success that launches nothing.
  EXPECT_EQ(cublasSgemm_v2(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 0, 3, 3, &one, &x, 1, &x, 3, &one, &x, 1),
            CUBLAS_STATUS_SUCCESS);

  auto lt = reinterpret_cast<cublasLtHandle_t>(handle_);
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 4, 2, 4), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 3, 3, 3), CUBLAS_STATUS_SUCCESS);  // k 3, not 2
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  int64_t ld = 0;
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof(int32_t)),
            CUBLAS_STATUS_INVALID_VALUE);  // the size is not the attribute's
  cublasLtMatmulHeuristicResult_t result{};
  int count = -1;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, la, la, la, pref, 0, &result, &count),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, la, la, pref, 1, &result, &count),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(count, 0);
  cublasLtEpilogue_t gradient = CUBLASLT_EPILOGUE_BGRADB;
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &gradient, sizeof gradient),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t square = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&square, CUDA_R_32F, 4, 4, 4), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, square, square, square, square, pref, 1, &result, &count),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(nullptr, desc, square, square, square, square, pref, 1, &result, &count),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(square), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(lb), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(la), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);

  EXPECT_TRUE(seen().empty());
}

TEST(StandinsUnmodelled, ReturnTheirLibrarysStatusAndSayItOnce) {
  FRESH_PROCESS({
    simtest::StderrCapture err;
    cufftHandle plan = 0;
    EXPECT_EQ(cufftCreate(&plan), CUFFT_NOT_SUPPORTED);
    EXPECT_EQ(cufftCreate(&plan), CUFFT_NOT_SUPPORTED);
    cublasHandle_t handle = nullptr;
    ASSERT_EQ(cublasCreate_v2(&handle), CUBLAS_STATUS_SUCCESS);
    float result = 0;
    EXPECT_EQ(cublasSdot_v2(handle, 0, nullptr, 1, nullptr, 1, &result), CUBLAS_STATUS_NOT_SUPPORTED);
    EXPECT_EQ(cublasDestroy_v2(handle), CUBLAS_STATUS_SUCCESS);
    void* cudnn = nullptr;
    EXPECT_EQ(cudnnCreate(&cudnn), 3000);  // CUDNN_STATUS_NOT_SUPPORTED
    EXPECT_STREQ(cudnnGetErrorString(3000), "CUDNN_STATUS_NOT_SUPPORTED");
    char id[128];
    EXPECT_EQ(ncclGetUniqueId(id), 5);  // ncclInvalidUsage
    EXPECT_STREQ(ncclGetLastError(nullptr), "simcuda: ncclGetUniqueId is not supported by the simulator");
    EXPECT_EQ(err.text(),
              "simcuda: cufftCreate is not supported by the simulator\n"
              "simcuda: cublasSdot_v2 is not supported by the simulator\n"
              "simcuda: cudnnCreate is not supported by the simulator\n"
              "simcuda: ncclGetUniqueId is not supported by the simulator\n");
  });
}

TEST(StandinsUnmodelled, VersionQueriesAnswer) {
  EXPECT_EQ(cudnnGetVersion(), 92600u);
  int nccl = 0;
  EXPECT_EQ(ncclGetVersion(&nccl), 0);
  EXPECT_EQ(nccl, 23007);
  int version = 0;
  EXPECT_EQ(cublasGetVersion_v2(nullptr, &version), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(version, CUBLAS_VERSION);
  EXPECT_EQ(cublasLtGetVersion(), size_t{CUBLAS_VERSION});
  int major = 0, minor = -1;
  EXPECT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ(major * 1000 + minor * 10, CUDA_VERSION);
}

TEST(StandinsUnmodelled, NvrtcCompilationFailsWithTheReasonInItsLog) {
  FRESH_PROCESS({
    simtest::StderrCapture err;
    nvrtcProgram program = nullptr;
    ASSERT_EQ(nvrtcCreateProgram(&program, "__global__ void k() {}", "k.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
    EXPECT_EQ(nvrtcCompileProgram(program, 0, nullptr), NVRTC_ERROR_COMPILATION);
    size_t size = 0;
    ASSERT_EQ(nvrtcGetProgramLogSize(program, &size), NVRTC_SUCCESS);
    std::string log(size, '\0');
    ASSERT_EQ(nvrtcGetProgramLog(program, log.data()), NVRTC_SUCCESS);
    EXPECT_EQ(log.c_str(), std::string("k.cu: simcuda: nvrtcCompileProgram is not supported by the simulator\n"));
    EXPECT_EQ(nvrtcDestroyProgram(&program), NVRTC_SUCCESS);
    EXPECT_EQ(err.text(), "simcuda: nvrtcCompileProgram is not supported by the simulator\n");
  });
}

}  // namespace
