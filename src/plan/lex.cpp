// lex — linear exchange / linear scheduling (paper 002 §3.1 LEX, §4.1 LS): n steps; in step i
// every rank j with COM(j, i) > 0 sends to i. Planning O(n + nnz); every sender converges on
// one receiver per step, so it is not a permutation (the paper's worst performer; a baseline).
#include <utility>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_lex(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("lex", m, false);
  for (Rank dst = 0; dst < m.size(); ++dst) {
    const auto column = m.column(dst);
    if (column.empty()) continue;  // empty steps are dropped
    core::Phase phase;
    phase.transfers.reserve(column.size());
    for (const core::Entry& e : column)
      phase.transfers.push_back({e.peer, dst, {core::Piece{e.peer, dst, 0, e.bytes}}});
    plan.phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace commsched::plan::detail
