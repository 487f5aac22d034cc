// ac — asynchronous communication (paper 000 §4, Fig. 6): one phase holding every message; each
// rank posts all its receives, then all its sends, and the network sorts out contention.
// Planning O(nnz); no ordering, so node contention is left entirely to the MPI library.
#include "plan/detail.hpp"

namespace commsched::plan::detail {

core::Plan plan_ac(const core::CommMatrix& m, const Options&) {
  return core::one_phase_plan(m, "ac");
}

}  // namespace commsched::plan::detail
