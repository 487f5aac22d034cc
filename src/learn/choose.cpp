#include "learn/choose.hpp"

#include <algorithm>
#include <vector>

namespace commsched::learn {

std::string_view choose_auto(const core::CommMatrix& m) {
  const auto n = static_cast<std::size_t>(m.size());
  if (n <= 2 || m.nonzeros() == 0) return "native";
  if (2 * m.nonzeros() > n * n) return "native";
  std::vector<Bytes> sizes;
  sizes.reserve(m.nonzeros());
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) sizes.push_back(e.bytes);
  const auto mid = sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() / 2);
  std::nth_element(sizes.begin(), mid, sizes.end());
  const Bytes median = *mid;
  const Bytes largest = *std::max_element(sizes.begin(), sizes.end());
  if (largest >= 8 * median) return "rs_nh";
  return "color";
}

}  // namespace commsched::learn
