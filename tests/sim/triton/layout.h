// Tensor layouts (TritonGPU encodings): which threads of a block hold each element of a tensor. The interpreter
// computes values over whole tensors; layouts only matter to name the threads a failing tt.assert stops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simtriton {

struct Layout {
  enum class Kind { Blocked, Slice };
  Kind kind = Kind::Blocked;
  // #ttg.blocked
  std::vector<unsigned> size_per_thread, threads_per_warp, warps_per_cta, order;
  // #ttg.slice
  unsigned dim = 0;
  std::shared_ptr<const Layout> parent;
};

// Parses an encoding as written in a tensor type: an alias (#blocked1), resolved through `aliases` (alias name ->
// its definition's text), or an inline #ttg.blocked<{...}> / #ttg.slice<{...}>. Null, with why in *error, for
// encodings this does not know (mma, linear, shared, ...).
std::shared_ptr<const Layout> parse_layout(std::string_view text, const std::map<std::string, std::string>& aliases,
                                           std::string* error);

// The threads (warp * threads_per_warp + lane) holding the element at `coord` of a tensor of `shape` in `layout`,
// ascending. Replicated elements are held by several threads.
std::vector<unsigned> threads_holding(const Layout& layout, const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& coord, unsigned threads_per_warp);

}  // namespace simtriton
