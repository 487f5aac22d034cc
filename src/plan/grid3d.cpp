// grid3d, grid3d_pure — 3-D grid routing (004 §2.3, §3): rank r at (x, y, z) = (r mod K,
// ⌊r/K⌋ mod K, ⌊r/K²⌋), K = ⌈∛n⌉; planes without ranks do not exist. Phase 1 moves each message
// along X to the destination's x, phase 2 along Y, phase 3 along Z, combining everything bound
// for the same rank. A hole of the last plane is played by the rank at the same (x, y) of the
// penultimate plane; with a single plane, holes map as in mesh2d. ≤ 3(∛n − 1) messages per
// rank, every byte sent up to three times: T ≈ 3∛n·α + 3·δ·m·β (004 eqs. 3, 4, 8). Empty hops
// are skipped. grid3d is the hybrid of 004 §3.2 (messages ≥ Options::direct_threshold direct in
// phase 1); grid3d_pure routes every message. Self messages are local copies in phase 1.
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

namespace {

core::Plan grid3d(const core::CommMatrix& m, const Options& opts, bool pure) {
  const Rank n = m.size();
  Rank k = 1;
  while (k * k * k < n) ++k;
  const Rank plane = k * k;
  const Rank planes = (n + plane - 1) / plane;
  const Rank rows = (n + k - 1) / k;  // rows of the only plane when planes == 1
  auto node = [&](Rank x, Rank y, Rank z) { return z * plane + y * k + x; };
  return plan_routed(
      pure ? "grid3d_pure" : "grid3d", m, opts, pure, {3, 3},
      [&](Rank i, Rank d, const core::Piece& piece, std::vector<Hop>& hops) {
        const Rank xd = d % k, yd = (d / k) % k;
        // Phase 1, along X.
        Rank at = node(xd, (i / k) % k, i / plane);
        if (at >= n)
          at = planes >= 2 ? node(xd, (i / k) % k, planes - 2) : node(xd, (i % k) % (rows - 1), 0);
        if (at != i) hops.push_back({0, i, at, piece});
        if (at == d) return;
        // Phase 2, along Y (a hole here is always in the last plane, so planes ≥ 2).
        Rank next = node(xd, yd, at / plane);
        if (next >= n) next = node(xd, yd, planes - 2);
        if (next != at) hops.push_back({1, at, next, piece});
        // Phase 3, along Z.
        if (next != d) hops.push_back({2, next, d, piece});
      });
}

}  // namespace

core::Plan plan_grid3d(const core::CommMatrix& m, const Options& opts) {
  return grid3d(m, opts, false);
}

core::Plan plan_grid3d_pure(const core::CommMatrix& m, const Options& opts) {
  return grid3d(m, opts, true);
}

}  // namespace commsched::plan::detail
