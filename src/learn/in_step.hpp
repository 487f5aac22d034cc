#pragma once
/// In step (COMMSCHED_IN_STEP): whether the job runs faster when the ranks enter each of its
/// all-to-all calls together. On a network whose switch queues are shallow, ranks that enter an
/// exchange out of step overflow a receiver's queue and wait out retransmission timeouts; a
/// barrier before each call can win back more than it costs. The gain belongs to the whole job:
/// syncing one communicator's calls while the job's others run out of step only moves their
/// skew into its barrier. So the trial is the job's: time slices (epochs) of the job's clock,
/// the same for every communicator, alternate between every communicator in the trial synced
/// and none, and each communicator decides on the job's pace in the two kinds as every
/// communicator of its ranks measured it (InStepMeter::pour), not on its own calls alone: one
/// communicator's few epochs are noisy, and decisions made on them alone left a job's
/// communicators half in step. MPI-free: the intercept layer agrees the clock and the decision
/// over each communicator.
#include <array>
#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

#include "learn/trial.hpp"

namespace commsched::learn {

/// The trial's time line: epochs of `epoch_s` seconds on the job's clock (since MPI_Init),
/// numbered from 0 there, the same for every communicator on every rank.
struct InStepClock {
  double epoch_s = 0.5;
  /// The epoch that time `t` falls in.
  long long epoch(double t) const;
};

/// Epoch k runs in step (S) or native (N) by k mod 6: N S S N N S, so each in-step epoch has a
/// native neighbour on either side and a job that speeds up or slows down favours neither. A
/// communicator joins at any time, runs in step up to the next whole epoch (what the trial
/// expects to find on the networks where it matters), then kInStepEpochs whole epochs, three of
/// each kind, and decides.
inline constexpr int kInStepEpochs = 6;
bool in_step_epoch(long long k);

/// When a communicator whose ranks agreed time `t` on the job's clock as they joined decides:
/// the end of the kInStepEpochs-th whole epoch after `t`.
double in_step_decide_at(double t, const InStepClock& clock);

/// Whether a call at time `t` runs in step before the trial's first whole epoch (lead_in), in
/// a native or in-step epoch, or decides (at `decide_at` or later).
enum class InStepPhase { lead_in, native, sync, decide };
InStepPhase in_step_phase(double t, double decide_at, const InStepClock& clock);

/// Whether a communicator joins the trial: its calls at least kInStepMinPeriod apart on every
/// rank (`period`, the shortest over ranks), and a barrier there (`barrier`, an allreduce's time
/// on the rank that entered it last) at most kInStepMaxCost of that. Closer calls are short
/// ones, which lose little to an incast, and a barrier (about a millisecond among 16 ranks over
/// TCP) costs them a share of the job that entering together does not repay (a 2-D FFT of 3 ms
/// calls 10 ms apart ran 7 % slower in step); the trial's in-step epochs would cost it too.
inline constexpr double kInStepMinPeriod = 0.02;
inline constexpr double kInStepMaxCost = 0.05;
bool in_step_joins(double period, double barrier);
/// Whether the calls are far enough apart that the barrier's cost is worth timing: where they
/// are not, the communicator stays out without the gauge's second allreduce.
bool in_step_may_join(double period);

/// A communicator's calls often come in a cycle (a 3-D FFT's three transposes per time step):
/// the lag, 1 to kInStepMaxCycle calls, whose entry-to-entry times vary clearly least over
/// `entries` (a communicator's first calls' entries, in order), so that the trial measures
/// whole cycles.
inline constexpr int kInStepMaxCycle = 4;
int in_step_cycle(const double* entries, int n);

/// Where a communicator's next call falls on the job's clock, from the agreed entries of its last
/// calls (each the latest rank's, the same on every rank): the entry one cycle before the next,
/// plus the last whole cycle's length; with fewer entries than a cycle and one more, the last entry
/// plus `period`; with none, the last forecast. Never before the last forecast. A trial runs each
/// call in the epoch its forecast falls in: the epoch of the previous call's entry, the only clock
/// its ranks have agreed by then, lags by a whole call, and where calls are a second apart (a 3-D
/// FFT on a 64^3 mesh, once a time step) that left a job's once-a-step communicators running half
/// of each 2 s epoch in the other kind while its busier ones were timed.
class EntryForecast {
 public:
  /// Starts afresh: the entries kept came from calls before the trial, or far apart.
  void reset() { n_ = 0, last_forecast_ = std::numeric_limits<double>::lowest(); }
  /// The agreed entry of the call just made.
  void add(double t);
  bool empty() const { return n_ == 0; }
  /// The next call's entry; `cycle` as learn::in_step_cycle, `period` the time between calls.
  double next(int cycle, double period);

 private:
  std::array<double, kInStepMaxCycle + 1> entries_{};  // the latest first
  int n_ = 0;
  double last_forecast_ = std::numeric_limits<double>::lowest();
};

/// The job's pace as a communicator sees it in each kind of epoch: from the second call of an
/// epoch (the first may have waited for the switch) to the last a whole number of cycles
/// later, the calls between and the seconds they took. Entries to entries, so the time holds
/// everything the job did between the calls: what the ranks in step gain may lie outside the
/// all-to-all itself (the point-to-point traffic after it, entering together too).
class InStepMeter {
 public:
  /// A call entered at `t` (this rank's clock) in epoch `k` of kind `sync`.
  void note(long long k, bool sync, double t, int cycle);
  /// Ends the epoch in progress (the trial is over).
  void close();
  /// {in-step intervals, their seconds, native intervals, their seconds}, closed epochs only.
  const std::array<double, 4>& totals() const { return totals_; }
  /// Adds to `pool` the totals closed since the last call, their seconds in units of `period`
  /// (the communicator's time between calls): the job's pool, which every communicator on the
  /// rank pours into, so that calls far apart and calls close together weigh alike.
  void pour(std::array<double, 4>& pool, double period);

