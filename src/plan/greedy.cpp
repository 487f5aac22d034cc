// greedy — greedy scheduling (paper 002 §4.4 GS, Fig. 12): in each step every rank, in rank
// order, pairs with the first peer in its (sorted) list it still has to exchange with (either
// direction) that is still free this step; the pair moves both directions at once. Permutation;
// planning O(nnz · steps) — each step scans only the unfinished lists of still-active ranks.
#include <algorithm>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

namespace {

// One unordered pair {i, peer} still to exchange, seen from i.
struct Peer {
  Rank peer;
  Bytes out;  // bytes i sends to peer (0 if none)
  Bytes in;   // bytes peer sends to i (0 if none; unused for the self pair)
};

using PeerList = boost::container::small_vector<Peer, 16>;

// Merges row(i) and column(i), both sorted by peer, into one list of partners.
PeerList partners(const core::CommMatrix& m, Rank i) {
  PeerList out;
  const auto row = m.row(i);
  const auto col = m.column(i);
  std::size_t a = 0, b = 0;
  while (a < row.size() || b < col.size()) {
    if (b == col.size() || (a < row.size() && row[a].peer < col[b].peer)) {
      out.push_back({row[a].peer, row[a].bytes, 0});
      ++a;
    } else if (a == row.size() || col[b].peer < row[a].peer) {
      out.push_back({col[b].peer, 0, col[b].bytes});
      ++b;
    } else {
      out.push_back({row[a].peer, row[a].bytes, col[b].bytes});
      ++a;
      ++b;
    }
  }
  return out;
}

}  // namespace

core::Plan plan_greedy(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("greedy", m, true);
  const Rank n = m.size();
  if (n <= 0) return plan;

  std::vector<PeerList> lists(static_cast<std::size_t>(n));
  std::vector<Rank> active;  // ranks with pairs left, ascending
  for (Rank i = 0; i < n; ++i) {
    lists[static_cast<std::size_t>(i)] = partners(m, i);
    if (!lists[static_cast<std::size_t>(i)].empty()) active.push_back(i);
  }
  std::vector<std::size_t> busy(static_cast<std::size_t>(n), 0);  // step stamp, 1-based
  for (std::size_t step = 1; !active.empty(); ++step) {
    core::Phase phase;
    for (Rank i : active) {
      auto& mine = lists[static_cast<std::size_t>(i)];
      if (busy[static_cast<std::size_t>(i)] == step || mine.empty()) continue;
      auto pick = std::find_if(mine.begin(), mine.end(), [&](const Peer& p) {
        return busy[static_cast<std::size_t>(p.peer)] != step;
      });
      if (pick == mine.end()) continue;
      const Peer p = *pick;
      mine.erase(pick);
      busy[static_cast<std::size_t>(i)] = step;
      busy[static_cast<std::size_t>(p.peer)] = step;
      if (p.out > 0) phase.transfers.push_back({i, p.peer, {core::Piece{i, p.peer, 0, p.out}}});
      if (p.peer == i) continue;  // self pair: the one transfer above
      if (p.in > 0) phase.transfers.push_back({p.peer, i, {core::Piece{p.peer, i, 0, p.in}}});
      auto& theirs = lists[static_cast<std::size_t>(p.peer)];
      auto back = std::lower_bound(theirs.begin(), theirs.end(), i,
                                   [](const Peer& q, Rank r) { return q.peer < r; });
      theirs.erase(back);  // present by construction: the pair is listed on both sides
    }
    std::erase_if(active, [&](Rank r) { return lists[static_cast<std::size_t>(r)].empty(); });
    plan.phases.push_back(std::move(phase));  // never empty: the first active rank always pairs
  }
  return plan;
}

}  // namespace commsched::plan::detail
