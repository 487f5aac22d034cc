// bex — balanced exchange / balanced scheduling (paper 002 §3.4 Fig. 4, §4.3 BS): virtual rank
// v = (rank + 1) mod n; in step j = 1..P-1 (P the next power of two >= n) a rank exchanges with
// partner = (v XOR j) - 1, -1 meaning n-1, spreading long-distance pairs over all steps. Partners
// out of range are skipped; since v is a bijection every message i -> j (i != j) falls in exactly
// one step, v(i) XOR v(j); self messages take one leftover last phase. Permutation; O(P + nnz).
#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_bex(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("bex", m, true);
  add_xor_steps(plan, m, 1, true);
  return plan;
}

}  // namespace commsched::plan::detail
