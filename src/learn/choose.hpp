#pragma once
/// What `auto` (and a forced strategy) turns a learned matrix into: candidate plans, best
/// predicted first, `native` always among them.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "plan/registry.hpp"

namespace commsched::learn {

/// The strategy id the rule picks for `m` when no cost model predicts:
///  - `native` for 1-2 ranks, an empty matrix, or a dense one (more than half of all ordered
///    pairs exchange data): the MPI library's own algorithms are tuned for those;
///  - `rs_nh` when message sizes are skewed (largest >= 8x the median): it splits the large ones
///    so phases stay balanced (paper 000 §5.2);
///  - `color` otherwise: the fewest contention-free phases, exactly Δ.
std::string_view choose_auto(const core::CommMatrix& m);

struct CandidatePlan {
  std::string id;
  core::Plan plan;            ///< empty for native
  double predicted_s = -1;    ///< < 0: no prediction
  std::string rejected;       ///< why it cannot be used (invalid plan, staging), empty if usable
};

/// Predicts a plan's time; a null plan means the native call. Empty function: no cost model.
using Predictor = std::function<double(const core::Plan*)>;

/// Candidates for `strategy` ("auto" or an id) on `m`. A forced id gives [id, native]; `auto`
/// with a predictor plans every strategy in `allowed` (all when empty), predicts them, and keeps
/// the `keep` best plus native, best first (`drs`, which has no plan to predict, only when
/// `allowed` names it); `auto` without a predictor gives [rule's choice,
/// native]. Invalid plans and plans above `max_staging` bytes on some rank are kept with
/// `rejected` set (the report says why) and sorted last.
std::vector<CandidatePlan> plan_candidates(const core::CommMatrix& m, std::string_view strategy,
                                           const plan::Options& options,
                                           const std::vector<std::string>& allowed,
                                           const Predictor& predict, std::size_t keep,
                                           Bytes max_staging);

}  // namespace commsched::learn
