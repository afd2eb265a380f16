// The TTGIR interpreter on kernels Triton 3.9 compiled (fixtures/, written by fixtures/make_fixtures.py) and on a
// few hand-written modules. Expected results are computed here in C++ from the inputs; expected failing threads
// from the layouts' parameters (element -> thread by the BlockedEncodingAttr formula), never from the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "triton_kernel.h"

namespace {

using simtriton::AssertFailure;
using simtriton::DeviceHooks;
using simtriton::TritonKernel;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixture(const std::string& name) { return read_text(std::string(SIM_TRITON_FIXTURES) + "/" + name + ".ttgir"); }

// The line of make_fixtures.py holding `needle`: where the tt.assert's location must point.
unsigned script_line(const std::string& needle) {
  std::istringstream script(read_text(std::string(SIM_TRITON_FIXTURES) + "/make_fixtures.py"));
  std::string line;
  for (unsigned number = 1; std::getline(script, line); ++number)
    if (line.find(needle) != std::string::npos) return number;
  return 0;
}

std::unique_ptr<TritonKernel> load(const std::string& text) {
  std::string error;
  auto kernel = TritonKernel::parse(text, &error);
  EXPECT_NE(kernel, nullptr) << error;
  return kernel;
}

// Device memory: the buffers a test registers, nothing else.
struct Device {
  std::vector<std::pair<const char*, size_t>> buffers;
  std::vector<AssertFailure> failures;
  std::vector<int> faults;

