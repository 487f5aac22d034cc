// mesh2d, mesh2d_pure — 2-D mesh routing (004 §2.2, §3): ranks row-major on C = ⌈√n⌉ columns,
// the last row partial. Phase 1: each rank sends one combined message to every rank of its row
// that forwards something (a hole's role falls to rank (own column mod (rows − 1), hole column));
// phase 2: each rank forwards along its column. ≤ 2(√n − 1) messages per rank, every byte sent
// twice: T ≈ 2√n·α + 2·δ·m·β (004 eqs. 2, 7). Hops that carry nothing are skipped (no dummy
// messages). mesh2d is the hybrid of 004 §3.2: messages ≥ Options::direct_threshold go direct in
// phase 1; mesh2d_pure routes every message. Self messages are local copies in phase 1.
#include <limits>
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

namespace {

core::Plan mesh2d(const core::CommMatrix& m, const Options& opts, bool pure) {
  core::Plan plan = empty_plan(pure ? "mesh2d_pure" : "mesh2d", m, false);
  const Rank n = m.size();
  if (n <= 0) return plan;
  Rank cols = 1;
  while (cols * cols < n) ++cols;
  const Rank rows = (n + cols - 1) / cols;  // every row holds a rank; only the last has holes
  const Bytes direct = pure ? std::numeric_limits<Bytes>::max() : hybrid_threshold(opts, 2);
  std::vector<Hop> hops;
  hops.reserve(m.nonzeros() * 2);
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) {
      const Rank d = e.peer;
      const core::Piece piece{i, d, 0, e.bytes};
      if (d == i || (!pure && e.bytes >= direct)) {
        hops.push_back({0, i, d, piece});
        continue;
      }
      Rank via = (i / cols) * cols + d % cols;
      // Holes lie in the last row only, and then rows ≥ 2 (004 §2.2, Fig. 1).
      if (via >= n) via = ((i % cols) % (rows - 1)) * cols + d % cols;
      if (via != i) hops.push_back({0, i, via, piece});
      if (via != d) hops.push_back({1, via, d, piece});
    }
  std::vector<core::Phase> stages = combine_hops(hops, 2);
  append_steps(plan, stages, 0);
  return plan;
}

}  // namespace

core::Plan plan_mesh2d(const core::CommMatrix& m, const Options& opts) {
  return mesh2d(m, opts, false);
}

core::Plan plan_mesh2d_pure(const core::CommMatrix& m, const Options& opts) {
  return mesh2d(m, opts, true);
}

}  // namespace commsched::plan::detail
