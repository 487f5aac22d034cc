// mesh2d, mesh2d_pure — 2-D mesh routing (004 §2.2, §3): ranks row-major on C = ⌈√n⌉ columns,
// the last row partial. Phase 1: each rank sends one combined message to every rank of its row
// that forwards something (a hole's role falls to rank (own column mod (rows − 1), hole column));
// phase 2: each rank forwards along its column. ≤ 2(√n − 1) messages per rank, every byte sent
// twice: T ≈ 2√n·α + 2·δ·m·β (004 eqs. 2, 7). Hops that carry nothing are skipped (no dummy
// messages). mesh2d is the hybrid of 004 §3.2: messages ≥ Options::direct_threshold go direct in
// phase 1; mesh2d_pure routes every message. Self messages are local copies in phase 1.
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

namespace {

core::Plan mesh2d(const core::CommMatrix& m, const Options& opts, bool pure) {
  const Rank n = m.size();
  Rank cols = 1;
  while (cols * cols < n) ++cols;
  const Rank rows = (n + cols - 1) / cols;  // every row holds a rank; only the last has holes
  return plan_routed(pure ? "mesh2d_pure" : "mesh2d", m, opts, pure, {2, 2},
                     [&](Rank i, Rank d, const core::Piece& piece, std::vector<Hop>& hops) {
                       Rank via = (i / cols) * cols + d % cols;
                       // Holes lie in the last row only, and then rows ≥ 2 (004 §2.2, Fig. 1).
                       if (via >= n) via = ((i % cols) % (rows - 1)) * cols + d % cols;
                       if (via != i) hops.push_back({0, i, via, piece});
                       if (via != d) hops.push_back({1, via, d, piece});
                     });
}

}  // namespace

core::Plan plan_mesh2d(const core::CommMatrix& m, const Options& opts) {
  return mesh2d(m, opts, false);
}

core::Plan plan_mesh2d_pure(const core::CommMatrix& m, const Options& opts) {
  return mesh2d(m, opts, true);
}

}  // namespace commsched::plan::detail
