// Hints: the table of known failures (src/report/hints.json, embedded in the library) and find_hint (hints.h says how
// it matches). The table is read here from its source file (FIRSTASSERT_HINTS_JSON, set by meson) so that every entry
// added later is checked without touching this test: well-formed, and each of its conditions, kernels and codes leads
// find_hint to that entry (no entry shadows another); then every spelling known, with near misses that must not match.
#include "report/hints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#ifndef FIRSTASSERT_HINTS_JSON
#error "FIRSTASSERT_HINTS_JSON must name src/report/hints.json (tests/unit/meson.build)"
#endif

namespace firstassert {
namespace {

using json = nlohmann::json;

json table() {
  std::ifstream in(FIRSTASSERT_HINTS_JSON);
  EXPECT_TRUE(in.good()) << "cannot read " << FIRSTASSERT_HINTS_JSON;
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << FIRSTASSERT_HINTS_JSON << " is not valid JSON";
  return j;
}

std::string id_of(const std::optional<Hint>& h) { return h ? h->id : "(none)"; }

// A query for an assert alternative of the table: its first condition (or prefix, completed), with the function
// and file it asks for.
HintQuery query_for(const json& alternative, std::string& condition, std::string& function, std::string& file) {
  condition = alternative.contains("conditions") ? alternative["conditions"][0].get<std::string>()
                                                 : alternative["condition_prefixes"][0].get<std::string>() + "x < 9";
  function = alternative.contains("functions") ? "k_" + alternative["functions"][0].get<std::string>() + "_k" : "";
  file = alternative.contains("files") ? "/src/" + alternative["files"][0].get<std::string>() + ".cu" : "";
  return {condition, function, file, 710};
}

TEST(Hints, TableIsWellFormed) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  ASSERT_FALSE(t.empty());
  std::set<std::string> ids;
  for (const json& e : t) {
    ASSERT_TRUE(e.is_object()) << e.dump();
    for (const char* key : {"id", "title", "hint"}) {
      ASSERT_TRUE(e.contains(key) && e[key].is_string()) << key << " missing in " << e.dump();
      EXPECT_FALSE(e[key].get<std::string>().empty()) << key << " empty in " << e.dump();
    }
    std::string id = e["id"];
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    EXPECT_TRUE(e.contains("asserts") || e.contains("kernels") || e.contains("codes")) << id << ": matches nothing";
    for (const auto& [key, value] : e.items()) {
      EXPECT_TRUE(key == "id" || key == "title" || key == "hint" || key == "asserts" || key == "kernels" ||
                  key == "codes")
          << id << ": unknown key " << key;
    }
    for (const json& alternative : e.value("asserts", json::array())) {
      ASSERT_TRUE(alternative.is_object()) << id;
      EXPECT_TRUE(alternative.contains("conditions") || alternative.contains("condition_prefixes"))
          << id << ": an assert alternative needs a condition: a function alone would hint an unknown condition";
      for (const auto& [key, list] : alternative.items()) {
        EXPECT_TRUE(key == "conditions" || key == "condition_prefixes" || key == "functions" || key == "files")
            << id << ": unknown key " << key;
        ASSERT_TRUE(list.is_array() && !list.empty()) << id << "." << key;
        for (const json& needle : list) {
          ASSERT_TRUE(needle.is_string()) << id << "." << key;
          EXPECT_FALSE(needle.get<std::string>().empty()) << id << "." << key << ": would match everything";
        }
      }
    }
    for (const json& k : e.value("kernels", json::array())) EXPECT_TRUE(k.is_string() && !k.get<std::string>().empty());
    for (const json& c : e.value("codes", json::array())) EXPECT_TRUE(c.is_number_integer()) << id;
  }
}

// Each condition, kernel and code of an entry leads to that entry: no earlier one shadows it.
TEST(Hints, EveryConditionKernelAndCodeSelectsItsOwnEntry) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  for (const json& e : t) {
    std::string id = e.value("id", "");
    for (const json& alternative : e.value("asserts", json::array())) {
      for (const json& c : alternative.value("conditions", json::array())) {
        std::string condition, function, file;
        HintQuery q = query_for(alternative, condition, function, file);
        condition = c.get<std::string>();
        q.condition = condition;
        EXPECT_EQ(id_of(find_hint(q)), id) << "condition \"" << condition << "\"";
      }
      std::string condition, function, file;
      EXPECT_EQ(id_of(find_hint(query_for(alternative, condition, function, file))), id) << condition;
    }
    for (const json& k : e.value("kernels", json::array()))
      EXPECT_EQ(id_of(find_hint({{}, k.get<std::string>(), {}, 710})), id) << "kernel \"" << k.get<std::string>() << "\"";
    for (const json& c : e.value("codes", json::array()))
      EXPECT_EQ(id_of(find_hint({{}, {}, {}, c.get<int>()})), id) << "code " << c.get<int>();
  }
}

