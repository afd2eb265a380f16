// What to check, for the asserts and launch failures the field knows: a table in hints.json (one entry per failure,
// easy to extend), compiled into the library and matched when a report is written.
#pragma once

#include <optional>
#include <string>

namespace firstassert {

struct Hint {
  std::string id;
  std::string title;
  std::string text;
};

// The first entry whose condition appears in the device's assertion condition, else whose function appears in the
// failing function or kernel name, else (for launch errors) whose code matches. Matching is by substring, so an
// entry with a more specific string (binary_cross_entropy, embedding_bag) comes before a shorter one it contains.
std::optional<Hint> find_hint(const std::string& condition, const std::string& function, int code);

}  // namespace firstassert