  template <class T>
  T* add(std::vector<T>& buffer) {
    buffers.emplace_back(reinterpret_cast<const char*>(buffer.data()), buffer.size() * sizeof(T));
    return buffer.data();
  }
  DeviceHooks hooks() {
    DeviceHooks h;
    h.accessible = [this](const void* address, size_t bytes) {
      auto p = static_cast<const char*>(address);
      for (const auto& [base, size] : buffers)
        if (p >= base && p + bytes <= base + size) return true;
      return false;
    };
    h.assert_failed = [this](const AssertFailure& failure) { failures.push_back(failure); };
    h.fault = [this](int error) { faults.push_back(error); };
    return h;
  }
  std::vector<unsigned> failed_threads() const {
    std::vector<unsigned> threads;
    for (const auto& f : failures) threads.push_back(f.thread.x);
    return threads;
  }
};

// Thread holding element `i` of a 1-D #blocked<{sizePerThread=[s], threadsPerWarp=[32], warpsPerCTA=[w]}> tensor
// at least as large as its tile s*32*w (larger tensors repeat the tile).
unsigned blocked_1d_thread(unsigned i, unsigned s, unsigned warps) { return (i % (s * 32 * warps)) / s; }

// Exact IEEE binary16 / bfloat16 encodings of floats (test-side, independent of the interpreter's).
uint16_t to_half(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint32_t sign = (x >> 16) & 0x8000;
  float a = std::fabs(value);
  if (std::isnan(value)) return 0x7e00;
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 6.103515625e-05f) {  // subnormal: multiples of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  int e;
  float m = std::frexp(a, &e);                              // a = m * 2^e, m in [0.5, 1)
  auto frac = static_cast<uint32_t>(std::nearbyint((m * 2 - 1) * 1024));  // round to nearest even
  uint32_t bits = (static_cast<uint32_t>(e + 14) << 10) + frac;  // a carry from frac bumps the exponent
  return static_cast<uint16_t>(sign | bits);
}
float from_half(uint16_t h) {
  int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  float v = e == 0 ? std::ldexp(static_cast<float>(f), -24)
            : e == 31 ? (f ? NAN : INFINITY)
                      : std::ldexp(static_cast<float>(f + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t to_bf16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
float from_bf16(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

TEST(TritonKernel, ParsesEveryFixture) {
  struct Expect {
    const char* name;
    std::vector<size_t> sizes;
    unsigned threads;
  };
  for (const Expect& e : std::vector<Expect>{{"poi_embedding_gather", {8, 8, 8, 4}, 128},
                                             {"per_reduction_sum_max", {8, 8, 8, 4, 4}, 128},
                                             {"red_looped_sum", {8, 8, 4, 4}, 128},
                                             {"nll_loss_forward", {8, 8, 8, 4}, 64},
                                             {"per_log_softmax", {8, 8, 4, 4}, 64},
                                             {"argmax_rows", {8, 8, 4, 4}, 32},
                                             {"grid2d_convert", {8, 8, 8, 4, 4}, 32},
                                             {"histogram_atomic", {8, 8, 4}, 32},
                                             {"per_cumsum_rows", {8, 8, 8, 4, 4}, 32}}) {
    auto kernel = load(fixture(e.name));
    ASSERT_NE(kernel, nullptr) << e.name;
    EXPECT_EQ(kernel->name(), e.name);
    EXPECT_EQ(kernel->parameter_sizes(), e.sizes) << e.name;
    EXPECT_EQ(kernel->threads_per_block(), e.threads) << e.name;
  }
}

// out[x] = 2 * table[idx[x / 16]][x % 16], 200 elements: two programs of 128, the second partly masked.
struct EmbeddingCase {
  int n = 200;
  std::vector<int64_t> idx = std::vector<int64_t>(13);  // exactly the rows x < 200 use: a masked read would fault
  std::vector<float> table = std::vector<float>(64 * 16);
  std::vector<float> out = std::vector<float>(200, -7.0f);
  EmbeddingCase() {
    for (size_t r = 0; r < idx.size(); ++r) idx[r] = static_cast<int64_t>((r * 37) % 64);
    for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i) * 0.25f - 3.0f;
  }
  bool run(Device& device, std::string* error, float* table_ptr = nullptr) {
    auto kernel = load(fixture("poi_embedding_gather"));
    int64_t* p0 = device.add(idx);
    float* p1 = table_ptr ? table_ptr : device.add(table);
    float* p2 = device.add(out);
    void* args[] = {&p0, &p1, &p2, &n};
    return kernel->run(args, dim3(2, 1, 1), device.hooks(), error);
  }
};

TEST(TritonKernel, EmbeddingGatherComputesAndNeverReadsMaskedLanes) {
  EmbeddingCase c;
  Device device;
  std::string error;
  ASSERT_TRUE(c.run(device, &error)) << error;
  EXPECT_TRUE(device.failures.empty());
  EXPECT_TRUE(device.faults.empty());
  for (int x = 0; x < c.n; ++x) EXPECT_EQ(c.out[x], 2.0f * c.table[c.idx[x / 16] * 16 + x % 16]) << x;
}

TEST(TritonKernel, EmbeddingIndexOutOfBoundsFailsTheThreadsHoldingIt) {
  EmbeddingCase c;
  c.idx[5] = 64;   // elements 80..95, program 0
  c.idx[10] = -1;  // elements 160..175, program 1: never reached, the kernel stops after program 0
  Device device;
  std::string error;
  ASSERT_TRUE(c.run(device, &error)) << error;
  std::vector<unsigned> expected;
  for (unsigned x = 80; x < 96; ++x) expected.push_back(blocked_1d_thread(x, 1, 4));
  EXPECT_EQ(device.failed_threads(), expected);
  for (const auto& f : device.failures) {
    EXPECT_EQ(f.file, "make_fixtures.py");
    EXPECT_EQ(f.line, script_line("tl.device_assert(((0 <= tmp0) & (tmp0 < 64))"));
    EXPECT_EQ(f.message, "index out of bounds: 0 <= tmp0 < 64");
    EXPECT_EQ(f.block.x, 0u);
    EXPECT_EQ(f.thread.y, 0u);
  }
  // The store follows the assert: program 0 wrote nothing, program 1 never ran.
  for (float v : c.out) EXPECT_EQ(v, -7.0f);
}

TEST(TritonKernel, LoadOutsideDeviceMemoryFaults) {
  EmbeddingCase c;
  std::vector<float> elsewhere(64 * 16);  // not registered with the device
  Device device;
  std::string error;
  ASSERT_TRUE(c.run(device, &error, elsewhere.data())) << error;
  EXPECT_EQ(device.faults, std::vector<int>{700});
  EXPECT_TRUE(device.failures.empty());
  for (float v : c.out) EXPECT_EQ(v, -7.0f);
}

TEST(TritonKernel, PersistentReductionSumAndMax) {
  const int rows = 10, cols = 50;
  std::vector<uint16_t> in(rows * cols);
  std::vector<float> values(rows * cols);
  for (int i = 0; i < rows * cols; ++i) {
    values[i] = static_cast<float>((i * 7919) % 97 - 48) * 0.125f;  // exact in f16
    in[i] = to_half(values[i]);
  }
  std::vector<float> sums(rows, -1.0f);
  std::vector<uint16_t> maxes(rows, 0);
  Device device;
  auto kernel = load(fixture("per_reduction_sum_max"));
  uint16_t* p0 = device.add(in);
  float* p1 = device.add(sums);
  uint16_t* p2 = device.add(maxes);
  int xnumel = rows, rnumel = cols;
  void* args[] = {&p0, &p1, &p2, &xnumel, &rnumel};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  EXPECT_TRUE(device.failures.empty());
  EXPECT_TRUE(device.faults.empty());
  for (int r = 0; r < rows; ++r) {
    float sum = 0, max = -INFINITY;
    for (int c = 0; c < cols; ++c) {
      sum += values[r * cols + c];
      max = std::max(max, values[r * cols + c]);
    }
    EXPECT_EQ(sums[r], sum) << r;  // multiples of 1/8 below 2^20: every order sums exactly
    EXPECT_EQ(maxes[r], to_bf16(max)) << r;
  }
}

TEST(TritonKernel, LoopedReductionMean) {
  const int rows = 6, cols = 70;  // three trips of RBLOCK 32, the last masked
  std::vector<int32_t> in(rows * cols);
  for (int i = 0; i < rows * cols; ++i) in[i] = (i % 2 ? 1 : -1) * (i * 1000003 % 2000000);
  std::vector<float> out(rows, 0.0f);
  Device device;
  auto kernel = load(fixture("red_looped_sum"));
  int32_t* p0 = device.add(in);
  float* p1 = device.add(out);
  int xnumel = rows, rnumel = cols;
  void* args[] = {&p0, &p1, &xnumel, &rnumel};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  EXPECT_TRUE(device.faults.empty());
  for (int r = 0; r < rows; ++r) {
    int64_t sum = 0;
    for (int c = 0; c < cols; ++c) sum += in[r * cols + c];
    EXPECT_EQ(out[r], static_cast<float>(sum) / 70.0f) << r;
  }
}

struct NllCase {
  int n = 100;
  std::vector<int64_t> labels = std::vector<int64_t>(100);
  std::vector<float> logp = std::vector<float>(100 * 10);
  std::vector<float> out = std::vector<float>(100, 99.0f);
  NllCase() {
    for (int i = 0; i < n; ++i) labels[i] = i % 7 == 3 ? -100 : (i * 3) % 10;
    for (size_t i = 0; i < logp.size(); ++i) logp[i] = -0.01f * static_cast<float>(i);
  }
  bool run(Device& device, std::string* error) {
    auto kernel = load(fixture("nll_loss_forward"));
    int64_t* p0 = device.add(labels);
    float* p1 = device.add(logp);
    float* p2 = device.add(out);
    void* args[] = {&p0, &p1, &p2, &n};
    return kernel->run(args, dim3(2, 1, 1), device.hooks(), error);
  }
};

TEST(TritonKernel, NllLossGathersTheLabelColumn) {
  NllCase c;
  Device device;
  std::string error;
  ASSERT_TRUE(c.run(device, &error)) << error;
  EXPECT_TRUE(device.failures.empty());
  for (int i = 0; i < c.n; ++i) {
    float expected = c.labels[i] == -100 ? 0.0f : -c.logp[i * 10 + c.labels[i]];
    EXPECT_EQ(c.out[i], expected) << i;
  }
}

TEST(TritonKernel, NllLossLabelOutOfRangeInTheSecondProgram) {
  NllCase c;
  c.labels[70] = 10;
  Device device;
  std::string error;
  ASSERT_TRUE(c.run(device, &error)) << error;
  // XBLOCK 64, 2 warps, sizePerThread 1: element 70 is program 1's element 6.
  ASSERT_EQ(device.failed_threads(), std::vector<unsigned>{blocked_1d_thread(70 - 64, 1, 2)});
  EXPECT_EQ(device.failures[0].block.x, 1u);
  EXPECT_EQ(device.failures[0].message, "index out of bounds: 0 <= tmp3 < 10");
  EXPECT_EQ(device.failures[0].line, script_line("tl.device_assert(((0 <= tmp3) & (tmp3 < 10))"));
  for (int i = 0; i < 64; ++i) EXPECT_NE(c.out[i], 99.0f) << i;   // program 0 completed
  for (int i = 64; i < 100; ++i) EXPECT_EQ(c.out[i], 99.0f) << i;  // program 1 stopped before its store
}

TEST(TritonKernel, LogSoftmaxFromBf16ToF16) {
  const int rows = 5, cols = 13;
  std::vector<uint16_t> in(rows * cols), out(rows * cols, 0);
  for (int i = 0; i < rows * cols; ++i) in[i] = to_bf16(std::sin(static_cast<float>(i)) * 4.0f);
  Device device;
  auto kernel = load(fixture("per_log_softmax"));
  uint16_t* p0 = device.add(in);
  uint16_t* p1 = device.add(out);
  int xnumel = rows, rnumel = cols;
  void* args[] = {&p0, &p1, &xnumel, &rnumel};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  for (int r = 0; r < rows; ++r) {
    float max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) max = std::max(max, from_bf16(in[r * cols + c]));
    for (int c = 0; c < cols; ++c) sum += std::exp(from_bf16(in[r * cols + c]) - max);
    for (int c = 0; c < cols; ++c) {
      float expected = from_bf16(in[r * cols + c]) - max - std::log(sum);
      EXPECT_NEAR(from_half(out[r * cols + c]), expected, 4e-3) << r << "," << c;
    }
  }
}

TEST(TritonKernel, ArgmaxTakesTheFirstOfEqualMaxima) {
  const int rows = 3, cols = 20;
  std::vector<float> in(rows * cols, 0.0f);
  in[0 * cols + 4] = 5.0f;
  in[0 * cols + 9] = 5.0f;  // a tie: index 4 wins
  in[1 * cols + 19] = 1.0f;
  for (int c = 0; c < cols; ++c) in[2 * cols + c] = -static_cast<float>(c);  // 0 is the largest
  std::vector<int64_t> out(rows, -1);
  Device device;
  auto kernel = load(fixture("argmax_rows"));
  float* p0 = device.add(in);
  int64_t* p1 = device.add(out);
  int xnumel = rows, rnumel = cols;
  void* args[] = {&p0, &p1, &xnumel, &rnumel};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  EXPECT_EQ(out, (std::vector<int64_t>{4, 19, 0}));
}

// tl.cumsum forward over int64 and reversed over fp32, rows of 13 in tiles of 16 (masked tail).
TEST(TritonKernel, ScansAlongRowsForwardAndReversed) {
  const int rows = 3, cols = 13;
  std::vector<int32_t> in(rows * cols);
  for (int i = 0; i < rows * cols; ++i) in[i] = (i * 7) % 11 - 5;
  std::vector<int64_t> forward(rows * cols, -1);
  std::vector<float> backward(rows * cols, -1.0f);
  Device device;
  auto kernel = load(fixture("per_cumsum_rows"));
  ASSERT_NE(kernel, nullptr);
  int32_t* p0 = device.add(in);
  int64_t* p1 = device.add(forward);
  float* p2 = device.add(backward);
  int xnumel = rows, rnumel = cols;
  void* args[] = {&p0, &p1, &p2, &xnumel, &rnumel};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  for (int r = 0; r < rows; ++r) {
    int64_t sum = 0;
    for (int c = 0; c < cols; ++c) {
      sum += in[r * cols + c];
      EXPECT_EQ(forward[r * cols + c], sum) << r << "," << c;
    }
    float tail = 0.0f;
    for (int c = cols - 1; c >= 0; --c) {
      tail += static_cast<float>(in[r * cols + c]);
      EXPECT_FLOAT_EQ(backward[r * cols + c], tail) << r << "," << c;
    }
  }
}

TEST(TritonKernel, TwoDimensionalGridConversions) {
  const int ynumel = 6, xnumel = 20;  // grid (2, 2): XBLOCK 16, YBLOCK 4
  std::vector<int32_t> in(ynumel * xnumel);
  for (int i = 0; i < ynumel * xnumel; ++i) in[i] = (i - 60) * 37;
  in[7] = 4097;     // f16 spacing is 4 there: rounds to 4096 (nearest even)
  in[8] = 70000;    // beyond f16: infinity
  in[9] = -300;     // int8 clamps to -128
  std::vector<uint16_t> half_out(in.size(), 0);
  std::vector<int8_t> byte_out(in.size(), 0);
  Device device;
  auto kernel = load(fixture("grid2d_convert"));
  int32_t* p0 = device.add(in);
  uint16_t* p1 = device.add(half_out);
  int8_t* p2 = device.add(byte_out);
  int y = ynumel, x = xnumel;
  void* args[] = {&p0, &p1, &p2, &y, &x};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 2, 1), device.hooks(), &error)) << error;
  EXPECT_TRUE(device.failures.empty());  // Triton's int32 overflow checks (sanitize_overflow) all hold
  EXPECT_TRUE(device.faults.empty());
  for (size_t i = 0; i < in.size(); ++i) {
    float as_half = from_half(to_half(static_cast<float>(in[i])));
    EXPECT_EQ(half_out[i], to_half(as_half * 0.5f)) << i;
    EXPECT_EQ(byte_out[i], static_cast<int8_t>(std::clamp(in[i], -128, 127))) << i;
  }
  EXPECT_EQ(from_half(half_out[7]), 2048.0f);
  EXPECT_TRUE(std::isinf(from_half(half_out[8])));
}

