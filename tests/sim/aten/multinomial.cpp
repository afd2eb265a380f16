// aten/src/ATen/native/cuda/MultinomialKernel.cu: torch.multinomial's probability checks.
//
//   sampleMultinomialOnce<scalar_t, accscalar_t>(int64_t* dest, int64_t distributions, int categories,
//       const scalar_t* sampled, const scalar_t* dist, int stride_dist, int stride_categories)
//     n_sample == 1 (sampling the next token): block b handles distributions b, b + gridDim.x, ...; its threads read
//     categories cat = threadIdx.x, + blockDim.x, ... asserting `!at::_isnan(val)` (line 216), `!_isinf(val)` (217)
//     and `!(val < zero)` (218); after the block's sum, thread 0 asserts `!_isinf(val)` (228, its own last value) and
//     `sum > accZero` (229: an all-zero row). Then the block scans the normalized row chunk by chunk (inclusive
//     Hillis-Steele prefix sums in shared memory) and picks the category whose bucket holds sampled[curDist].
//   renormRowsL1<scalar_t>(scalar_t* dist, long rows, long cols)
//     n_sample > 1: block b normalizes rows b, b + gridDim.x, ...: `!(val < zero)` per element (line 60) and for
//     thread 0's last value after the block sum (66); rows with a positive sum are divided by it.
//
// Lines as torch 2.15's cubins pass them to __assertfail. Which torch.multinomial reaches: with replacement and more
// than one sample, renormRowsL1 on a copy of the probabilities, then a cumsum and sampleMultinomialWithReplacement;
// without replacement or with one sample, torch 2.15 checks the probabilities with reductions and
// at::_assert_async (TensorCompare.cu's _assert_async_cuda_kernel) and samples with exponential_/argmax, so
// sampleMultinomialOnce only runs where a caller launches it itself. Not modelled: sampleMultinomialWithReplacement
// (its input is a cumsum, which the simulator does not compute, and it draws with curand's Philox), the uniform_
// kernel that fills `sampled` (a no-op here: the sample is whatever that memory holds), and _assert_async (its input
// is the result of reductions the simulator does not compute: a model would assert on whatever memory holds).
#include <algorithm>
#include <cmath>
#include <vector>

#include "aten_device.h"

