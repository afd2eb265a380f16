#include "hints.h"

#include <nlohmann/json.hpp>

namespace firstassert {

extern const char kHintsJson[];  // hints.json, embedded at build time (hints_data.cpp)

namespace {

using nlohmann::json;

const json& table() {
  static const json* parsed = [] {
    json j = json::parse(kHintsJson, nullptr, false);
    return new json(j.is_array() ? j : json::array());
  }();
  return *parsed;
}

bool contains_any(const json& list, const std::string& text) {
  if (!list.is_array() || text.empty()) return false;
  for (const json& needle : list) {
    if (needle.is_string() && text.find(needle.get<std::string>()) != std::string::npos) return true;
  }
  return false;
}

Hint make(const json& entry) {
  return {entry.value("id", ""), entry.value("title", ""), entry.value("hint", "")};
}

}  // namespace

std::optional<Hint> find_hint(const std::string& condition, const std::string& function, int code) {
  const json& hints = table();
  for (const json& h : hints) {
    if (contains_any(h["match"].value("conditions", json::array()), condition)) return make(h);
  }
  for (const json& h : hints) {
    if (contains_any(h["match"].value("functions", json::array()), function)) return make(h);
  }
  for (const json& h : hints) {
    for (const json& c : h["match"].value("codes", json::array())) {
      if (c.is_number_integer() && c.get<int>() == code) return make(h);
    }
  }
  return std::nullopt;
}

}  // namespace firstassert
