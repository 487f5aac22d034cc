// hypercube, hypercube_pure — dimensional exchange (004 §2.4, §3); the same schedule is REX,
// recursive exchange (002 §3.3, highest bit first as in its Table 3), and HL, the hypercube-like
// algorithm (003 §3.2). Ranks 0..Q−1, Q = 2^⌊log2 n⌋, form the hypercube; first each rank r ≥ Q
// hands all its messages to r − Q; then in step t every rank sends its partner across bit
// log2 Q − t everything whose destination (r − Q for r ≥ Q) differs in that bit; last r − Q
// hands r its messages. log2 n messages per rank, each byte forwarded ≤ log2 n times:
// T ≈ log2 n·(α + (1 + λ_h)/2·δ·m·β) (004 eqs. 5, 6, 9). Empty hops are skipped. hypercube is
// the hybrid of 004 §3.2 (messages ≥ Options::direct_threshold direct in the first phase);
// hypercube_pure routes every message. Self messages are local copies in the first phase.
#include <cstdint>
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

namespace {

core::Plan hypercube(const core::CommMatrix& m, const Options& opts, bool pure) {
  const Rank n = m.size();
  Rank q = 1;
  unsigned dims = 0;
  while (q <= n / 2) {
    q *= 2;
    ++dims;
  }
  // The first phase: the fold-in when some rank lies outside the hypercube, else the first
  // exchange (with one rank, the only stage).
  const std::uint32_t first = n > q ? 0 : 1;
  return plan_routed(pure ? "hypercube_pure" : "hypercube", m, opts, pure,
                     {dims + 2, dims, first},
                     [&](Rank i, Rank d, const core::Piece& piece, std::vector<Hop>& hops) {
                       Rank at = i;
                       if (at >= q) {
                         hops.push_back({0, at, at - q, piece});
                         at -= q;
                         if (at == d) return;
                       }
                       const Rank target = d >= q ? d - q : d;
                       for (unsigned t = 0; t < dims; ++t) {
                         const Rank bit = Rank{1} << (dims - 1 - t);
                         if (((at ^ target) & bit) == 0) continue;
                         hops.push_back({1 + t, at, at ^ bit, piece});
                         at ^= bit;
                       }
                       if (at != d) hops.push_back({dims + 1, at, d, piece});
                     });
}

}  // namespace

core::Plan plan_hypercube(const core::CommMatrix& m, const Options& opts) {
  return hypercube(m, opts, false);
}

core::Plan plan_hypercube_pure(const core::CommMatrix& m, const Options& opts) {
  return hypercube(m, opts, true);
}

}  // namespace commsched::plan::detail