TEST(TritonKernel, AtomicHistogramAndItsBoundsAssert) {
  std::vector<int32_t> in(50);
  for (int i = 0; i < 50; ++i) in[i] = (i * 5) % 16;
  std::vector<float> counts(16, 0.0f);
  auto kernel = load(fixture("histogram_atomic"));
  {
    Device device;
    int32_t* p0 = device.add(in);
    float* p1 = device.add(counts);
    int n = 50;
    void* args[] = {&p0, &p1, &n};
    std::string error;
    ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
    std::vector<float> expected(16, 0.0f);
    for (int v : in) expected[v] += 1.0f;
    EXPECT_EQ(counts, expected);
  }
  in[40] = 16;
  Device device;
  int32_t* p0 = device.add(in);
  float* p1 = device.add(counts);
  int n = 50;
  void* args[] = {&p0, &p1, &n};
  std::string error;
  ASSERT_TRUE(kernel->run(args, dim3(2, 1, 1), device.hooks(), &error)) << error;
  ASSERT_EQ(device.failed_threads(), std::vector<unsigned>{blocked_1d_thread(40 - 32, 1, 1)});
  EXPECT_EQ(device.failures[0].block.x, 1u);
}

TEST(TritonKernel, UnsupportedOpIsNamed) {
  std::string text = fixture("poi_embedding_gather");
  size_t at = text.find("arith.mulf");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "arith.frobf");
  std::string error;
  EXPECT_EQ(TritonKernel::parse(text, &error), nullptr);
  EXPECT_NE(error.find("arith.frobf"), std::string::npos) << error;
}

