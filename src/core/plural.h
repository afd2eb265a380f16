// "1 launch", "3 launches": a count with the word that agrees with it, for the reasons and summaries people read.
#pragma once

#include <string>
#include <string_view>

namespace firstassert {

template <typename Count>
std::string plural(Count n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace firstassert
