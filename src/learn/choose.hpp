#pragma once
/// What `auto` (and a forced strategy) turns a learned matrix into: candidate plans, best
/// predicted first, `native` always among them.
#include <cstddef>
#include <functional>
#include <limits>
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
/// the `keep` best plus native, best first as plan_chosen orders them (`drs` and
/// `native_sync`, which have no plan to predict, only when `allowed` names them); `auto`
/// without a predictor gives [rule's choice, native]. Invalid plans and plans above
/// `max_staging` bytes on some rank are kept with `rejected` set (the report says why) and
/// sorted last.
std::vector<CandidatePlan> plan_candidates(const core::CommMatrix& m, std::string_view strategy,
                                           const plan::Options& options,
                                           const std::vector<std::string>& allowed,
                                           const Predictor& predict, std::size_t keep,
                                           Bytes max_staging);

/// The cost model's work spread over the ranks (issue 4: at 256-1024 ranks every rank planning
/// every strategy costs more than the exchange it optimises; predicting native alone on a dense
/// 1024-rank matrix takes a rank 20 seconds). The steps plan_candidates takes with a predictor,
/// split so the ranks can share them: each rank predicts a share of prediction_pool and of
/// native (predict_share), the ranks agree on every prediction in one MIN-reduction of
/// pack_predictions' doubles, and each rank then plans only the chosen few (plan_agreed),
/// predicting nothing itself.

/// The strategies `auto` predicts, in registry order: every registered one but native, only
/// those in `allowed` when it is not empty, `drs` and `native_sync` (kInStep) only when
/// `allowed` names them. native_sync is predicted as native, and plan_chosen puts it right
/// behind native.
std::vector<std::string> auto_pool(const std::vector<std::string>& allowed);

/// The pool of a strategy the user named: that strategy alone, nothing for `native`.
std::vector<std::string> forced_pool(std::string_view strategy);

/// What the ranks predict for `strategy`: auto_pool(allowed) for `auto`, else forced_pool.
std::vector<std::string> prediction_pool(std::string_view strategy,
                                         const std::vector<std::string>& allowed);

/// One pool entry as the rank that planned it found it.
struct Prediction {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  double predicted_s = kNone;  ///< kNone: not predicted (another rank's share, or it failed)
  int rejected = 0;            ///< 0 usable, 1 invalid plan, 2 staging above the bound
  double staging_bytes = 0;    ///< with rejected == 2: the most staging a rank needs
  std::string why;             ///< the rejection as text; local only (does not travel)
};

/// Plans and predicts pool[i] for every i with i % parts == part, and native as entry
/// pool.size() (so pool.size() + 1 entries); the other entries stay unpredicted. parts = 1
/// predicts the whole pool and native.
std::vector<Prediction> predict_share(const core::CommMatrix& m,
                                      const std::vector<std::string>& pool,
                                      const plan::Options& options, const Predictor& predict,
                                      Bytes max_staging, std::size_t part, std::size_t parts);

/// Three doubles per entry whose element-wise minimum over the ranks' shares is the agreed
/// prediction of every entry (unpack_predictions reads it back); `why` does not travel.
std::vector<double> pack_predictions(const std::vector<Prediction>& p);
std::vector<Prediction> unpack_predictions(const std::vector<double>& packed);

/// The plan-less strategy that runs MPI's own call once every rank has entered it.
inline constexpr std::string_view kInStep = "native_sync";

/// How many planned candidates `auto`'s trial runs beside native, from the agreed predictions
/// (predict_share's entries, native's last): kTrialKeep, and more, up to kTrialKeepMost, while a
/// round of them and native (their predicted times summed), times the trial's `calls` measured
/// rounds and its discarded first one, stays within `budget_s`. A cost model is right about the
/// few schedules worth trying more often than about their order, and where calls take a few
/// milliseconds trying five more costs the job a few tenths of a second once.
inline constexpr std::size_t kTrialKeep = 3;
inline constexpr std::size_t kTrialKeepMost = 8;
/// `in_step`: native_sync's entry, if the pool holds it (tried beside the width, at native's
/// time); not counted.
std::size_t trial_width(const std::vector<Prediction>& agreed, int calls, double budget_s,
                        std::size_t in_step = std::numeric_limits<std::size_t>::max());

/// Two predictions this close (relative) are the same to the model: its sums of α + β·bytes
/// differ only in rounding.
inline constexpr double kSamePrediction = 1e-9;

/// The candidates from agreed predictions (predict_share's entries, native's last): plans the
/// `keep` best predicted usable entries and native, best first (native where its prediction
/// puts it; right behind native, native_sync when the pool holds it, outside the `keep`; then
/// direct plans of several phases, then routes of several phases, then one-phase plans, which
/// share native's receiver contention that the model does not see), then the rejected ones
/// with why (no plan). A plan that repeats a kept one, or that the model cannot tell from one
/// (as many phases, a prediction within kSamePrediction), is listed as such, untried; a
/// lookalike takes one of the `keep` slots. The same list plan_candidates gives for `auto`
/// with a predictor.
std::vector<CandidatePlan> plan_chosen(const core::CommMatrix& m,
                                       const std::vector<std::string>& pool,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, std::size_t keep,
                                       Bytes max_staging);

/// The candidates of a strategy the user named, from the agreed predictions of its
/// forced_pool: [strategy, native] ([native] for native), the strategy planned here. The same
/// list plan_candidates gives for that strategy with a predictor.
std::vector<CandidatePlan> plan_forced(const core::CommMatrix& m, std::string_view strategy,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, Bytes max_staging);

/// The candidates of `strategy` from the agreed predictions of prediction_pool(strategy,
/// allowed): plan_chosen for `auto`, plan_forced otherwise.
std::vector<CandidatePlan> plan_agreed(const core::CommMatrix& m, std::string_view strategy,
                                       const std::vector<std::string>& allowed,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, std::size_t keep,
                                       Bytes max_staging);

}  // namespace commsched::learn