// Hand-written modules: replicated and sliced layouts, a layout-less (TTIR) assert, control flow.
const char* const kLayoutModule = R"ttgir(#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [2, 1], order = [1, 0]}>
#small = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
#loc = loc("layouts.py":1:0)
#unknown = loc(unknown)
module attributes {"ttg.num-warps" = 2 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @layouts(%which: i32 loc("which"(#loc))) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32 loc(#loc)
    %c1 = arith.constant 1 : i32 loc(#loc)
    %c2 = arith.constant 2 : i32 loc(#loc)
    %rows = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(#loc)
    %cols = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>> loc(#loc)
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<4x1xi32, #blocked> loc(#loc)
    %c2d = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x16xi32, #blocked> loc(#loc)
    %rb = tt.broadcast %r2 : tensor<4x1xi32, #blocked> -> tensor<4x16xi32, #blocked> loc(#loc)
    %cb = tt.broadcast %c2d : tensor<1x16xi32, #blocked> -> tensor<4x16xi32, #blocked> loc(#loc)
    %is0 = arith.cmpi eq, %which, %c0 : i32 loc(#loc)
    scf.if %is0 {
      %three = arith.constant dense<3> : tensor<4x16xi32, #blocked> loc(#loc)
      %five = arith.constant dense<5> : tensor<4x16xi32, #blocked> loc(#loc)
      %a = arith.cmpi ne, %rb, %three : tensor<4x16xi32, #blocked> loc(#loc)
      %b = arith.cmpi ne, %cb, %five : tensor<4x16xi32, #blocked> loc(#loc)
      %ok = arith.ori %a, %b : tensor<4x16xi1, #blocked> loc(#loc)
      tt.assert %ok, "2-D element (3, 5)" : tensor<4x16xi1, #blocked> loc("layouts.py":10:4)
    } loc(#loc)
    %is1 = arith.cmpi eq, %which, %c1 : i32 loc(#loc)
    scf.if %is1 {
      %two = arith.constant dense<2> : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(#loc)
      %ok = arith.cmpi ne, %rows, %two : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(#loc)
      tt.assert %ok, "row 2 of a slice" : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(callsite(#unknown at "layouts.py":20:4))
    } loc(#loc)
    %is2 = arith.cmpi eq, %which, %c2 : i32 loc(#loc)
    scf.if %is2 {
      %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #small> loc(#loc)
      %five = arith.constant dense<5> : tensor<16xi32, #small> loc(#loc)
      %ok = arith.cmpi ne, %r, %five : tensor<16xi32, #small> loc(#loc)
      tt.assert %ok, "replicated" : tensor<16xi1, #small> loc(fused[#unknown, "layouts.py":30:4])
    } loc(#loc)
    %c3 = arith.constant 3 : i32 loc(#loc)
    %ok3 = arith.cmpi ne, %which, %c3 : i32 loc(#loc)
    tt.assert %ok3, "scalar" : i1 loc("layouts.py":40:4)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
)ttgir";

std::vector<AssertFailure> run_layouts(int which) {
  auto kernel = load(kLayoutModule);
  if (!kernel) return {};
  Device device;
  void* args[] = {&which};
  std::string error;
  EXPECT_TRUE(kernel->run(args, dim3(3, 1, 1), device.hooks(), &error)) << error;
  return device.failures;
}

std::vector<unsigned> threads_of(const std::vector<AssertFailure>& failures) {
  std::vector<unsigned> threads;
  for (const auto& f : failures) threads.push_back(f.thread.x);
  return threads;
}

TEST(TritonKernel, TwoDimensionalBlockedLayout) {
  // Element (r, c) of #blocked (sizePerThread [1,1], threadsPerWarp [2,16], warpsPerCTA [2,1], order [1,0]): lane
  // = c % 16 + 16 * (r % 2), warp = (r / 2) % 2.
  auto failures = run_layouts(0);
  unsigned r = 3, c = 5;
  EXPECT_EQ(threads_of(failures), std::vector<unsigned>{((r / 2) % 2) * 32 + (c % 16) + 16 * (r % 2)});
  ASSERT_FALSE(failures.empty());
  EXPECT_EQ(failures[0].file, "layouts.py");
  EXPECT_EQ(failures[0].line, 10u);
  EXPECT_EQ(failures[0].block.x, 0u);
}

TEST(TritonKernel, SliceLayoutFailsEveryThreadAlongTheSlicedDimension) {
  // Row 2 of the slice along dim 1: lane row 0, warp 1, any of the 16 column lanes.
  auto failures = run_layouts(1);
  std::vector<unsigned> expected;
  for (unsigned lane = 0; lane < 16; ++lane) expected.push_back(32 + lane);
  EXPECT_EQ(threads_of(failures), expected);
  ASSERT_FALSE(failures.empty());
  EXPECT_EQ(failures[0].line, 20u);  // a call site's callee is unknown: its caller's location
}

TEST(TritonKernel, ReplicatedElementsFailEveryHolder) {
  // 16 elements on a 64-thread tile: element 5 is held by threads 5, 21, 37, 53.
  auto failures = run_layouts(2);
  EXPECT_EQ(threads_of(failures), (std::vector<unsigned>{5, 21, 37, 53}));
  ASSERT_FALSE(failures.empty());
  EXPECT_EQ(failures[0].line, 30u);  // the first file location of a fused location (the first is unknown)
}

TEST(TritonKernel, ScalarAssertFailsTheWholeBlock) {
  // A scalar is computed by every thread: all 64 fail, in the first program.
  auto failures = run_layouts(3);
  std::vector<unsigned> expected;
  for (unsigned t = 0; t < 64; ++t) expected.push_back(t);
  EXPECT_EQ(threads_of(failures), expected);
  ASSERT_FALSE(failures.empty());
  EXPECT_EQ(failures.back().line, 40u);
  EXPECT_EQ(failures.back().block.x, 0u);
  EXPECT_TRUE(run_layouts(4).empty());
}

TEST(TritonKernel, AssertWithoutLayoutCannotNameThreads) {
  const char* text = R"ttgir(module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @plain() {
    %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %c = arith.constant dense<2> : tensor<4xi32>
    %b = arith.cmpi slt, %r, %c : tensor<4xi32>
    tt.assert %b, "small" : tensor<4xi1>
    tt.return
  }
}
)ttgir";
  auto kernel = load(text);
  ASSERT_NE(kernel, nullptr);
  Device device;
  std::string error;
  EXPECT_FALSE(kernel->run(nullptr, dim3(1, 1, 1), device.hooks(), &error));
  EXPECT_NE(error.find("cannot be named"), std::string::npos) << error;
  EXPECT_TRUE(device.failures.empty());
}

TEST(TritonKernel, WhileIfLibdeviceAndDivisionByZero) {
  const char* text = R"ttgir(#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @flow(%out: !tt.ptr<f32>, %div: !tt.ptr<i32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.while (%i = %c0, %acc = %c0) : (i32, i32) -> (i32, i32) {
      %lt = arith.cmpi slt, %i, %n : i32
      scf.condition(%lt) %i, %acc : i32, i32
    } do {
    ^bb0(%i2: i32, %acc2: i32):
      %next = arith.addi %i2, %c1 : i32
      %sum = arith.addi %acc2, %i2 : i32
      scf.yield %next, %sum : i32, i32
    }
    %big = arith.cmpi sgt, %r#1, %c1 : i32
    %v = scf.if %big -> (f32) {
      %f = arith.sitofp %r#1 : i32 to f32
      %s = tt.extern_elementwise %f {libname = "", libpath = "", pure = true, symbol = "__nv_sqrtf"} : (f32) -> f32
      scf.yield %s : f32
    } else {
      %z = arith.constant -1.000000e+00 : f32
      scf.yield %z : f32
    }
    tt.store %out, %v : !tt.ptr<f32>
    %x = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #b>
    %zero = arith.constant dense<0> : tensor<4xi32, #b>
    %q = arith.divsi %x, %zero : tensor<4xi32, #b>
    %m = arith.remui %x, %zero : tensor<4xi32, #b>
    %qm = arith.addi %q, %m : tensor<4xi32, #b>
    %p = tt.splat %div : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>, #b>
    %pp = tt.addptr %p, %x : tensor<4x!tt.ptr<i32>, #b>, tensor<4xi32, #b>
    tt.store %pp, %qm : tensor<4x!tt.ptr<i32>, #b>
    tt.return
  }
}
)ttgir";
  auto kernel = load(text);
  ASSERT_NE(kernel, nullptr);
  for (int n : {5, 1}) {
    std::vector<float> out(1, 0.0f);
    std::vector<int32_t> div(4, 7);
    Device device;
    float* p0 = device.add(out);
    int32_t* p1 = device.add(div);
    void* args[] = {&p0, &p1, &n};
    std::string error;
    ASSERT_TRUE(kernel->run(args, dim3(1, 1, 1), device.hooks(), &error)) << error;
    EXPECT_EQ(out[0], n == 5 ? std::sqrt(10.0f) : -1.0f);
    // Division by zero: quotient -1 (all ones), remainder the dividend.
    EXPECT_EQ(div, (std::vector<int32_t>{-1, 0, 1, 2}));
  }
}

}  // namespace