 private:
  long long k_ = -1;
  bool sync_ = false;
  int calls_ = 0;
  double anchor_t_ = 0, last_t_ = 0;
  int since_anchor_ = 0, whole_ = 0;  // calls after the anchor; of them, in whole cycles
  std::array<double, 4> totals_{};
  std::array<double, 4> poured_{};
};

/// In step wins when its time per interval, over the pools summed over ranks, is at least
/// kInStepMargin below native's.
inline constexpr double kInStepMargin = 0.03;
/// Its time per interval over native's; -1 when either side has none.
double in_step_ratio(const std::array<double, 4>& summed);
bool in_step_wins(const std::array<double, 4>& summed);

/// The phase trial's verdict (intercept::InStepGate) after `round` rounds (1, 2, ...) of
/// kInStepEpochs epochs, on the pools summed over ranks since it started (on each rank, since
/// the last communicator of its own joined): keep the schedules where phased measured at least
/// kInStepMargin faster; leave them where it measured kPhaseLeave slower or more (LAMMPS on a
/// 32^3 mesh on shallow queues: 1.08-1.14 of native's time), or after kPhaseRounds rounds;
/// else, nothing measured on a side included (a communicator that joined late emptied the
/// pool), run another round. One round of six epochs is too few where a time step is long: on
/// a 64^3 mesh, about two steps to an epoch, it measured the schedules at 0.94-1.05 of native's
/// time while the job with every call phased ran 1.12 times faster.
///
/// `heard_kept`: some rank of the communicator has heard that another communicator of the job
/// kept its schedules (InStepJob::phases_kept). Every communicator's pool measures the same
/// job, so that is a second measurement of the same question, and phased measured faster at all
/// is enough to keep. Each communicator deciding alone on its own ranks' pools split LAMMPS on
/// a 64^3 mesh, where the pooled ratios sat near the margin after three rounds (0.97-0.99):
/// 24 or 56 of its 80 rank-communicators kept the schedules, a job phased in part.
enum class PhaseVerdict { keep, leave, again };
inline constexpr double kPhaseLeave = 0.08;
inline constexpr int kPhaseRounds = 3;
PhaseVerdict phase_verdict(const std::array<double, 4>& summed, int round,
                           bool heard_kept = false);

/// Which of a pattern's candidates the phase trial tries: of those that are schedules
/// (`schedule[i]`, a plan whose phases run one after another, in plan_chosen's order), the one the
/// pattern's own trial measured fastest against native in the median of its pairs, one not measured
/// counting as native's equal, the earlier in that order on a tie; -1: none is a schedule. The
/// model's first is a guess the pairs may have answered already: PETSc's ghost exchange on shallow
/// queues measured `mesh2d_pure` about 5 % slower than native in its pairs and `maxsum` 8 % faster,
/// and a phase trial on `mesh2d_pure`, kept on six noisy epochs, left the job 9 % slower. The pairs
/// ran the schedule on one communicator while the job's others sent all at once, which is the phase
/// trial's reason to exist, so a schedule that lost them is ranked, not struck out.
int phase_schedule(const Trial& trial, const std::vector<bool>& schedule);

/// Whether a candidate (strategy `id`, whose plan has `phases` phases) is a schedule in the
/// phase trial's sense: rounds in which each rank sends to one peer and receives from one
/// (plan::Strategy::permutation), more than one of them. `ac` posts every message at once in
/// one phase, as MPI's own call does, so phasing it measures native against itself; routes
/// (mesh2d, hypercube) combine messages rather than spread a receiver's load over time.
bool is_phase_schedule(std::string_view id, std::size_t phases);

/// What the job's nodes say about packet loss as a communicator decides: none of its ranks
/// (nor any rank they heard from) has seen a TCP retransmission timeout, some has, or it
/// cannot be told (no counter to read, or COMMSCHED_IN_STEP=trial, which does not ask).
enum class InStepLoss { none, seen, unknown };
/// Whether the communicator keeps the barrier before each call. Where no node loses packets,
/// never: there is nothing for in step to win back, and a trial's few epochs cannot tell a
/// gain of a few percent from a job's noise. Where nodes do, unless in step measured slower by
/// more than a barrier may cost there (kInStepMaxCost, which the gauge holds it to) and the
/// margin: entering together is what an incast needs, and the trial, whose in-step epochs
/// alternate with native ones that leave the queues full and whose few epochs hit or miss
/// retransmission timeouts by chance, says less than a whole job in step shows (LAMMPS on
/// shallow queues: in step 0.87-1.06 of native's time from trial to trial, the job in step
/// 1.08 times faster). Calls too far apart for an epoch to time keep it too. Where it cannot
/// be told, in step must win by the margin.
inline constexpr double kInStepVeto = kInStepMaxCost + kInStepMargin;
bool in_step_keeps(const std::array<double, 4>& summed, InStepLoss loss);

}  // namespace commsched::learn
