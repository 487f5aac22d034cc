#pragma once
/// `auto`'s online trial (issue 3): run the candidates (native always among them) in turn, one
/// call each per round, keep the one with the lowest median, and now and then re-run the
/// runner-up so a drifting machine cannot leave a loser in place. Pure: the MPI side feeds it
/// the time of each call as the maximum over ranks (agreed), so every rank takes the same
/// decisions.
///
/// Rounds rather than blocks, so a machine that drifts during the trial (another job's traffic
/// on a shared network) touches every candidate alike. The first round is discarded (first-touch
/// costs). At least `calls` rounds are measured; while the measured rounds took less than
/// `budget_s` in all, more follow, up to kMaxRoundsPerCall × `calls`: calls of a few
/// milliseconds on a shared network differ by more than the candidates do, and a tenth of a
/// second of trial buys the samples to tell them apart. The promise is never to be slower than
/// native, so a candidate replaces native only when its median is at least kNativeMargin below
/// native's.
#include <cstddef>
#include <string>
#include <vector>

namespace commsched::learn {

struct TrialCandidate {
  std::string id;            ///< strategy id ("native" included)
  double predicted_s = -1;   ///< cost model's prediction, < 0 when unknown
  double measured_s = -1;    ///< median of the trial calls, < 0 until measured
};

class Trial {
 public:
  /// A candidate must be this much faster than native (a fraction of native's time) to win.
  static constexpr double kNativeMargin = 0.03;
  /// Short calls: at most this many times `calls` measured rounds.
  static constexpr int kMaxRoundsPerCall = 10;

  /// `candidates` in the order to try them; at least `calls` measured calls each (>= 1), more
  /// while the measured rounds took less than `budget_s` seconds (0: exactly `calls`);
  /// re-check the best alternative every `recheck_every` calls after a decision (0: never).
  Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every,
        double budget_s = 0.0);
  /// Without trial: `winner` is used from the start (measured nothing).
  static Trial decided_for(std::vector<TrialCandidate> candidates, std::size_t winner);

  /// A call's time as the trial weighs it: `since_entry_max`, the longest time over ranks from
  /// the call's entry (before the per-call agreement) to its end, less the share of the
  /// agreement the candidate does not pay once chosen. Timing every candidate from entry makes
  /// each pay the wait for the last rank to arrive (ranks leave a barrier or a compute phase at
  /// different times, and a late rank holds up the others' receives); timing native only after
  /// the agreement left that wait out and favoured it by 0.3-0.5 ms per 2 ms call on the
  /// emulated cluster. A plan pays the agreement every call: `skipped_agreement_min` 0. Native
  /// agrees once in `agree_every` calls once chosen: `skipped_agreement_min` is the agreement's
  /// own cost, its shortest duration over ranks (the last rank to arrive waits for nobody), of
  /// which native's time keeps 1/agree_every.
  static double call_seconds(double since_entry_max, double skipped_agreement_min,
                             int agree_every);

  /// The candidate this call runs.
  std::size_t current() const { return current_; }
  /// The agreed time of the call just run with current(); advances the trial.
  void measured(double seconds);

  bool decided() const { return decided_; }
  std::size_t winner() const { return winner_; }
  /// Measured rounds the trial ran (the discarded first one not counted).
  int rounds() const { return rounds_; }
  const std::vector<TrialCandidate>& candidates() const { return cands_; }

 private:
  void decide();
  /// Whether candidate a at median ta should run rather than b at tb (native's margin applied).
  bool beats(std::size_t a, double ta, std::size_t b, double tb) const;
  std::vector<TrialCandidate> cands_;
  std::vector<std::vector<double>> samples_;
  int calls_;
  int recheck_every_;
  double budget_s_;
  double spent_s_ = 0;  // measured rounds' time so far
  int rounds_ = 0;      // measured rounds completed
  bool warm_ = false;   // the discarded first round is done
  std::size_t native_;  // index of "native"; size() when absent
  std::size_t current_ = 0;
  std::size_t winner_ = 0;
  bool decided_ = false;
  int since_decision_ = 0;
  bool rechecking_ = false;
  std::size_t challenger_ = 0;
  std::vector<double> recheck_winner_, recheck_challenger_;
};

}  // namespace commsched::learn
