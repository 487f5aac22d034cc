// bex — balanced exchange / balanced scheduling (paper 002 §3.4 Fig. 4, §4.3 BS): virtual rank
// v = (rank + 1) mod n; in step j = 1..P-1 (P the next power of two >= n) a rank exchanges with
// partner = (v XOR j) - 1, -1 meaning n-1, spreading long-distance pairs over all steps. Partners
// out of range are skipped; since v is a bijection every message i -> j (i != j) falls in exactly
// one step, v(i) XOR v(j); self messages take one leftover last phase. Permutation; O(P + nnz).
#include <utility>
#include <vector>

#include "plan/registry.hpp"

namespace commsched::plan {

core::Plan plan_bex(const core::CommMatrix& m, const Options&) {
  core::Plan plan;
  plan.strategy = "bex";
  plan.n = m.size();
  plan.permutation = true;
  const Rank n = m.size();
  if (n <= 0) return plan;
  std::size_t pow2 = 1;
  while (pow2 < static_cast<std::size_t>(n)) pow2 *= 2;
  auto virt = [n](Rank r) { return (r + 1) % n; };
  std::vector<core::Phase> steps(pow2);  // steps[0]: self messages, emitted last
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i))
      steps[static_cast<std::size_t>(virt(i) ^ virt(e.peer))].transfers.push_back(
          {i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
  for (std::size_t j = 1; j <= pow2; ++j) {
    core::Phase& phase = steps[j % pow2];
    if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace commsched::plan
