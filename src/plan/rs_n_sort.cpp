// rs_n_sort — RS_N+sort (paper 000 §7.1 item 7): rs_n, but each row's entries are sorted once by
// size, largest first, before scheduling (the order is not maintained afterwards, unlike rs_nh).
// Permutation; planning O(nnz log d) for the sort plus rs_n's O(nnz · phases) worst case.
#include <string_view>

#include "plan/registry.hpp"

namespace commsched::plan::detail {
// Defined in rs_n.cpp.
core::Plan random_schedule(const core::CommMatrix& m, const Options& opts, bool sort_by_size,
                           std::string_view id);
}  // namespace commsched::plan::detail

namespace commsched::plan {

core::Plan plan_rs_n_sort(const core::CommMatrix& m, const Options& opts) {
  return detail::random_schedule(m, opts, true, "rs_n_sort");
}

}  // namespace commsched::plan
