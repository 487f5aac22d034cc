// ac — asynchronous communication (paper 000 §4, Fig. 6): one phase holding every message; each
// rank posts all its receives, then all its sends, and the network sorts out contention.
// Planning O(nnz); no ordering, so node contention is left entirely to the MPI library.
#include <utility>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_ac(const core::CommMatrix& m, const Options&) {
  core::Plan plan = empty_plan("ac", m, false);
  core::Phase phase;
  phase.transfers.reserve(m.nonzeros());
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i))
      phase.transfers.push_back({i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
  if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace commsched::plan::detail
