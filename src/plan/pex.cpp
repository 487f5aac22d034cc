// pex — pairwise exchange / pairwise scheduling (paper 002 §3.2 Fig. 2, §4.2 PS): steps
// j = 1..P-1 (P the next power of two >= n), rank i exchanges with i XOR j, partners >= n skipped;
// the self message gets its own last phase. Same pairs as lp_xor (000 §5.1), which runs the self
// message first as its step 0; PS is the CM-5 paper's name for it. Permutation; O(P + nnz).
#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_pex(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("pex", m, true);
  add_xor_steps(plan, m, 0, true);
  return plan;
}

}  // namespace commsched::plan::detail
