// Modules and libraries loaded from a real cubin (nvcc -cubin of nvcc/loaded_kernels.cu): the kernels are the
// cubin's symbols with the parameter sizes of its tables; a kernel Triton compiled runs the Triton GPU IR found
// beside its cubin (the file's directory for cuModuleLoad, Triton's cache for an image in memory), its data and
// asserts computed from its real arguments. The IR here is written in the form Triton prints (a kernel scaling x by
// 2 and asserting x >= 0), for the nvcc kernel of the same name and parameters.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/fresh_process.h"

namespace {

namespace fs = std::filesystem;

const char* const kTtgir = R"ttgir(#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#loc = loc("/jobs/scale.py":3:0)
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @scale_rows(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c32_i32 = arith.constant 32 : i32 loc(#loc)
    %cst = arith.constant dense<0.000000e+00> : tensor<32xf32, #blocked> loc(#loc)
    %cst_0 = arith.constant dense<true> : tensor<32xi1, #blocked> loc(#loc)
    %cst_1 = arith.constant dense<2.000000e+00> : tensor<32xf32, #blocked> loc(#loc)
    %pid = tt.get_program_id x : i32 loc(#loc)
    %base = arith.muli %pid, %c32_i32 : i32 loc(#loc)
    %range = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #blocked> loc(#loc)
    %0 = tt.splat %base : i32 -> tensor<32xi32, #blocked> loc(#loc)
    %i = arith.addi %0, %range : tensor<32xi32, #blocked> loc(#loc)
    %1 = tt.splat %n : i32 -> tensor<32xi32, #blocked> loc(#loc)
    %mask = arith.cmpi slt, %i, %1 : tensor<32xi32, #blocked> loc(#loc)
    %2 = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>, #blocked> loc(#loc)
    %ptrs = tt.addptr %2, %i : tensor<32x!tt.ptr<f32>, #blocked>, tensor<32xi32, #blocked> loc(#loc)
    %v = tt.load %ptrs, %mask : tensor<32x!tt.ptr<f32>, #blocked> loc(#loc)
    %3 = arith.cmpf oge, %v, %cst : tensor<32xf32, #blocked> loc(#loc)
    %4 = arith.xori %mask, %cst_0 : tensor<32xi1, #blocked> loc(#loc)
    %5 = arith.ori %3, %4 : tensor<32xi1, #blocked> loc(#loc)
    tt.assert %5, "x must not be negative" : tensor<32xi1, #blocked> loc(#loc1)
    %6 = arith.mulf %v, %cst_1 : tensor<32xf32, #blocked> loc(#loc)
    tt.store %ptrs, %6, %mask : tensor<32x!tt.ptr<f32>, #blocked> loc(#loc)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/jobs/scale.py":7:4)
)ttgir";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A directory as Triton's cache keeps a kernel: NAME.cubin and NAME.ttgir side by side.
fs::path cache_entry(const fs::path& root) {
  fs::path entry = root / "7VMBNLQH6FWVR3F474ND3KMHJL6WX5W4ASUGF4SEEWKOGUW4KKNA";
  fs::create_directories(entry);
  fs::copy_file(CUBIN, entry / "scale_rows.cubin", fs::copy_options::overwrite_existing);
  write_text(entry / "scale_rows.ttgir", kTtgir);
  return entry;
}

// A directory of the test's own, removed with it.
struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/sim-cubin-XXXXXX";
    path = fs::path(mkdtemp(pattern));
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs scale_rows over 40 floats (two blocks of 32 threads, the last partly masked); returns them.
std::vector<float> scaled(CUfunction f, std::vector<float> x, CUresult* result) {
  CUdeviceptr d = 0;
  EXPECT_EQ(cuMemAlloc(&d, x.size() * sizeof(float)), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoD(d, x.data(), x.size() * sizeof(float)), CUDA_SUCCESS);
  int n = static_cast<int>(x.size());
  void* params[] = {&d, &n};
  EXPECT_EQ(cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  *result = cuCtxSynchronize();
  if (*result == CUDA_SUCCESS) {
    EXPECT_EQ(cuMemcpyDtoH(x.data(), d, x.size() * sizeof(float)), CUDA_SUCCESS);
  }
  return x;
}

std::vector<float> ramp(int n) {
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 0.5f * static_cast<float>(i);
  return x;
}

std::vector<float> doubled(std::vector<float> x) {
  for (float& v : x) v *= 2.0f;
  return x;
}

void start() {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice device = 0;
  CUcontext context = nullptr;
  ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
}

TEST(CubinLoading, ACubinsKernelsAreItsSymbolsAndRunAsNoOpsWithoutTritonIr) {
  FRESH_PROCESS({
    start();
    CUmodule module = nullptr;
    ASSERT_EQ(cuModuleLoad(&module, CUBIN), CUDA_SUCCESS);
    CUfunction scale = nullptr, mixed = nullptr, missing = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&scale, module, "scale_rows"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&mixed, module, "mixed_parameters"), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleGetFunction(&missing, module, "not_in_the_cubin"), CUDA_ERROR_NOT_FOUND);
    const char* name = nullptr;
    ASSERT_EQ(cuFuncGetName(&name, scale), CUDA_SUCCESS);
    EXPECT_STREQ(name, "scale_rows");
    CUresult result = CUDA_SUCCESS;
    EXPECT_EQ(scaled(scale, ramp(40), &result), ramp(40)) << "nothing beside the cubin to run: a no-op";
    EXPECT_EQ(result, CUDA_SUCCESS);
    EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleLoad(&module, "/no/such/file.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
  });
}

TEST(CubinLoading, TritonIrBesideTheFileRunsWithTheLaunchsArguments) {
  FRESH_PROCESS({
    start();
    TempDir dir;
    fs::path entry = cache_entry(dir.path);
    CUmodule module = nullptr;
    ASSERT_EQ(cuModuleLoad(&module, (entry / "scale_rows.cubin").c_str()), CUDA_SUCCESS);
    CUfunction scale = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&scale, module, "scale_rows"), CUDA_SUCCESS);
    CUresult result = CUDA_ERROR_UNKNOWN;
    EXPECT_EQ(scaled(scale, ramp(40), &result), doubled(ramp(40)));
    EXPECT_EQ(result, CUDA_SUCCESS);
  });
}

TEST(CubinLoading, AnImageInMemoryFindsItsIrInTritonsCacheByItsBytes) {
  FRESH_PROCESS({
    TempDir dir;
    fs::path root = dir.path;
    cache_entry(root);
    fs::create_directories(root / "another");  // an entry without the kernel is passed over
    setenv("TRITON_CACHE_DIR", root.c_str(), 1);
    start();
    std::string image = read_bytes(CUBIN);
    CUmodule module = nullptr;
    ASSERT_EQ(cuModuleLoadData(&module, image.data()), CUDA_SUCCESS);
    CUfunction scale = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&scale, module, "scale_rows"), CUDA_SUCCESS);
    CUresult result = CUDA_ERROR_UNKNOWN;
    EXPECT_EQ(scaled(scale, ramp(40), &result), doubled(ramp(40)));
    // The same through a library: its kernel, the kernel's function, and the CUkernel launched as itself.
    CUlibrary library = nullptr;
    ASSERT_EQ(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
    unsigned count = 0;
    ASSERT_EQ(cuLibraryGetKernelCount(&count, library), CUDA_SUCCESS);
    EXPECT_EQ(count, 2u);
    CUkernel kernel = nullptr;
    ASSERT_EQ(cuLibraryGetKernel(&kernel, library, "scale_rows"), CUDA_SUCCESS);
    CUfunction function = nullptr;
    ASSERT_EQ(cuKernelGetFunction(&function, kernel), CUDA_SUCCESS);
    EXPECT_EQ(scaled(function, ramp(40), &result), doubled(ramp(40)));
    EXPECT_EQ(scaled(reinterpret_cast<CUfunction>(kernel), ramp(40), &result), doubled(ramp(40)));
    EXPECT_EQ(cuLibraryUnload(library), CUDA_SUCCESS);
    // Another cubin image of the kernel (its bytes differ) has no IR in the cache: a no-op.
    std::string changed = image;
    changed[changed.size() - 1] ^= 0x5a;
    ASSERT_EQ(cuModuleLoadData(&module, changed.data()), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&scale, module, "scale_rows"), CUDA_SUCCESS);
    EXPECT_EQ(scaled(scale, ramp(40), &result), ramp(40));
  });
}

TEST(CubinLoading, ATritonAssertPrintsTritonsLineForTheThreadsHoldingTheBadElement) {
  FRESH_PROCESS({
    start();
    TempDir dir;
    fs::path entry = cache_entry(dir.path);
    CUmodule module = nullptr;
    ASSERT_EQ(cuModuleLoad(&module, (entry / "scale_rows.cubin").c_str()), CUDA_SUCCESS);
    CUfunction scale = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&scale, module, "scale_rows"), CUDA_SUCCESS);
    std::vector<float> x = ramp(40);
    x[37] = -1.0f;  // block 1 (elements 32..63), thread 5 in a layout of one element per thread
    simtest::StderrCapture captured;
    CUresult result = CUDA_SUCCESS;
    scaled(scale, x, &result);
    std::string err = captured.text();
    EXPECT_EQ(result, CUDA_ERROR_ASSERT);
    EXPECT_EQ(err, "/jobs/scale.py:7: unknown: block: [1,0,0], thread: [5,0,0] Assertion `x must not be negative` "
                   "failed.\n");
  });
}

}  // namespace
