// The device assertion parser (src/core/device_assert_line.h) against its golden cases (golden/device_assert_lines.txt:
// one per form a log delivers), and the guarantees callers rely on.
#include "core/device_assert_line.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace firstassert {
namespace {

std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == 't' || text[i + 1] == 'r' || text[i + 1] == '\\')) {
      out += text[i + 1] == 't' ? '\t' : text[i + 1] == 'r' ? '\r' : '\\';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string flags_text(const DeviceMessage& m) {
  std::string out;
  auto add = [&](DeviceMessageFlag flag, const char* name) {
    if (m.has(flag)) out += std::string(out.empty() ? "" : ",") + name;
  };
  add(kMessageNoFunction, "no-function");
  add(kMessageNoLocation, "no-location");
  add(kMessageConditionCut, "condition-cut");
  add(kMessageGarbled, "garbled");
  add(kMessageNoPosition, "no-position");
  add(kMessageUnquoted, "unquoted");
  return out;
}

std::string render(const DeviceMessage& m) {
  std::ostringstream out;
  out << (m.dialect == DeviceDialect::sycl ? "sycl" : m.dialect == DeviceDialect::hip ? "hip" : "cuda") << " file=" << m.file << " line=" << m.line
      << " function=" << m.function << " block=" << m.block[0] << "," << m.block[1] << "," << m.block[2]
      << " thread=" << m.thread[0] << "," << m.thread[1] << "," << m.thread[2] << " condition=" << m.condition
      << " flags=" << flags_text(m);
  return out.str();
}

struct Case {
  int number = 0;  // the golden file's line of the input
  std::string input;
  std::vector<std::string> expected;  // empty: no record
};

std::vector<Case> golden_cases() {
  std::ifstream in(FIRSTASSERT_GOLDEN_DIR "/device_assert_lines.txt");
  std::vector<Case> cases;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.starts_with("< ")) {
      cases.push_back({number, unescape(text.substr(2)), {}});
    } else if (text.starts_with("> ") && !cases.empty() && text != "> none") {
      cases.back().expected.push_back(text.substr(2));
    }
  }
  return cases;
}

TEST(DeviceAssertLine, GoldenCases) {
  std::vector<Case> cases = golden_cases();
  ASSERT_GE(cases.size(), 40u) << "the golden file was not read whole";
  for (const Case& c : cases) {
    DeviceMessage found[8];
    size_t n = parse_device_asserts(c.input, found, std::size(found));
    std::vector<std::string> got;
    for (size_t i = 0; i < std::min(n, std::size(found)); ++i) got.push_back(render(found[i]));
    EXPECT_EQ(got, c.expected) << "golden line " << c.number << ": " << c.input;
  }
}

TEST(DeviceAssertLine, ARefusedLineLeavesTheOutputAlone) {
  DeviceMessage m;
  m.line = 77;
  std::strcpy(m.function, "untouched");
  EXPECT_FALSE(parse_device_assert("a.out: a.c:5: main: Assertion `0' failed.", m));
  EXPECT_EQ(m.line, 77u);
  EXPECT_STREQ(m.function, "untouched");
}

TEST(DeviceAssertLine, MoreRecordsThanRoomAreCountedNotWritten) {
  std::string line;
  for (int i = 0; i < 5; ++i)
    line += "k.cu:" + std::to_string(i + 1) + ": k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed. ";
  DeviceMessage two[2];
  EXPECT_EQ(parse_device_asserts(line, two, 2), 5u);
  EXPECT_EQ(two[0].line, 1u);
  EXPECT_EQ(two[1].line, 2u);
  EXPECT_EQ(parse_device_asserts(line, nullptr, 0), 5u);
}

TEST(DeviceAssertLine, LongFieldsAreCutAndTerminated) {
  std::string file = "/" + std::string(400, 'f') + ".cu";
  std::string function(400, 'g');
  std::string condition(900, 'c');
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(file + ":9: " + function + ": block: [0,0,0], thread: [0,0,0] Assertion `" +
                                      condition + "` failed.",
                                  m));
  EXPECT_EQ(std::string(m.file), file.substr(0, sizeof m.file - 1));
  EXPECT_EQ(std::string(m.function), function.substr(0, sizeof m.function - 1));
  EXPECT_EQ(std::string(m.condition), condition.substr(0, sizeof m.condition - 1));
  EXPECT_EQ(m.line, 9u);
}

TEST(DeviceAssertLine, SignatureIsFoundWhereARecordWouldStart) {
  std::string_view line = "a.cu:5: k: block: [0,0,0], thread: [0,0,0] Assertion `x";
  EXPECT_EQ(find_device_assert_signature(line), line.find("block: ["));
  EXPECT_EQ(find_device_assert_signature("f.cpp:1: g: global id: [1,0,0], local id: [0,0,0]"), 12u);
  EXPECT_EQ(find_device_assert_signature("no record here"), std::string_view::npos);
}

}  // namespace
}  // namespace firstassert
