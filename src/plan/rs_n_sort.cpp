// rs_n_sort — RS_N+sort (paper 000 §7.1 item 7): rs_n, but each row's entries are sorted once by
// size, largest first, before scheduling (the order is not maintained afterwards, unlike rs_nh).
// Permutation; planning O(nnz log d) for the sort plus rs_n's O(nnz · phases) worst case.
#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_rs_n_sort(const core::CommMatrix& m, const Options& opts) {
  return random_schedule(m, opts, true, "rs_n_sort");
}

}  // namespace commsched::plan::detail
