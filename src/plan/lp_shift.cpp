// lp_shift — linear permutation, shift form (paper 000 §5.1 variant; 001 §5): steps k = 0..n-1;
// in step k rank i sends to (i + k) mod n and receives from (i - k) mod n (k = 0 is the self
// message). A permutation per step; planning O(n + nnz) by bucketing each message.
#include <cstddef>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_lp_shift(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("lp_shift", m, true);
  plan.barrier_between_phases = opts.barrier_between_phases;
  const Rank n = m.size();
  if (n <= 0) return plan;
  auto steps = bucket_messages(m, static_cast<std::size_t>(n), [n](Rank i, Rank j) {
    return static_cast<std::size_t>((j - i + n) % n);
  });
  append_steps(plan, steps, 0);
  return plan;
}

}  // namespace commsched::plan::detail
