// maxsum — Max-Sum phases (paper 003 §3.3.2; adapted form §4.1.2): each phase is the partial
// permutation of the remaining messages with the largest total size (an assignment problem,
// Hungarian algorithm O(k³) on the k ranks still sending or receiving); its messages go whole.
// Above 128 such ranks a phase is picked greedily, largest message first (a 1/2-approximation).
// Permutation. With Options::pair_time the sums are of expected times (003 §4.1).
#include <algorithm>
#include <limits>
#include <vector>

#include "plan/detail.hpp"
#include "plan/matching.hpp"

namespace commsched::plan::detail {

namespace {

constexpr std::size_t kExactLimit = 128;

// Maximum-weight assignment of rows to columns of the dense k1 x k2 matrix w (row-major, zero
// where no message), Hungarian algorithm with potentials; returns the column of each row.
std::vector<std::size_t> assignment(const std::vector<double>& w, std::size_t k1, std::size_t k2) {
  const std::size_t k = std::max(k1, k2);
  auto cost = [&](std::size_t i, std::size_t j) {  // 1-based, padded with zeros
    return (i <= k1 && j <= k2) ? -w[(i - 1) * k2 + (j - 1)] : 0.0;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(k + 1, 0.0), v(k + 1, 0.0), minv(k + 1);
  std::vector<std::size_t> p(k + 1, 0), way(k + 1, 0);
  std::vector<char> used(k + 1);
  for (std::size_t i = 1; i <= k; ++i) {
    p[0] = i;
    std::size_t j0 = 0;
    std::fill(minv.begin(), minv.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const std::size_t i0 = p[j0];
      double delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= k; ++j) {
        if (used[j]) continue;
        const double cur = cost(i0, j) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (std::size_t j = 0; j <= k; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const std::size_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<std::size_t> col_of(k1, SIZE_MAX);
  for (std::size_t j = 1; j <= k; ++j)
    if (p[j] >= 1 && p[j] <= k1 && j <= k2) col_of[p[j] - 1] = j - 1;
  return col_of;
}

}  // namespace

core::Plan plan_maxsum(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("maxsum", m, true);
  const std::vector<WeightedMessage> msgs = weighted_messages(m, opts);
  const auto nn = static_cast<std::size_t>(m.size());
  std::vector<char> done(msgs.size(), 0);
  std::size_t left = msgs.size();
  while (left > 0) {
    // Ranks still sending (rows) and receiving (columns), compacted.
    std::vector<std::size_t> row_id(nn, SIZE_MAX), col_id(nn, SIZE_MAX);
    std::size_t k1 = 0, k2 = 0;
    for (std::size_t e = 0; e < msgs.size(); ++e) {
      if (done[e]) continue;
      auto& r = row_id[static_cast<std::size_t>(msgs[e].src)];
      auto& c = col_id[static_cast<std::size_t>(msgs[e].dst)];
      if (r == SIZE_MAX) r = k1++;
      if (c == SIZE_MAX) c = k2++;
    }
    std::vector<std::size_t> chosen;
    if (std::max(k1, k2) <= kExactLimit) {
      std::vector<double> w(k1 * k2, 0.0);
      std::vector<std::size_t> at(k1 * k2, SIZE_MAX);
      for (std::size_t e = 0; e < msgs.size(); ++e) {
        if (done[e]) continue;
        const std::size_t cell = row_id[static_cast<std::size_t>(msgs[e].src)] * k2 +
                                 col_id[static_cast<std::size_t>(msgs[e].dst)];
        w[cell] = msgs[e].weight;
        at[cell] = e;
      }
      const std::vector<std::size_t> col_of = assignment(w, k1, k2);
      for (std::size_t i = 0; i < k1; ++i)
        if (col_of[i] != SIZE_MAX && at[i * k2 + col_of[i]] != SIZE_MAX)
          chosen.push_back(at[i * k2 + col_of[i]]);
      std::sort(chosen.begin(), chosen.end());
    } else {
      std::vector<std::size_t> order;
      for (std::size_t e = 0; e < msgs.size(); ++e)
        if (!done[e]) order.push_back(e);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return msgs[a].weight > msgs[b].weight;
      });
      std::vector<char> sending(nn, 0), receiving(nn, 0);
      for (std::size_t e : order) {
        const auto s = static_cast<std::size_t>(msgs[e].src), r = static_cast<std::size_t>(msgs[e].dst);
        if (sending[s] || receiving[r]) continue;
        sending[s] = receiving[r] = 1;
        chosen.push_back(e);
      }
      std::sort(chosen.begin(), chosen.end());
    }
    if (chosen.empty()) break;  // cannot happen: any message alone is a positive assignment
    core::Phase phase;
    for (std::size_t e : chosen) {
      phase.transfers.push_back(
          {msgs[e].src, msgs[e].dst, {core::Piece{msgs[e].src, msgs[e].dst, 0, msgs[e].bytes}}});
      done[e] = 1;
      --left;
    }
    plan.phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace commsched::plan::detail
