// color — optimal decomposition into exactly Δ partial permutations (beyond the papers; König's
// edge-colouring theorem): Δ = most messages any rank sends or receives. Messages are coloured
// largest first, each taking the lowest colour free at both its sender and receiver, or, when no
// colour is free at both, the sender's free colour after flipping an alternating path (Kőnig).
// Large messages thus share the low colours; phases are then ordered by their largest message,
// biggest first. Permutation; planning O(nnz log nnz + nnz·(Δ + path length)) ≤ O(nnz·n).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

namespace {

struct Edge {
  Rank src;
  Rank dst;
  Bytes bytes;
};

constexpr Rank kFree = -1;

}  // namespace

core::Plan plan_color(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("color", m, true);
  const Rank n = m.size();
  const std::size_t delta = m.max_degree();
  if (n <= 0 || delta == 0) return plan;

  std::vector<Edge> edges;
  edges.reserve(m.nonzeros());
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) edges.push_back({i, e.peer, e.bytes});
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });

  // send_at[s·Δ + c]: receiver of sender s's colour-c message; recv_at[r·Δ + c]: its sender.
  const auto slots = static_cast<std::size_t>(n) * delta;
  std::vector<Rank> send_at(slots, kFree), recv_at(slots, kFree);
  auto sa = [&](Rank s, std::size_t c) -> Rank& { return send_at[s * delta + c]; };
  auto ra = [&](Rank r, std::size_t c) -> Rank& { return recv_at[r * delta + c]; };
  struct PathEdge {
    Rank s, r;
    std::size_t c;
  };
  std::vector<PathEdge> path;

  for (const Edge& e : edges) {
    std::size_t common = delta, free_s = delta, free_r = delta;
    for (std::size_t c = 0; c < delta; ++c) {
      const bool fs = sa(e.src, c) == kFree, fr = ra(e.dst, c) == kFree;
      if (fs && fr) {
        common = c;
        break;
      }
      if (fs && free_s == delta) free_s = c;
      if (fr && free_r == delta) free_r = c;
    }
    if (common == delta) {
      // a = free_s is busy at the receiver, b = free_r is busy at the sender (both exist since
      // each side has fewer than Δ messages coloured). Swap a and b along the a/b path starting
      // at the receiver; bipartiteness keeps the sender off it, so a becomes free at both ends.
      const std::size_t a = free_s, b = free_r;
      path.clear();
      for (Rank r = e.dst;;) {
        const Rank s = ra(r, a);
        if (s == kFree) break;
        path.push_back({s, r, a});
        const Rank r2 = sa(s, b);
        if (r2 == kFree) break;
        path.push_back({s, r2, b});
        r = r2;
      }
      for (const PathEdge& p : path) sa(p.s, p.c) = ra(p.r, p.c) = kFree;
      for (const PathEdge& p : path) {
        const std::size_t c = p.c == a ? b : a;
        sa(p.s, c) = p.r;
        ra(p.r, c) = p.s;
      }
      common = a;
    }
    sa(e.src, common) = e.dst;
    ra(e.dst, common) = e.src;
  }

  std::vector<core::Phase> colours(delta);
  std::vector<Bytes> largest(delta, 0), total(delta, 0);
  for (Rank s = 0; s < n; ++s)
    for (std::size_t c = 0; c < delta; ++c) {
      const Rank r = sa(s, c);
      if (r == kFree) continue;
      const Bytes b = m.at(s, r);
      colours[c].transfers.push_back({s, r, {core::Piece{s, r, 0, b}}});
      largest[c] = std::max(largest[c], b);
      total[c] += b;
    }
  std::vector<std::size_t> order(delta);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (largest[x] != largest[y]) return largest[x] > largest[y];
    if (total[x] != total[y]) return total[x] > total[y];
    return x < y;
  });
  // A rank with Δ messages uses every colour, so no colour class is empty.
  for (std::size_t c : order) plan.phases.push_back(std::move(colours[c]));
  return plan;
}

}  // namespace commsched::plan::detail
