// rs_n — random scheduling without heaps (paper 000 §7.1 item 3, the Fig. 9 loop with every
// message whole): each phase starts at a random row x (seeded) and walks the rows cyclically;
// each row takes its first still-unsent destination whose receiver is free this phase.
// Permutation; planning O(nnz · phases) worst case, near O(nnz · d) in practice.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

// splitmix64: tiny, portable and identical on every rank (std distributions are not portable).
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Shared by rs_n and rs_n_sort (000 §7.1 items 3 and 7): they differ only in the row order.
core::Plan random_schedule(const core::CommMatrix& m, const Options& opts, bool sort_by_size,
                           std::string_view id) {
  core::Plan plan = empty_plan(id, m, true);
  const Rank n = m.size();
  if (n <= 0) return plan;

  using Row = boost::container::small_vector<core::Entry, 16>;
  std::vector<Row> rows(static_cast<std::size_t>(n));  // CCOM: unsent entries per row
  std::vector<Rank> active;                            // rows with entries left, ascending
  for (Rank i = 0; i < n; ++i) {
    const auto r = m.row(i);
    Row& row = rows[static_cast<std::size_t>(i)];
    row.assign(r.begin(), r.end());
    if (sort_by_size)  // once, largest first; ties keep destination order
      std::stable_sort(row.begin(), row.end(), [](const core::Entry& a, const core::Entry& b) {
        return a.bytes > b.bytes;
      });
    if (!row.empty()) active.push_back(i);
  }
  std::uint64_t rng = opts.seed;
  std::vector<std::size_t> received(static_cast<std::size_t>(n), 0);  // phase stamp, 1-based
  for (std::size_t stamp = 1; !active.empty(); ++stamp) {
    const auto x = static_cast<Rank>(next_random(rng) % static_cast<std::uint64_t>(n));
    const std::size_t start = static_cast<std::size_t>(
        std::lower_bound(active.begin(), active.end(), x) - active.begin());
    core::Phase phase;
    for (std::size_t y = 0; y < active.size(); ++y) {
      const Rank i = active[(start + y) % active.size()];
      Row& row = rows[static_cast<std::size_t>(i)];
      auto pick = std::find_if(row.begin(), row.end(), [&](const core::Entry& e) {
        return received[static_cast<std::size_t>(e.peer)] != stamp;
      });
      if (pick == row.end()) continue;
      received[static_cast<std::size_t>(pick->peer)] = stamp;
      phase.transfers.push_back({i, pick->peer, {core::Piece{i, pick->peer, 0, pick->bytes}}});
      row.erase(pick);
    }
    std::erase_if(active, [&](Rank r) { return rows[static_cast<std::size_t>(r)].empty(); });
    plan.phases.push_back(std::move(phase));  // never empty: the first row visited always sends
  }
  return plan;
}


core::Plan plan_rs_n(const core::CommMatrix& m, const Options& opts) {
  return random_schedule(m, opts, false, "rs_n");
}

}  // namespace commsched::plan::detail
