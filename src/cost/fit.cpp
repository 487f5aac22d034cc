#include "cost/fit.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace commsched::cost {

Link fit_link(const std::vector<Bytes>& sizes, const std::vector<double>& times) {
  constexpr double kLeastBeta = 1e-13;
  std::vector<std::pair<double, double>> pts;  // (bytes, seconds), by size
  for (std::size_t i = 0; i < sizes.size() && i < times.size(); ++i)
    if (times[i] > 0) pts.emplace_back(static_cast<double>(sizes[i]), times[i]);
  std::sort(pts.begin(), pts.end());
  Link line;
  line.beta_s_per_byte = kLeastBeta;
  if (pts.empty()) return line;
  double beta = 0;
  if (pts.size() == 1) {
    beta = pts[0].first > 0 ? pts[0].second / pts[0].first : 0;
  } else {
    // The larger half: from the median size up (the upper middle one when the count is even).
    const std::size_t from = pts.size() == 2 ? 0 : pts.size() / 2;
    const double n = static_cast<double>(pts.size() - from);
    double mx = 0, my = 0;
    for (std::size_t i = from; i < pts.size(); ++i) {
      mx += pts[i].first / n;
      my += pts[i].second / n;
    }
    double sxy = 0, sxx = 0;
    for (std::size_t i = from; i < pts.size(); ++i) {
      sxy += (pts[i].first - mx) * (pts[i].second - my);
      sxx += (pts[i].first - mx) * (pts[i].first - mx);
    }
    beta = sxx > 0 ? sxy / sxx : 0;
  }
  line.beta_s_per_byte = std::max(beta, kLeastBeta);
  line.alpha_s = std::max(0.0, pts[0].second - line.beta_s_per_byte * pts[0].first);
  return line;
}

}  // namespace commsched::cost
