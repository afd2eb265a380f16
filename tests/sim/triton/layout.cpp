#include "layout.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace simtriton {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// The integers of `key = [a, b, ...]` in an attribute dictionary's text; false when absent.
bool int_list(std::string_view text, std::string_view key, std::vector<unsigned>* out) {
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    bool starts_word = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    size_t open = text.find_first_not_of(" =", at + key.size());
    if (starts_word && open != std::string_view::npos && text[open] == '[' &&
        text.substr(at + key.size(), open - at - key.size()).find('=') != std::string_view::npos) {
      size_t close = text.find(']', open);
      if (close == std::string_view::npos) return false;
      out->clear();
      std::string_view items = text.substr(open + 1, close - open - 1);
      while (!(items = trim(items)).empty()) {
        size_t comma = items.find(',');
        out->push_back(static_cast<unsigned>(std::stoul(std::string(trim(items.substr(0, comma))))));
        if (comma == std::string_view::npos) break;
        items.remove_prefix(comma + 1);
      }
      return true;
    }
    at += key.size();
  }
  return false;
}

}  // namespace

std::shared_ptr<const Layout> parse_layout(std::string_view text, const std::map<std::string, std::string>& aliases,
                                           std::string* error) {
  text = trim(text);
  for (int depth = 0; depth < 16 && text.rfind("#ttg.", 0) != 0; ++depth) {
    auto alias = aliases.find(std::string(text));
    if (alias == aliases.end()) {
      *error = "unknown tensor encoding " + std::string(text);
      return nullptr;
    }
    text = trim(alias->second);
  }
  auto layout = std::make_shared<Layout>();
  if (text.rfind("#ttg.blocked<", 0) == 0) {
    layout->kind = Layout::Kind::Blocked;
    if (!int_list(text, "sizePerThread", &layout->size_per_thread) ||
        !int_list(text, "threadsPerWarp", &layout->threads_per_warp) ||
        !int_list(text, "warpsPerCTA", &layout->warps_per_cta) || !int_list(text, "order", &layout->order)) {
      *error = "unreadable blocked layout " + std::string(text);
      return nullptr;
    }
    size_t rank = layout->size_per_thread.size();
    if (layout->threads_per_warp.size() != rank || layout->warps_per_cta.size() != rank ||
        layout->order.size() != rank) {
      *error = "inconsistent blocked layout " + std::string(text);
      return nullptr;
    }
    return layout;
  }
  if (text.rfind("#ttg.slice<", 0) == 0) {
    layout->kind = Layout::Kind::Slice;
    size_t dim = text.find("dim");
    size_t parent = text.find("parent");
    if (dim == std::string_view::npos || parent == std::string_view::npos) {
      *error = "unreadable slice layout " + std::string(text);
      return nullptr;
    }
    size_t digits = text.find_first_of("0123456789", dim);
    layout->dim = static_cast<unsigned>(std::stoul(std::string(text.substr(digits))));
    // The parent runs from after "parent =" to the slice's closing "}>" (the last two characters).
    size_t start = text.find('=', parent) + 1;
    std::string_view parent_text = text.substr(start, text.size() - 2 - start);
    layout->parent = parse_layout(parent_text, aliases, error);
    if (!layout->parent) return nullptr;
    return layout;
  }
  size_t end = text.find('<');
  *error = "tensor encoding " + std::string(text.substr(0, end)) + " is not supported";
  return nullptr;
}

std::vector<unsigned> threads_holding(const Layout& layout, const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& coord, unsigned threads_per_warp) {
  if (layout.kind == Layout::Kind::Slice) {
    // Triton's SliceEncodingAttr: the parent layout over the shape with a size-1 dimension put back at `dim`. The
    // element's coordinate along that dimension is free, so every parent thread along it holds the element.
    std::vector<int64_t> parent_shape(shape), parent_coord(coord);
    parent_shape.insert(parent_shape.begin() + layout.dim, 1);
    parent_coord.insert(parent_coord.begin() + layout.dim, 0);
    return threads_holding(*layout.parent, parent_shape, parent_coord, threads_per_warp);
  }
  // Triton's BlockedEncodingAttr: along dimension d, thread slot q = warp_d * threadsPerWarp[d] + lane_d holds the
  // sizePerThread[d] consecutive elements from q * sizePerThread[d]; the CTA tile (sizePerThread * threadsPerWarp *
  // warpsPerCTA) repeats to cover a larger tensor, and a smaller tensor wraps around it (element positions modulo
  // the tensor's size: the layout broadcasts, several threads hold the same element).
  size_t rank = layout.size_per_thread.size();
  std::vector<std::vector<unsigned>> slots(rank);  // per dimension: the slots q holding coord[d]
  for (size_t d = 0; d < rank; ++d) {
    int64_t spt = layout.size_per_thread[d], tpw = layout.threads_per_warp[d], wpc = layout.warps_per_cta[d];
    int64_t tile = spt * tpw * wpc;
    int64_t extent = std::min<int64_t>(d < shape.size() ? shape[d] : 1, tile);
    int64_t want = coord[d] % extent;
    for (int64_t q = 0; q < tpw * wpc; ++q) {
      for (int64_t k = 0; k < spt; ++k) {
        if ((q * spt + k) % extent == want) {
          slots[d].push_back(static_cast<unsigned>(q));
          break;
        }
      }
    }
  }
  // Lanes and warps are numbered along `order`: order[0] is the fastest-varying dimension.
  std::set<unsigned> threads;
  std::vector<size_t> pick(rank, 0);
  while (true) {
    unsigned lane = 0, warp = 0, lane_stride = 1, warp_stride = 1;
    for (size_t i = 0; i < rank; ++i) {
      unsigned d = layout.order[i];
      unsigned q = slots[d][pick[d]];
      lane += (q % layout.threads_per_warp[d]) * lane_stride;
      warp += (q / layout.threads_per_warp[d]) * warp_stride;
      lane_stride *= layout.threads_per_warp[d];
      warp_stride *= layout.warps_per_cta[d];
    }
    threads.insert(warp * threads_per_warp + lane);
    size_t d = 0;
    while (d < rank && ++pick[d] == slots[d].size()) pick[d++] = 0;
    if (d == rank) break;
  }
  return {threads.begin(), threads.end()};
}

}  // namespace simtriton
