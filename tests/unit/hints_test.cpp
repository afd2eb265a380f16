// Hints: the table of known failures (src/report/hints.json, embedded in the library) and find_hint, which picks the
// first entry whose condition is in the device's assertion condition, else whose function is in the failing
// function's name, else whose code is the launch error's. The table is read here from its source file
// (FIRSTASSERT_HINTS_JSON, set by meson) so that every entry added later is checked without touching this test:
// well-formed, and each of its match strings and codes leads find_hint to that entry (no entry shadows another).
#include "report/hints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
    ASSERT_TRUE(e.contains("match") && e["match"].is_object()) << id << ": no match object";
    const json& match = e["match"];
    EXPECT_FALSE(match.empty()) << id << ": matches nothing";
    for (const auto& [key, list] : match.items()) {
      EXPECT_TRUE(key == "conditions" || key == "functions" || key == "codes") << id << ": unknown key " << key;
      ASSERT_TRUE(list.is_array()) << id << "." << key;
      EXPECT_FALSE(list.empty()) << id << "." << key;
      for (const json& needle : list) {
        if (key == "codes") {
          EXPECT_TRUE(needle.is_number_integer()) << id << ": code " << needle.dump();
        } else {
          ASSERT_TRUE(needle.is_string()) << id << "." << key << ": " << needle.dump();
          // An empty string would be in every condition or name and capture everything after it.
          EXPECT_FALSE(needle.get<std::string>().empty()) << id << "." << key;
        }
      }
    }
  }
}

// Each match string and code, given alone, must select its own entry: an earlier entry whose string is a part of
// it (or equal to it) would answer instead, and the later entry would never be seen for that input.
TEST(Hints, EveryMatchStringAndCodeSelectsItsOwnEntry) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  for (const json& e : t) {
    std::string id = e.value("id", "");
    const json match = e.value("match", json::object());
    for (const json& c : match.value("conditions", json::array()))
      EXPECT_EQ(id_of(find_hint(c.get<std::string>(), "", 0)), id) << "condition \"" << c.get<std::string>() << "\"";
    for (const json& f : match.value("functions", json::array()))
      EXPECT_EQ(id_of(find_hint("", f.get<std::string>(), 0)), id) << "function \"" << f.get<std::string>() << "\"";
    for (const json& c : match.value("codes", json::array()))
      EXPECT_EQ(id_of(find_hint("", "", c.get<int>())), id) << "code " << c.get<int>();
  }
}

// Weaker than the test above: every entry can be reached by at least one of its strings or codes.
TEST(Hints, EveryEntryIsReachable) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  for (const json& e : t) {
    std::string id = e.value("id", "");
    const json match = e.value("match", json::object());
    bool reached = false;
    for (const json& c : match.value("conditions", json::array()))
      reached = reached || id_of(find_hint(c.get<std::string>(), "", 0)) == id;
    for (const json& f : match.value("functions", json::array()))
      reached = reached || id_of(find_hint("", f.get<std::string>(), 0)) == id;
    for (const json& c : match.value("codes", json::array()))
      reached = reached || id_of(find_hint("", "", c.get<int>())) == id;
    EXPECT_TRUE(reached) << id << " is never returned";
  }
}

TEST(Hints, TheEmbeddedTableIsTheSourceFile) {
  json t = table();
  ASSERT_TRUE(t.is_array());
  ASSERT_FALSE(t.empty());
  const json& first = t[0];
  std::optional<Hint> h = find_hint(first["match"]["conditions"][0].get<std::string>(), "", 0);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->id, first["id"]);
  EXPECT_EQ(h->title, first["title"]);
  EXPECT_EQ(h->text, first["hint"]) << "the hint's text is the entry's \"hint\"";
}

// Matching is by substring: real conditions and names carry more than the table's strings.
TEST(Hints, MatchesSubstringsOfRealConditionsAndNames) {
  EXPECT_EQ(id_of(find_hint("srcIndex < srcSelectDimSize", "", 0)), "index-select-out-of-range");
  EXPECT_EQ(id_of(find_hint("", "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, "
                                "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>)",
                            0)),
            "index-select-out-of-range");
  EXPECT_EQ(id_of(find_hint("", "nll_loss_forward_reduce_cuda_kernel_2d", 0)), "class-index-out-of-range");
  EXPECT_EQ(id_of(find_hint("index out of bounds: 0 <= tmp4 < 128", "triton_poi_fused_index_0", 0)),
            "gather-scatter-index-out-of-bounds");
}

TEST(Hints, ConditionBeatsFunctionBeatsCode) {
  // The condition is the device's own words: it wins over a function name that points elsewhere.
  EXPECT_EQ(id_of(find_hint("t >= 0 && t < n_classes", "indexSelectSmallIndex", 9)), "class-index-out-of-range");
  // No condition matches: the function decides, before the code.
  EXPECT_EQ(id_of(find_hint("x > 0", "ctc_loss_log_alpha_gpu_kernel", 209)), "ctc-loss");
  // Only the code is known (a refused launch of a custom kernel).
  EXPECT_EQ(id_of(find_hint("", "my_kernel(float*)", 9)), "too-many-threads");
  EXPECT_EQ(id_of(find_hint("", "my_kernel(float*)", 209)), "no-kernel-image");
  EXPECT_EQ(id_of(find_hint("", "my_kernel(float*)", 701)), "out-of-resources");
}

TEST(Hints, NothingKnownGivesNoHint) {
  EXPECT_FALSE(find_hint("x > 0", "my_kernel(float*)", 710).has_value());
  EXPECT_FALSE(find_hint("", "", 0).has_value()) << "empty texts match no string";
  EXPECT_FALSE(find_hint("", "", 710).has_value()) << "a device assert has no hint by its code alone";
}

}  // namespace
}  // namespace firstassert
