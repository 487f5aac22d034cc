// lp_shift — linear permutation, shift form (paper 000 §5.1 variant; 001 §5): steps k = 0..n-1;
// in step k rank i sends to (i + k) mod n and receives from (i - k) mod n (k = 0 is the self
// message). A permutation per step; planning O(n + nnz) by bucketing each message.
#include <utility>
#include <vector>

#include "plan/registry.hpp"

namespace commsched::plan {

core::Plan plan_lp_shift(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan;
  plan.strategy = "lp_shift";
  plan.n = m.size();
  plan.permutation = true;
  plan.barrier_between_phases = opts.barrier_between_phases;
  const Rank n = m.size();
  if (n <= 0) return plan;
  std::vector<core::Phase> steps(static_cast<std::size_t>(n));
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) {
      const Rank k = (e.peer - i + n) % n;
      steps[static_cast<std::size_t>(k)].transfers.push_back(
          {i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
    }
  for (core::Phase& phase : steps)
    if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace commsched::plan
