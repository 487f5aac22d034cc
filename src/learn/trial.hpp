#pragma once
/// `auto`'s online trial (issue 3): run each candidate (native always among them) for a few
/// calls, keep the one with the lowest measured time, and now and then re-run the runner-up so a
/// drifting machine cannot leave a loser in place. Pure: the MPI side feeds it the time of each
/// call as the maximum over ranks (agreed), so every rank takes the same decisions.
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
  /// `candidates` in the order to try them; `calls` per candidate (>= 1); re-check the best
  /// alternative every `recheck_every` calls after a decision (0: never).
  Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every);
  /// Without trial: `winner` is used from the start (measured nothing).
  static Trial decided_for(std::vector<TrialCandidate> candidates, std::size_t winner);

  /// The candidate this call runs.
  std::size_t current() const { return current_; }
  /// The agreed time of the call just run with current(); advances the trial.
  void measured(double seconds);

  bool decided() const { return decided_; }
  std::size_t winner() const { return winner_; }
  const std::vector<TrialCandidate>& candidates() const { return cands_; }

 private:
  void decide();
  std::vector<TrialCandidate> cands_;
  std::vector<std::vector<double>> samples_;
  int calls_;
  int recheck_every_;
  std::size_t current_ = 0;
  std::size_t winner_ = 0;
  bool decided_ = false;
  int since_decision_ = 0;
  bool rechecking_ = false;
  std::size_t challenger_ = 0;
  std::vector<double> recheck_winner_, recheck_challenger_;
};

}  // namespace commsched::learn
