// lp_xor — linear permutation, XOR form (paper 000 §5.1, Fig. 7): steps k = 0..P-1 with P the
// next power of two >= n; in step k rank i exchanges with i XOR k (k = 0 is the self message),
// pairs >= n are skipped. A permutation per step; planning O(P + nnz) by bucketing each message.
#include <cstddef>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

// Shared with pex and bex (002 §3.2, §3.4): they differ only in `shift` and where step 0 goes.
void add_xor_steps(core::Plan& plan, const core::CommMatrix& m, Rank shift, bool self_last) {
  const Rank n = m.size();
  if (n <= 0) return;
  std::size_t pow2 = 1;
  while (pow2 < static_cast<std::size_t>(n)) pow2 *= 2;
  // v is a bijection, so message i -> j belongs to the one step k with v(i) XOR k == v(j).
  auto steps = bucket_messages(m, pow2, [n, shift](Rank i, Rank j) {
    return static_cast<std::size_t>(((i + shift) % n) ^ ((j + shift) % n));
  });
  append_steps(plan, steps, self_last ? 1 : 0);
}

core::Plan plan_lp_xor(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("lp_xor", m, true);
  plan.barrier_between_phases = opts.barrier_between_phases;
  add_xor_steps(plan, m, 0, false);
  return plan;
}

}  // namespace commsched::plan::detail
