// lp_xor — linear permutation, XOR form (paper 000 §5.1, Fig. 7): steps k = 0..P-1 with P the
// next power of two >= n; in step k rank i exchanges with i XOR k (k = 0 is the self message),
// pairs >= n are skipped. A permutation per step; planning O(P + nnz) by bucketing each message.
#include <utility>
#include <vector>

#include "plan/registry.hpp"

namespace commsched::plan {

core::Plan plan_lp_xor(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan;
  plan.strategy = "lp_xor";
  plan.n = m.size();
  plan.permutation = true;
  plan.barrier_between_phases = opts.barrier_between_phases;
  if (m.size() <= 0) return plan;
  std::size_t pow2 = 1;
  while (pow2 < static_cast<std::size_t>(m.size())) pow2 *= 2;
  // Message i -> j belongs to the one step k with i XOR k == j.
  std::vector<core::Phase> steps(pow2);
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i))
      steps[static_cast<std::size_t>(i ^ e.peer)].transfers.push_back(
          {i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
  for (core::Phase& phase : steps)
    if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace commsched::plan