TEST(Hints, TheEmbeddedTableIsTheSourceFile) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  ASSERT_FALSE(t.empty());
  const json& first = t[0];
  std::string condition = first["asserts"][0]["conditions"][0].get<std::string>();
  std::optional<Hint> h = find_hint({condition, {}, {}, 710});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->id, first["id"]);
  EXPECT_EQ(h->title, first["title"]);
  EXPECT_EQ(h->text, first["hint"]) << "the hint's text is the entry's \"hint\"";
}

struct Expect {
  const char* condition;
  const char* function;
  const char* file;
  const char* id;  // "(none)": no hint
};

template <size_t N>
void expect_hints(const Expect (&cases)[N]) {
  for (const Expect& c : cases) {
    EXPECT_EQ(id_of(find_hint({c.condition, c.function, c.file, 710})), c.id)
        << "condition \"" << c.condition << "\", function \"" << c.function << "\", file \"" << c.file << "\"";
  }
}

// Every spelling a PyTorch version printed, and near misses that must not match: a wrong hint is worse than none.
TEST(Hints, SpellingsAndNearMisses) {
  const Expect cases[] = {
      // class index
      {"t >= 0 && t < n_classes", "nll_loss_forward_reduce_cuda_kernel_2d", "Loss.cu", "class-index-out-of-range"},
      {"t>=0&&t<n_classes", "", "", "class-index-out-of-range"},
      {"cur_target >= 0 && cur_target < n_classes", "nll_loss2d_forward_kernel", "", "class-index-out-of-range"},
      {"t >= 0 && t < n_classes_total", "", "", "(none)"},
      {"t >= 0", "nll_loss_forward_reduce_cuda_kernel_2d", "", "(none)"},
      {"t > 0 && t < n_classes", "", "", "(none)"},
      // BCE: the input is the model's output, the target is the labels
      {"input_val >= zero && input_val <= one", "binary_cross_entropy_out", "Loss.cu", "bce-input-out-of-range"},
      {"input >= 0. && input <= 1.", "cunn_BCECriterion_updateOutput", "", "bce-input-out-of-range"},
      {"target_val >= zero && target_val <= one", "binary_cross_entropy_out", "Loss.cu", "bce-target-out-of-range"},
      {"target >= 0. && target <= 1.", "", "", "bce-target-out-of-range"},
      {"input_val >= zero && input_val <= 255", "", "", "(none)"},
      {"input >= 0 && input <= 10", "", "", "(none)"},
      {"val >= zero && val <= one", "", "", "(none)"},
      // index_select and embeddings
      {"srcIndex < srcSelectDimSize", "indexSelectLargeIndex", "Indexing.cu", "index-select-out-of-range"},
      {"srcIndex < srcSelectDimSize + 1", "", "", "(none)"},
      {"dstIndex < dstAddDimSize", "indexAddSmallIndex", "", "index-add-copy-fill-out-of-range"},  // not index_select's
      // gather, scatter, advanced indexing: old and new spellings
      {"idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"", "", "ScatterGatherKernel.cu",
       "gather-scatter-index-out-of-bounds"},
      {"idx_dim >= 0 && idx_dim < index_size && \"scatter gather kernel index out of bounds\"", "", "",
       "gather-scatter-index-out-of-bounds"},
      {"index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"", "", "IndexKernel.cu",
       "gather-scatter-index-out-of-bounds"},
      {"-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"", "", "", "gather-scatter-index-out-of-bounds"},
      {"index out of bounds", "", "", "(none)"},
      {"idx < size && \"index out of bounds in my op\"", "my_gather", "", "(none)"},
      // Triton's bounds checks
      {"index out of bounds: 0 <= tmp4 < 32000", "unknown", "unknown", "compiled-index-out-of-bounds"},
      {"index out of bounds: 0 <= tmp11 < 128", "triton_poi_fused_embedding_0", "/tmp/x.py", "compiled-index-out-of-bounds"},
      {"tmp4 < 32000", "unknown", "unknown", "(none)"},
      // multinomial: only where its kernels or files say so
      {"val >= zero", "renormRowsL1", "", "multinomial-invalid-distribution"},
      {"val >= zero", "", "aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"sum > accZero", "", "", "multinomial-invalid-distribution"},
      {"val >= zero", "my_kernel", "my_ops.cu", "(none)"},
      {"val >= zero", "", "", "(none)"},
      {"target_val >= zero", "", "", "(none)"},
      // unknown conditions get no hint, whatever the function's name suggests
      {"x > 0", "nll_loss_forward_reduce_cuda_kernel_2d", "Loss.cu", "(none)"},
      {"n > 0", "ctc_loss_log_alpha_gpu_kernel", "", "(none)"},
  };
  expect_hints(cases);
}

// Each family below: every form a PyTorch version printed (THC/THCUNN's raw assert() with __PRETTY_FUNCTION__,
// CUDA_KERNEL_ASSERT's short __func__ from 1.6, Windows builds with no function, ROCm's hipified .hip files), taken
// from its logs and sources, then the near misses that must not match: a generic condition counts only in its kernel.

TEST(Hints, MultinomialAcrossVersions) {
  const Expect cases[] = {
      // THC 0.4-1.x: THCTensorRandom.cuh, raw assert() (pytorch#13770's line)
      {"THCNumerics<T>::ge(val, zero)",
       "void sampleMultinomialOnce(long *, long, int, T *, T *, int, int) [with T = __half, AccT = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"!THCNumerics<T>::isinf(val)",
       "void sampleMultinomialOnce(long *, long, int, T *, T *, int, int) [with T = float, AccT = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"!THCNumerics<T>::isnan(val)",
       "void sampleMultinomialOnce(long *, long, int, T *, T *, int, int) [with T = float, AccT = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"!isinf(sum)",
       "void sampleMultinomialOnce(long *, long, int, T *, T *, int, int) [with T = float, AccT = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"THCNumerics<AccT>::gt(sum, accZero)",
       "void sampleMultinomialOnce(long *, long, int, T *, T *, int, int) [with T = float, AccT = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"THCNumerics<T>::ge(val, zero)", "void renormRowsL1(T *, long, long) [with T = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      {"THCNumerics<T>::gt(sum, zero)", "void renormRowsL1(T *, long, long) [with T = float]",
       "/pytorch/aten/src/THC/THCTensorRandom.cuh", "multinomial-invalid-distribution"},
      // ATen MultinomialKernel.cu, about 1.6-1.10 (still THCNumerics inside)
      {"val >= zero", "sampleMultinomialOnce", "../aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!THCNumerics<scalar_t>::isnan(val)", "sampleMultinomialOnce",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"!THCNumerics<scalar_t>::isinf(val)", "sampleMultinomialOnce",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"!THCNumerics<accscalar_t>::isinf(sum)", "sampleMultinomialOnce",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"sum > accZero", "sampleMultinomialOnce", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!THCNumerics<scalar_t>::lt(val, zero)", "renormRowsL1",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"cumdist[size - 1] > static_cast<scalar_t>(0)", "binarySearchForMultinomial",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      // 2.x
      {"!(val < zero)", "sampleMultinomialOnce", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!at::_isnan(val)", "sampleMultinomialOnce", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!_isinf(val)", "sampleMultinomialOnce", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!(val < zero)", "renormRowsL1", "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"cumdist[size - 1] > static_cast<scalar_t>(0)", "binarySearchForMultinomial",
       "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu", "multinomial-invalid-distribution"},
      {"!(val < zero)", "", "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\MultinomialKernel.cu",
       "multinomial-invalid-distribution"},
      {"!(val < zero)", "sampleMultinomialOnce", "/pytorch/aten/src/ATen/native/hip/MultinomialKernel.hip",
       "multinomial-invalid-distribution"},
      // the fast path's _assert_async: the text in backticks is the message, not a condition
      {"probability tensor contains either `inf`, `nan` or element < 0", "_assert_async_cuda_kernel",
       "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu", "multinomial-invalid-distribution"},
      {"invalid multinomial distribution (sum of probabilities <= 0)", "_assert_async_cuda_kernel",
       "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu", "multinomial-invalid-distribution"},
      {"probability tensor contains either `inf`, `nan` or element < 0", "_assert_async_cuda_kernel",
       "/pytorch/aten/src/ATen/native/hip/TensorCompare.hip", "multinomial-invalid-distribution"},
      // near misses: the same generic checks elsewhere, and _assert_async without a message
      {"!(val < zero)", "my_kernel", "my_ops.cu", "(none)"},
      {"!(val < zero)", "", "", "(none)"},
      {"!isinf(sum)", "softmax_kernel", "/src/ops/softmax.cu", "(none)"},
      {"THCNumerics<T>::ge(val, zero)", "void THCTensor_clampKernel(T *, long) [with T = float]",
       "/pytorch/aten/src/THC/THCTensorMathPointwise.cuh", "(none)"},
      {"cumdist[size - 1] > static_cast<scalar_t>(0)", "", "", "(none)"},
      {"probability tensor contains either", "_assert_async_cuda_kernel", "TensorCompare.cu", "(none)"},
  };
  expect_hints(cases);
}

TEST(Hints, BinaryCrossEntropyAcrossVersions) {
  const Expect cases[] = {
      // THCUNN BCECriterion.cu, 0.4-1.x: thrust functors, the no-reduce one through pointers (yolox-pytorch#121)
      {"input >= 0. && input <= 1.",
       "void bce_functor<Dtype, Acctype>::operator()(Tuple) [with Tuple = "
       "thrust::detail::tuple_of_iterator_references<float &, float &, thrust::null_type>, "
       "Dtype = float, Acctype = float]",
       "/pytorch/aten/src/THCUNN/BCECriterion.cu", "bce-input-out-of-range"},
      {"*input >= 0. && *input <= 1.",
       "void bce_updateOutput_no_reduce_functor<Dtype, Acctype>::operator()(const Dtype *, const Dtype *, Dtype *) "
       "[with Dtype = float, Acctype = float]",
       "/tmp/pip-req-build-p5q91txh/aten/src/THCUNN/BCECriterion.cu", "bce-input-out-of-range"},
      // ATen Loss.cu: a device lambda, so the function is operator()
      {"input_val >= zero && input_val <= one", "operator()", "../aten/src/ATen/native/cuda/Loss.cu",
       "bce-input-out-of-range"},
      {"target_val >= zero && target_val <= one", "operator()", "/pytorch/aten/src/ATen/native/cuda/Loss.cu",
       "bce-target-out-of-range"},
      {"input_val >= zero && input_val <= one", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\Loss.cu", "bce-input-out-of-range"},
      {"target_val >= zero && target_val <= one", "operator()", "/pytorch/aten/src/ATen/native/hip/Loss.hip",
       "bce-target-out-of-range"},
      // near misses
      {"*input >= 0 && *input < 1", "operator()", "", "(none)"},
      {"input_val >= zero", "operator()", "/pytorch/aten/src/ATen/native/cuda/Loss.cu", "(none)"},
  };
  expect_hints(cases);
}

TEST(Hints, GatherScatterAndAdvancedIndexingAcrossVersions) {
  const Expect cases[] = {
      // THC scatter/gather, 0.3-1.x (faster-rcnn.pytorch#115's line)
      {"indexValue >= 0 && indexValue < src.sizes[dim]",
       "void THCudaTensor_gatherKernel(TensorInfo<Real, IndexType>, TensorInfo<Real, IndexType>, "
       "TensorInfo<long, IndexType>, int, IndexType) [with IndexType = unsigned int, Real = float, Dims = 3]",
       "/pytorch/torch/lib/THC/THCTensorScatterGather.cu", "gather-scatter-index-out-of-bounds"},
      {"indexValue >= 0 && indexValue < tensor.sizes[dim]",
       "void THCudaTensor_scatterAddKernel(TensorInfo<Real, IndexType>, TensorInfo<Real, IndexType>, "
       "TensorInfo<long, IndexType>, int, IndexType) [with IndexType = unsigned int, Real = float, Dims = 2]",
       "/pytorch/aten/src/THC/THCTensorScatterGather.cu", "gather-scatter-index-out-of-bounds"},
      // ATen ScatterGatherKernel.cu, about 1.6 on: a lambda; Windows prints no function
      {"idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"", "operator()",
       "../aten/src/ATen/native/cuda/ScatterGatherKernel.cu", "gather-scatter-index-out-of-bounds"},
      {"idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\ScatterGatherKernel.cu",
       "gather-scatter-index-out-of-bounds"},
      {"idx_dim >= 0 && idx_dim < index_size && \"scatter gather kernel index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu", "gather-scatter-index-out-of-bounds"},
      // the vectorized gather kernel, about 2.6 on (gather's fast path and tensor[index]), printed as in its source
      {"ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"", "vectorized_gather_kernel",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu", "gather-scatter-index-out-of-bounds"},
      {"ind >= 0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"", "vectorized_gather_kernel",
       "/pytorch/aten/src/ATen/native/hip/IndexKernelUtils.hip", "gather-scatter-index-out-of-bounds"},
      // advanced indexing: 1.1's and 1.2-1.4's lambda names, 1.6's operator(), 2.1's reordered condition, Windows
      {"index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"",
       "lambda [](int)->auto::operator()(int)->auto", "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu",
       "gather-scatter-index-out-of-bounds"},
      {"index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"", "lambda ->auto::operator()(int)->auto",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "gather-scatter-index-out-of-bounds"},
      {"index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "gather-scatter-index-out-of-bounds"},
      {"-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "gather-scatter-index-out-of-bounds"},
      {"-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\IndexKernel.cu",
       "gather-scatter-index-out-of-bounds"},
      // take / put_: ATen's kernel, and THC's (0.4's tensor[index] went through take)
      {"idx < numel && idx >= -numel && \"cuda_take_put_kernel() index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "gather-scatter-index-out-of-bounds"},
      {"linearIndex < size && linearIndex >= -size",
       "IndexType indexToOffset(const TensorInfo<T, IndexType> &, int64_t, IndexType) [with Dims = -2, T = float, "
       "IndexType = unsigned int]",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "gather-scatter-index-out-of-bounds"},
      {"idx < size && idx >= -size", "void WrapIndexOp::operator()(int64_t *, int64_t *)",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "gather-scatter-index-out-of-bounds"},
      // near misses: THC's generic take/put checks elsewhere, bounds without the kernel's message
      {"linearIndex < size && linearIndex >= -size", "my_kernel", "my_ops.cu", "(none)"},
      {"idx < size && idx >= -size", "", "", "(none)"},
      {"idx < size && idx >= -size", "operator()", "/src/ops/wrap.cu", "(none)"},
      {"ind >= 0 && ind < ind_dim_size", "vectorized_gather_kernel", "", "(none)"},
      {"indexValue >= 0 && indexValue < src.sizes[dim] + 1", "", "", "(none)"},
  };
  expect_hints(cases);
}

TEST(Hints, IndexAddCopyFillAcrossVersions) {
  const Expect cases[] = {
      // THC THCTensorIndex.cu, 0.4-1.x
      {"dstIndex < dstAddDimSize",
       "void indexAddSmallIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, "
       "int, int, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2]",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "index-add-copy-fill-out-of-range"},
      {"dstIndex < dstCopyDimSize",
       "void indexCopyLargeIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, "
       "TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = float, IndexType = unsigned int, "
       "DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "index-add-copy-fill-out-of-range"},
      {"dstIndex_ < dstFillDimSize",
       "void indexFillSmallIndex(TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, "
       "IndexType, long, T) [with T = float, IndexType = unsigned int, DstDim = 2, IdxDim = -2]",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "index-add-copy-fill-out-of-range"},
      // ATen: index_add_/index_reduce_ (Indexing.cu), index_copy_ and index_fill_ (IndexKernel.cu lambdas)
      {"dstIndex < dstAddDimSize", "indexFuncLargeIndex", "/pytorch/aten/src/ATen/native/cuda/Indexing.cu",
       "index-add-copy-fill-out-of-range"},
      {"dstIndex < dstAddDimSize", "indexFuncSmallIndex", "/pytorch/aten/src/ATen/native/hip/Indexing.hip",
       "index-add-copy-fill-out-of-range"},
      {"idx >= 0 && idx < self_dim_size && \"index_copy_(): index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "index-add-copy-fill-out-of-range"},
      {"idx >= -self_dim_size && idx < self_dim_size && \"index out of bounds\"", "operator()",
       "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu", "index-add-copy-fill-out-of-range"},
      // near misses
      {"idx >= 0 && idx < self_dim_size", "operator()", "", "(none)"},
      {"dstIndex < dstAddDimSize + 1", "", "", "(none)"},
  };
  expect_hints(cases);
}

TEST(Hints, IndexSelectAcrossVersions) {
  const Expect cases[] = {
      {"srcIndex < srcSelectDimSize",
       "void indexSelectLargeIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, "
       "TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = float, IndexType = unsigned int, "
       "DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]",
       "/pytorch/aten/src/THC/THCTensorIndex.cu", "index-select-out-of-range"},
      {"srcIndex < srcSelectDimSize", "indexSelectSmallIndex", "../aten/src/ATen/native/cuda/Indexing.cu",
       "index-select-out-of-range"},
      {"srcIndex < srcSelectDimSize", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\Indexing.cu", "index-select-out-of-range"},
      // ROCm's hipified path (composer#2758)
      {"srcIndex < srcSelectDimSize", "indexSelectLargeIndex", "/pytorch/aten/src/ATen/native/hip/Indexing.hip",
       "index-select-out-of-range"},
  };
  expect_hints(cases);
}

TEST(Hints, ClassIndexAcrossVersions) {
  const Expect cases[] = {
      // THCUNN, 0.4: raw assert(), and the no-reduce kernels' double blanks
      {"t >= 0 && t < n_classes",
       "void cunn_SpatialClassNLLCriterion_updateOutput_kernel(T *, T *, T *, long *, T *, int, int, int, int, int, "
       "long) [with T = float, AccumT = float]",
       "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu", "class-index-out-of-range"},
      {"cur_target  >= 0 && cur_target  < n_classes",
       "void ClassNLLCriterion_updateOutput_no_reduce_kernel(int, "
       "THCDeviceTensor<long, 1, int, DefaultPtrTraits>, THCDeviceTensor<Dtype, 2, int, DefaultPtrTraits>, "
       "THCDeviceTensor<Dtype, 1, int, DefaultPtrTraits>, Dtype *, int, int) [with Dtype = float]",
       "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu", "class-index-out-of-range"},
      {"cur_target >= 0 && cur_target < n_classes", "ClassNLLCriterion_updateGradInput_no_reduce_kernel",
       "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu", "class-index-out-of-range"},
      // ATen Loss.cu and NLLLoss2d.cu
      {"t >= 0 && t < n_classes", "nll_loss_backward_reduce_cuda_kernel_2d",
       "/pytorch/aten/src/ATen/native/cuda/Loss.cu", "class-index-out-of-range"},
      {"t >= 0 && t < n_classes", "nll_loss2d_forward_kernel", "../aten/src/ATen/native/cuda/NLLLoss2d.cu",
       "class-index-out-of-range"},
      {"t >= 0 && t < n_classes", "nll_loss_forward_reduce_cuda_kernel_2d",
       "/pytorch/aten/src/ATen/native/hip/Loss.hip", "class-index-out-of-range"},
      // uint8 targets (CHECK_INDEX_IN_CLASS's unsigned branch, about 2.1 on): no lower bound
      {"t < n_classes", "nll_loss_forward_reduce_cuda_kernel_2d", "/pytorch/aten/src/ATen/native/cuda/Loss.cu",
       "class-index-out-of-range"},
      {"cur_target < n_classes", "nll_loss_forward_no_reduce_cuda_kernel", "/pytorch/aten/src/ATen/native/cuda/Loss.cu",
       "class-index-out-of-range"},
      {"t < n_classes", "", "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\Loss.cu",
       "class-index-out-of-range"},
      {"cur_target < n_classes", "nll_loss_backward_no_reduce_cuda_kernel",
       "/pytorch/aten/src/ATen/native/hip/Loss.hip", "class-index-out-of-range"},
      // near misses: the bare upper bound elsewhere, and the kernels' internal checks
      {"t < n_classes", "my_kernel", "my_ops.cu", "(none)"},
      {"t < n_classes", "", "", "(none)"},
      {"t < n_classes", "", "/pytorch/aten/src/ATen/native/cuda/MultiMarginLoss.cu", "(none)"},
      {"threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0", "nll_loss_forward_reduce_cuda_kernel_1d",
       "/pytorch/aten/src/ATen/native/cuda/Loss.cu", "(none)"},
      {"threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0",
       "void cunn_ClassNLLCriterion_updateOutput_kernel1(Dtype *, Dtype *, Dtype *, long *, Dtype *, int, int, long) "
       "[with Dtype = float]",
       "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu", "(none)"},
  };
  expect_hints(cases);
}

TEST(Hints, MultiMarginEmbeddingBagAndMaskedScatter) {
  const Expect cases[] = {
      {"target_k >= 0 && target_k < dim && \"target index is out of bounds\"", "MultiMarginLoss_forward_kernel",
       "/pytorch/aten/src/ATen/native/cuda/MultiMarginLoss.cu", "multi-margin-target-out-of-range"},
      {"target_k >= 0 && target_k < dim && \"target index is out of bounds\"", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\MultiMarginLoss.cu",
       "multi-margin-target-out-of-range"},
      {"target_k >= 0 && target_k < dim", "MultiMarginLoss_forward_kernel", "", "(none)"},
      // embedding_bag: THCUNN's LookupTableBag and ATen's EmbeddingBag.cu
      {"end >= begin",
       "void cunn_LookupTableBag_updateOutputKernel(long *, long *, Dtype *, Dtype *, long *, long, long, "
       "long, long, int, long *) [with Dtype = float, Acctype = float]",
       "/pytorch/aten/src/THCUNN/LookupTableBag.cu", "embedding-bag"},
      {"end >= begin", "EmbeddingBag_updateOutputKernel_max", "/pytorch/aten/src/ATen/native/cuda/EmbeddingBag.cu",
       "embedding-bag"},
      {"input[emb] < numRows", "EmbeddingBag_updateOutputKernel_max",
       "/pytorch/aten/src/ATen/native/cuda/EmbeddingBag.cu", "embedding-bag"},
      {"input[emb] < numRows", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\EmbeddingBag.cu", "embedding-bag"},
      {"end >= begin", "my_segment_kernel", "/src/ops/segments.cu", "(none)"},
      {"end >= begin", "", "", "(none)"},
      // masked_scatter_: 1.9's pointer form on ROCm (pytorch#60190), then 2.x's
      {"*totalElements <= srcSize", "masked_scatter_size_check",
       "/home/pytorch/aten/src/ATen/native/hip/IndexKernel.hip", "masked-scatter-source-too-small"},
      {"totalElements <= srcSize", "masked_scatter_size_check", "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu",
       "masked-scatter-source-too-small"},
      {"totalElements <= srcSize", "",
       "C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\cuda\\IndexKernel.cu",
       "masked-scatter-source-too-small"},
      {"totalElements <= srcSize", "my_kernel", "/src/ops/pack.cu", "(none)"},
  };
  expect_hints(cases);
}

// Checks whose condition names no user value: the kernel's file or function decides, and the hint says what the
// check is about (an asynchronous check, a dtype without a cast, an index that overflowed), never a label problem.
TEST(Hints, ChecksThatAreNotAboutAValue) {
  const Expect cases[] = {
      {"input[0] != 0", "_assert_async_cuda_kernel", "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu",
       "assert-async-failed"},
      {"input[0] != 0", "", "C:\\actions-runner\\_work\\pytorch\\aten\\src\\ATen\\native\\cuda\\TensorCompare.cu",
       "assert-async-failed"},
      {"input[0] != 0", "my_kernel", "/src/ops/mine.cu", "(none)"},
      {"false", "", "C:\\actions-runner\\_work\\pytorch\\c10/core/DynamicCast.h", "unsupported-dtype-cast"},
      {"false", "operator()", "/pytorch/c10/core/DynamicCast.h", "unsupported-dtype-cast"},
      {"false", "my_kernel", "/src/ops/mine.cu", "(none)"},
      {"input_index >= 0", "nll_loss2d_forward_kernel", "/pytorch/aten/src/ATen/native/cuda/NLLLoss2d.cu",
       "nll-loss-index-overflow"},
      {"index >= 0", "nll_loss_backward_reduce_cuda_kernel_2d", "/pytorch/aten/src/ATen/native/cuda/Loss.cu",
       "nll-loss-index-overflow"},
      {"index >= 0", "indexing_kernel", "/src/ops/mine.cu", "(none)"},
      {"input_index >= 0", "my_kernel", "/src/ops/mine.cu", "(none)"},
  };
  for (const Expect& c : cases) {
    EXPECT_EQ(id_of(find_hint({c.condition, c.function, c.file, 710})), c.id)
        << "condition \"" << c.condition << "\", function \"" << c.function << "\", file \"" << c.file << "\"";
  }
}

TEST(Hints, CompiledKernelsAcrossForms) {
  const Expect cases[] = {
      // Triton's device_assert on NVIDIA: unknown function and file, or a Python frame, or triton_helpers.py
      {"index out of bounds: 0 <= tmp4 < 32000", "unknown", "unknown", "compiled-index-out-of-bounds"},
      {"index out of bounds: r4 + (128*x1) < 25504", "unknown", "unknown", "compiled-index-out-of-bounds"},
      {"index out of bounds: 0 <= tmp14 < 24", "_call_with_frames_removed", "<frozen importlib._bootstrap_external>",
       "compiled-index-out-of-bounds"},
      {"index out of bounds: 0 <= tmp3 < 10", "unknown",
       "/usr/local/lib/python3.11/site-packages/torch/_inductor/runtime/triton_helpers.py",
       "compiled-index-out-of-bounds"},
      // Triton on AMD: "device assertion failed: '...', in <kernel> at <file>:<line>"
      {"index out of bounds: 0 <= tmp3 < 10", "triton_poi_fused_embedding_0", "/tmp/torchinductor_root/ab/cabcdef.py",
       "compiled-index-out-of-bounds"},
      {"out of bounds: 0 <= tmp3 < 10", "unknown", "unknown", "(none)"},
  };
  expect_hints(cases);
}

// Without a line's condition, a kernel's name alone: the new families by their real (demangled) names, and
// masked_scatter's check is not gather/scatter's.
TEST(Hints, NewFamiliesByKernelName) {
  struct Case {
    const char* kernel;
    const char* id;
  };
  const Case cases[] = {
      {"at::native::(anonymous namespace)::masked_scatter_size_check(long const*, bool const*, long)",
       "masked-scatter-source-too-small"},
      {"void at::native::(anonymous namespace)::MultiMarginLoss_forward_kernel<1, float, float>(float*, float const*, "
       "long const*, float const*, int, int, bool, float)",
       "multi-margin-target-out-of-range"},
      {"void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl<float>("
       "at::TensorIterator&, long, long, long)::{lambda(int)#1}>(long, at::native::index_copy_kernel_impl<float>("
       "at::TensorIterator&, long, long, long)::{lambda(int)#1})",
       "index-add-copy-fill-out-of-range"},
      {"void at::native::indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true>()",
       "index-add-copy-fill-out-of-range"},
      {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
       "gather-scatter-index-out-of-bounds"},
      {"void at::native::(anonymous namespace)::sampleMultinomialOnce<float, float>(long*, long, int, float const*, "
       "float const*, int, int)",
       "multinomial-invalid-distribution"},
  };
  for (const Case& c : cases) EXPECT_EQ(id_of(find_hint({{}, c.kernel, {}, 710})), c.id) << c.kernel;
}

TEST(Hints, WithoutAConditionTheKernelThenTheCode) {
  EXPECT_EQ(id_of(find_hint({{}, "nll_loss_forward_reduce_cuda_kernel_2d", {}, 710})), "class-index-out-of-range");
  EXPECT_EQ(id_of(find_hint({{}, "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, "
                                  "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>)",
                             {}, 710})),
            "index-select-out-of-range");
  EXPECT_EQ(id_of(find_hint({{}, "ctc_loss_log_alpha_gpu_kernel", {}, 710})), "ctc-loss");
  // A refused launch is about its configuration or its binary, not about the kernel's data.
  EXPECT_EQ(id_of(find_hint({{}, "ctc_loss_log_alpha_gpu_kernel", {}, 209})), "no-kernel-image");
  EXPECT_EQ(id_of(find_hint({{}, "nll_loss_forward_reduce_cuda_kernel_2d", {}, 9})), "too-many-threads");
  EXPECT_EQ(id_of(find_hint({{}, "my_kernel(float*)", {}, 9})), "too-many-threads");
  EXPECT_EQ(id_of(find_hint({{}, "my_kernel(float*)", {}, 209})), "no-kernel-image");
  EXPECT_EQ(id_of(find_hint({{}, "my_kernel(float*)", {}, 701})), "out-of-resources");
}

TEST(Hints, NothingKnownGivesNoHint) {
  EXPECT_FALSE(find_hint({"x > 0", "my_kernel(float*)", {}, 710}).has_value());
  EXPECT_FALSE(find_hint({}).has_value()) << "empty texts match no string";
  EXPECT_FALSE(find_hint({{}, {}, {}, 710}).has_value()) << "a device assert has no hint by its code alone";
}

TEST(Hints, ForALaunchACutConditionIsNoCondition) {
  DeviceMessage m;
  std::strcpy(m.condition, "t >= 0 && t <");
  std::strcpy(m.function, "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_EQ(id_of(hint_for_launch(&m, "", 710)), "(none)") << "an unknown condition";
  m.flags = kMessageConditionCut;
  EXPECT_EQ(id_of(hint_for_launch(&m, "", 710)), "class-index-out-of-range") << "by the line's function";
  EXPECT_EQ(id_of(hint_for_launch(nullptr, "nll_loss_forward_reduce_cuda_kernel_2d", 710)), "class-index-out-of-range");
}

}  // namespace
}  // namespace firstassert