namespace simaten {
namespace {

constexpr const char* kMultinomialCu = SIMATEN_CUDA_SRC "MultinomialKernel.cu";

const AssertSite kRenormElement{kMultinomialCu, 60, "renormRowsL1", "!(val < zero)"};
const AssertSite kRenormThread0{kMultinomialCu, 66, "renormRowsL1", "!(val < zero)"};
const AssertSite kOnceNan{kMultinomialCu, 216, "sampleMultinomialOnce", "!at::_isnan(val)"};
const AssertSite kOnceInf{kMultinomialCu, 217, "sampleMultinomialOnce", "!_isinf(val)"};
const AssertSite kOnceNegative{kMultinomialCu, 218, "sampleMultinomialOnce", "!(val < zero)"};
const AssertSite kOnceSumInf{kMultinomialCu, 228, "sampleMultinomialOnce", "!_isinf(val)"};
const AssertSite kOnceSum{kMultinomialCu, 229, "sampleMultinomialOnce", "sum > accZero"};

void sample_multinomial_once(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("sampleMultinomialOnce");
  if (name == nullptr || name->template_args.size() != 2) return;
  auto scalar = floating_type(name->template_args[0]);
  auto acc = floating_type(name->template_args[1]);
  if (!scalar || !acc || block.x == 0) return;
  auto* dest = arg<int64_t*>(args, 0);
  int64_t distributions = arg<int64_t>(args, 1);
  int categories = arg<int>(args, 2);
  const auto* sampled = arg<const unsigned char*>(args, 3);
  const auto* dist = arg<const unsigned char*>(args, 4);
  int64_t stride_dist = arg<int>(args, 5), stride_categories = arg<int>(args, 6);
  auto value = [&](int64_t d, int64_t cat) { return load(*scalar, dist, d * stride_dist + cat * stride_categories); };
  unsigned threads = block.x;

  FailedThreads failed(grid, block);
  for (unsigned b = 0; b < grid.x; ++b) {
    for (int64_t cur = b; cur < distributions; cur += grid.x) {
      // First pass: each thread's checks and partial sum.
      std::vector<double> partial(threads, 0.0);
      double last0 = 0;  // thread 0's last val
      bool block_failed = false;
      for (unsigned x = 0; x < threads; ++x) {
        for (int64_t cat = x; cat < categories; cat += threads) {
          double val = value(cur, cat);
          const AssertSite* site = std::isnan(val) ? &kOnceNan : std::isinf(val) ? &kOnceInf : val < 0 ? &kOnceNegative
                                                                                                         : nullptr;
          if (site != nullptr) {
            failed.fail(*site, dim3{b, 0, 0}, dim3{x, 0, 0});
            block_failed = true;
            break;
          }
          partial[x] = round_to(*acc, partial[x] + val);
          if (x == 0) last0 = val;
        }
      }
      if (block_failed) break;  // the block's threads stop at the barrier; the trap ends the kernel
      double sum = 0;
      for (double p : partial) sum = round_to(*acc, sum + p);  // BlockReduceSum (order aside)
      if (std::isinf(last0)) {
        failed.fail(kOnceSumInf, dim3{b, 0, 0}, dim3{0, 0, 0});
        break;
      }
      if (!(sum > 0)) {
        failed.fail(kOnceSum, dim3{b, 0, 0}, dim3{0, 0, 0});
        break;
      }
      if (failed.any()) continue;
      // Sampling: chunked inclusive prefix sums of dist / sum, bucket test against the sample.
      double sample = round_to(*scalar, round_to(*acc, load(*scalar, sampled, cur)));
      int chunks = (categories + static_cast<int>(threads) - 1) / static_cast<int>(threads);
      double prev_high = 0;
      bool found = false;
      int64_t found_pos = 0;
      std::vector<double> smem(threads), scanned(threads), dist_val(threads);
      for (int chunk = 0; chunk < chunks && !found; ++chunk) {
        for (unsigned x = 0; x < threads; ++x) {
          int64_t cat = int64_t{chunk} * threads + x;
          dist_val[x] = cat < categories ? round_to(*acc, value(cur, cat) / sum) : 0.0;
          smem[x] = dist_val[x];
        }
        for (unsigned offset = 1; offset < threads; offset *= 2) {
          scanned = smem;
          for (unsigned x = offset; x < threads; ++x) scanned[x] = round_to(*acc, smem[x - offset] + smem[x]);
          smem = scanned;
        }
        for (unsigned x = 0; x < threads; ++x) {
          int64_t cat = int64_t{chunk} * threads + x;
          double cur_bucket = round_to(*scalar, round_to(*acc, smem[x] + prev_high));
          double prev_bucket = round_to(*scalar, x == 0 ? prev_high : round_to(*acc, smem[x - 1] + prev_high));
          bool in_bucket = cat < categories && !(sample >= cur_bucket) && sample >= prev_bucket && dist_val[x] > 0;
          if (in_bucket) {
            found_pos = std::max(found_pos, cat);  // atomicMax(&foundPos, cat)
            found = true;
          }
        }
        prev_high = round_to(*acc, prev_high + smem[threads - 1]);
      }
      if (found) {
        dest[cur] = found_pos;
      } else {
        for (int64_t cat = categories - 1; cat >= 0; --cat) {
          if (value(cur, cat) > 0) {
            dest[cur] = cat;
            break;
          }
        }
      }
    }
  }
}

void renorm_rows_l1(void** args, dim3 grid, dim3 block) {
  const KernelName* name = running_kernel("renormRowsL1");
  if (name == nullptr || name->template_args.size() != 1) return;
  auto scalar = floating_type(name->template_args[0]);
  if (!scalar || block.x == 0) return;
  auto* dist = arg<unsigned char*>(args, 0);
  int64_t rows = arg<int64_t>(args, 1), cols = arg<int64_t>(args, 2);
  unsigned threads = block.x;

  FailedThreads failed(grid, block);
  std::vector<double> sums;
  for (unsigned b = 0; b < grid.x; ++b) {
    for (int64_t row = b; row < rows; row += grid.x) {
      bool block_failed = false;
      double last0 = 0;
      std::vector<double> partial(threads, 0.0);
      for (unsigned x = 0; x < threads; ++x) {
        for (int64_t col = x; col < cols; col += threads) {
          double val = load(*scalar, dist, row * cols + col);
          if (val < 0) {  // ! < 0: NaN passes
            failed.fail(kRenormElement, dim3{b, 0, 0}, dim3{x, 0, 0});
            block_failed = true;
            break;
          }
          partial[x] = round_to(*scalar, partial[x] + val);  // scalar_t sum = sum + val
          if (x == 0) last0 = val;
        }
      }
      if (block_failed) break;
      if (last0 < 0) {
        failed.fail(kRenormThread0, dim3{b, 0, 0}, dim3{0, 0, 0});
        break;
      }
      if (failed.any()) continue;
      double sum = 0;
      for (double p : partial) sum = round_to(*scalar, sum + p);
      if (sum > 0)
        for (int64_t col = 0; col < cols; ++col)
          store(*scalar, dist, row * cols + col, load(*scalar, dist, row * cols + col) / sum);
    }
  }
}

const bool registered = [] {
  simcuda_register_kernel_family("at::native::sampleMultinomialOnce", sample_multinomial_once);
  simcuda_register_kernel_family("at::native::renormRowsL1", renorm_rows_l1);
  return true;
}();

}  // namespace
}  // namespace simaten
