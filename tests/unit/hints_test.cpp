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
      {"dstIndex < dstAddDimSize", "indexAddSmallIndex", "", "(none)"},
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
  for (const Expect& c : cases) {
    EXPECT_EQ(id_of(find_hint({c.condition, c.function, c.file, 710})), c.id)
        << "condition \"" << c.condition << "\", function \"" << c.function << "\", file \"" << c.file << "\"";
  }
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
