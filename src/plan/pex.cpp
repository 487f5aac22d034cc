// pex — pairwise exchange / pairwise scheduling (paper 002 §3.2 Fig. 2, §4.2 PS): steps
// j = 1..P-1 (P the next power of two >= n), rank i exchanges with i XOR j, partners >= n skipped;
// the self message gets its own last phase. Same pairs as lp_xor (000 §5.1), which runs the self
// message first as its step 0; PS is the CM-5 paper's name for it. Permutation; O(P + nnz).
#include <utility>
#include <vector>

#include "plan/registry.hpp"

namespace commsched::plan {

core::Plan plan_pex(const core::CommMatrix& m, const Options&) {
  core::Plan plan;
  plan.strategy = "pex";
  plan.n = m.size();
  plan.permutation = true;
  if (m.size() <= 0) return plan;
  std::size_t pow2 = 1;
  while (pow2 < static_cast<std::size_t>(m.size())) pow2 *= 2;
  // steps[j] for j = 1..P-1 hold i <-> i XOR j; steps[0] holds the self messages, emitted last.
  std::vector<core::Phase> steps(pow2);
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i))
      steps[static_cast<std::size_t>(i ^ e.peer)].transfers.push_back(
          {i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
  for (std::size_t j = 1; j <= pow2; ++j) {
    core::Phase& phase = steps[j % pow2];
    if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace commsched::plan
