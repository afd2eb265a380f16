// report_json: the "firstassert/1" schema other tools read. Each test builds findings through a real Tracker, parses
// the output with nlohmann::json and checks keys and values; bytes that are not UTF-8 must not break the JSON.
#include "report/report_json.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace firstassert {
namespace {

using json = nlohmann::json;

constexpr int64_t kStart = 1764472365123456789;  // 2025-11-30T03:12:45.123456789Z

ProcessInfo process() {
  ProcessInfo p;
  p.pid = 4242;
  p.host = "node7";
  p.argv = {"python", "train.py", "--lr", "0.1"};
  p.rank = 3;
  p.start_time_ns = kStart;
  return p;
}

LaunchEvent event(const char* kernel, uintptr_t stream) {
  LaunchEvent e;
  e.kernel = kernel;
  e.stream = stream;
  e.grid = {64, 2, 1};
  e.block = {256, 1, 1};
  e.device = 1;
  e.shared_mem = 1024;
  return e;
}

ApiCall call(const char* api, int code, CallKind kind = CallKind::other) {
  ApiCall c;
  c.api = api;
  c.code = code;
  c.kind = kind;
  return c;
}

json render(const ProcessInfo& p, const Findings& f, const std::vector<LoadedModule>& modules = {}) {
  ReportInput in{p, f, modules, {"0.1.0", "cupti", "/usr/local/cuda/lib64/libcupti.so.13"}, false, kStart + 1000};
  std::string text = report_json(in);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  return json::parse(text);  // throws, failing the test, on invalid JSON or invalid UTF-8
}

TEST(ReportJson, FaultWithACulprit) {
  Tracker t(64);
  t.record_launch(event("_Z4finePf", 0x10));
  t.record_call(call("cudaDeviceSynchronize", 0, CallKind::sync_device));
  t.record_launch(event("_Z6kernelPi", 0x10));     // seq 1: the oldest pending, shown as the window's culprit
  t.record_launch(event("_Z7assertsPiS_", 0x20));  // seq 2: newest
  t.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  t.record_call(call("cudaMemcpy", 710));
  t.record_call(call("cudaMemcpy", 710));
  t.record_call(call("cudaFree", 700));
  std::vector<LoadedModule> modules = {{"/usr/bin/python3.11", 0x400000, "abcdef"}, {"/lib/libc.so.6", 0x7f00, ""}};
  json r = render(process(), t.findings(), modules);

  EXPECT_EQ(r["schema"], "firstassert/1");
  EXPECT_EQ(r["tool"]["name"], "firstassert");
  EXPECT_EQ(r["tool"]["version"], "0.1.0");
  EXPECT_EQ(r["tool"]["backend"], "cupti");

  const json& p = r["process"];
  EXPECT_EQ(p["pid"], 4242);
  EXPECT_EQ(p["host"], "node7");
  EXPECT_EQ(p["argv"], json({"python", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(p["rank"], 3);
  EXPECT_EQ(p["start_time"], "2025-11-30T03:12:45.123456Z");

  const json& e = r["first_error"];
  ASSERT_TRUE(e.is_object());
  EXPECT_EQ(e["api"], "cudaDeviceSynchronize");
  EXPECT_EQ(e["code"], 710);
  EXPECT_EQ(e["name"], "cudaErrorAssert");
  EXPECT_TRUE(e["time"].is_string());
  EXPECT_EQ(e["time"].get<std::string>().size(), std::string("2025-11-30T03:12:45.123456Z").size());
  EXPECT_TRUE(e["thread"].is_number_integer());
  EXPECT_GT(e["thread"].get<int>(), 0);

  const json& c = r["culprit"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["seq"], 1);
  EXPECT_EQ(c["kernel"], "kernel(int*)");
  EXPECT_EQ(c["mangled"], "_Z6kernelPi");
  EXPECT_EQ(c["grid"], json({64, 2, 1}));
  EXPECT_EQ(c["block"], json({256, 1, 1}));
  EXPECT_EQ(c["stream"], "0x10");
  EXPECT_EQ(c["device"], 1);
  EXPECT_TRUE(c["time"].is_string());
  EXPECT_EQ(c["confidence"], "window");
  EXPECT_TRUE(c["native_stack"].is_array());
  EXPECT_TRUE(c["python_stack"].is_array());

  ASSERT_TRUE(r["candidates"].is_array());
  ASSERT_EQ(r["candidates"].size(), 2u);
  EXPECT_EQ(r["candidates"][0]["seq"], 2);
  EXPECT_EQ(r["candidates"][1]["seq"], 1);
  EXPECT_EQ(r["candidates"][1]["kernel"], "kernel(int*)");

  EXPECT_EQ(r["device_messages"], json::array());

  const json& s = r["secondary"];
  EXPECT_EQ(s["count"], 3);
  ASSERT_EQ(s["sites"].size(), 2u);
  for (const json& site : s["sites"]) {
    if (site["api"] == "cudaMemcpy") {
      EXPECT_EQ(site["code"], 710);
      EXPECT_EQ(site["name"], "cudaErrorAssert");
      EXPECT_EQ(site["count"], 2);
    } else {
      EXPECT_EQ(site["api"], "cudaFree");
      EXPECT_EQ(site["code"], 700);
      EXPECT_EQ(site["name"], "cudaErrorIllegalAddress");
      EXPECT_EQ(site["count"], 1);
    }
  }

  ASSERT_EQ(r["recent_launches"].size(), 3u);
  EXPECT_EQ(r["recent_launches"][0]["seq"], 2);
  EXPECT_EQ(r["recent_launches"][2]["seq"], 0);

  ASSERT_EQ(r["modules"].size(), 2u);
  EXPECT_EQ(r["modules"][0]["path"], "/usr/bin/python3.11");
  EXPECT_EQ(r["modules"][0]["base"], "0x400000");
  EXPECT_EQ(r["modules"][0]["build_id"], "abcdef");
}

// What the job's side found in the values a launch was given goes to the culprit or candidate with that seq, as
// given; a seq the report does not name, and text that is not a JSON object, go nowhere.
TEST(ReportJson, LaunchValuesGoToTheLaunchWithTheirSeq) {
  Tracker t(64);
  t.record_launch(event("_Z6kernelPi", 0x10));     // seq 0: the culprit the window shows
  t.record_launch(event("_Z7assertsPiS_", 0x20));  // seq 1: the other candidate
  t.record_launch(event("_Z4laterPi", 0x20));      // seq 2: behind seq 1 on its stream
  t.record_call(call("cudaDeviceSynchronize", 710, CallKind::sync_device));
  std::map<uint64_t, std::string> values = {{0, R"({"found": false, "text": "none"})"},
                                            {1, R"({"found": true, "value": 10})"},
                                            {2, "not json"},
                                            {7, R"({"found": true})"}};
  Findings f = t.findings();
  ReportInput in{process(), f, {}, {"0.1.0", "cupti", ""}, false, kStart, &values};
  json r = json::parse(report_json(in));
  ASSERT_TRUE(r["culprit"].is_object());
  ASSERT_EQ(r["culprit"]["seq"], 0);
  EXPECT_EQ(r["culprit"]["values"], json::parse(values[0]));
  // No breadcrumbs and no device line: all three launches can have failed.
  std::map<int, json> candidates;
  for (const json& candidate : r["candidates"]) candidates[candidate["seq"].get<int>()] = candidate;
  ASSERT_EQ(candidates.size(), 3u) << r["candidates"].dump(2);
  ASSERT_EQ(r["candidates"].size(), 3u) << r["candidates"].dump(2);
  ASSERT_TRUE(candidates.contains(0) && candidates.contains(1) && candidates.contains(2)) << r["candidates"].dump(2);
  EXPECT_EQ(candidates[0]["values"], json::parse(values[0]));
  EXPECT_EQ(candidates[1]["values"], json::parse(values[1]));
  EXPECT_FALSE(candidates[2].contains("values")) << "its text is not a JSON object";
  for (const json& launch : r["recent_launches"]) EXPECT_FALSE(launch.contains("values"));
}

TEST(ReportJson, DriverErrorsUseDriverNames) {
  Tracker t(64);
  t.record_launch(event("_Z6kernelPi", 0));
  ApiCall c = call("cuCtxSynchronize", 700, CallKind::sync_device);
  c.domain = ApiDomain::driver;
  t.record_call(c);
  json r = render(process(), t.findings());
  EXPECT_EQ(r["first_error"]["name"], "CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST(ReportJson, CulpritIsNullWithoutCandidates) {
  Tracker t(64);
  t.record_launch(event("_Z6kernelPi", 0));
  t.record_call(call("cudaDeviceSynchronize", 0, CallKind::sync_device));
  t.record_call(call("cudaMemcpy", 710));
  json r = render(process(), t.findings());
  ASSERT_TRUE(r["first_error"].is_object());
  EXPECT_TRUE(r["culprit"].is_null());
  EXPECT_EQ(r["candidates"], json::array());
  EXPECT_EQ(r["recent_launches"].size(), 1u);
}

TEST(ReportJson, NoErrorAtAll) {
  Tracker t(64);
  ProcessInfo p = process();
  p.rank.reset();
  json r = render(p, t.findings());
  EXPECT_EQ(r["schema"], "firstassert/1");
  EXPECT_TRUE(r["first_error"].is_null());
  EXPECT_TRUE(r["culprit"].is_null());
  EXPECT_TRUE(r["process"]["rank"].is_null());
  EXPECT_EQ(r["secondary"]["count"], 0);
  EXPECT_EQ(r["secondary"]["sites"], json::array());
  EXPECT_EQ(r["recent_launches"], json::array());
  EXPECT_EQ(r["modules"], json::array());
}

TEST(ReportJson, GraphLaunchHasNoKernelName) {
  Tracker t(64);
  LaunchEvent e = event(nullptr, 0x10);
  e.graph = true;
  e.api = LaunchApi::cudaGraphLaunch;
  t.record_launch(e);
  t.record_call(call("cudaStreamSynchronize", 710, CallKind::sync_stream));
  json r = render(process(), t.findings());
  ASSERT_TRUE(r["culprit"].is_object());
  EXPECT_TRUE(r["culprit"]["kernel"].is_null());
  EXPECT_TRUE(r["culprit"]["mangled"].is_null());
}

TEST(ReportJson, InvalidUtf8StaysValidJson) {
  Tracker t(64);
  const char* bad_kernel = "kern\xff\xfe_\xc3(x\x80";
  t.record_launch(event(bad_kernel, 0));
  t.record_call(call("cudaDeviceSynchronize\xc0", 710));
  ProcessInfo p = process();
  p.argv = {"python", "caf\xe9.py", std::string("nul\0inside", 10), "\xed\xa0\x80"};  // Latin-1, NUL, surrogate
  p.host = "h\xffst";
  json r;
  ASSERT_NO_THROW(r = render(p, t.findings()));
  ASSERT_EQ(r["process"]["argv"].size(), 4u);
  EXPECT_EQ(r["process"]["argv"][0], "python");
  EXPECT_TRUE(r["process"]["argv"][1].is_string());
  EXPECT_TRUE(r["culprit"]["kernel"].is_string());
  EXPECT_TRUE(r["culprit"]["mangled"].is_string());
  EXPECT_EQ(r["culprit"]["mangled"].get<std::string>().substr(0, 4), "kern");
}

TEST(ReportJson, IsoTime) {
  EXPECT_EQ(iso_time(kStart), "2025-11-30T03:12:45.123456Z");
  EXPECT_EQ(iso_time(1000000000), "1970-01-01T00:00:01.000000Z");
  EXPECT_EQ(iso_time(0), "");
}

}  // namespace
}  // namespace firstassert
