#include "hints.h"

#include <nlohmann/json.hpp>

namespace firstassert {

extern const char kHintsJson[];  // hints.json, embedded at build time (hints_data.cpp)

namespace {

using nlohmann::json;

constexpr int kDeviceAssertCode = 710;  // cudaErrorAssert

const json& table() {
  static const json* parsed = [] {
    json j = json::parse(kHintsJson, nullptr, false);
    return new json(j.is_array() ? j : json::array());
  }();
  return *parsed;
}

// Conditions are compared without their blanks: spacing differs between PyTorch versions and the log's reflow.
std::string without_blanks(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != ' ' && c != '\t') out += c;
  }
  return out;
}

bool any_in(const json& list, std::string_view text) {
  if (!list.is_array() || text.empty()) return false;
  for (const json& needle : list) {
    if (needle.is_string() && text.find(needle.get<std::string>()) != std::string_view::npos) return true;
  }
  return false;
}

bool condition_matches(const json& alternative, const std::string& condition) {
  for (const json& c : alternative.value("conditions", json::array())) {
    if (c.is_string() && without_blanks(c.get<std::string>()) == condition) return true;
  }
  for (const json& p : alternative.value("condition_prefixes", json::array())) {
    if (p.is_string() && condition.starts_with(without_blanks(p.get<std::string>()))) return true;
  }
  return false;
}

bool alternative_matches(const json& alternative, const std::string& condition, const HintQuery& q) {
  if (!alternative.is_object() || !condition_matches(alternative, condition)) return false;
  if (alternative.contains("functions") && !any_in(alternative["functions"], q.function)) return false;
  if (alternative.contains("files") && !any_in(alternative["files"], q.file)) return false;
  return true;
}

Hint make(const json& entry) {
  return {entry.value("id", ""), entry.value("title", ""), entry.value("hint", "")};
}

}  // namespace

std::optional<Hint> find_hint(const HintQuery& q) {
  const json& hints = table();
  if (!q.condition.empty()) {
    std::string condition = without_blanks(q.condition);
    for (const json& h : hints) {
      for (const json& alternative : h.value("asserts", json::array())) {
        if (alternative_matches(alternative, condition, q)) return make(h);
      }
    }
    return std::nullopt;
  }
  // A kernel's name tells what its device-side checks are about; a launch the API refused (9, 209, 701) says
  // nothing of the kernel's data, whatever its name.
  if (q.code == kDeviceAssertCode || q.code == 0) {
    for (const json& h : hints) {
      if (any_in(h.value("kernels", json::array()), q.function)) return make(h);
    }
  }
  for (const json& h : hints) {
    for (const json& c : h.value("codes", json::array())) {
      if (c.is_number_integer() && c.get<int>() == q.code) return make(h);
    }
  }
  return std::nullopt;
}

std::optional<Hint> hint_for_launch(const DeviceMessage* message, std::string_view kernel, int code) {
  HintQuery q{{}, kernel, {}, code};
  if (message != nullptr) {
    q.function = message->function[0] != '\0' ? std::string_view(message->function) : kernel;
    q.file = message->file;
    if (!message->has(kMessageConditionCut)) q.condition = message->condition;
  }
  return find_hint(q);
}

}  // namespace firstassert
