#pragma once
/// `auto`'s online trial: paired, randomised comparisons of each candidate against native,
/// within a budget, so the trial itself never makes the job measurably slower. Pure: the MPI
/// side feeds it the time of each call as the maximum over ranks (agreed), and every rank,
/// drawing from the same seed, takes the same decisions.
///
/// - Pairs. Candidates are tried one at a time in the order given (plan_chosen's), each call
///   next to a native call in an order drawn at random for each pair, so a machine that
///   drifts, or a cost that falls on whichever call comes second, touches both sides alike. A
///   candidate's first call is discarded (first-touch costs).
/// - Switches. A measured call never follows a call of the other side: where the call before
///   ran something else, the side runs a switch-in call first, unmeasured in the comparison but
///   charged to the budget. What a schedule leaves behind falls on the call after it (TCP
///   connections it left idle restart slowly: on the emulated cluster a native call right after
///   a routed one took 9 ms, 7.8 ms otherwise), and need not fall alike on both sides: weighed
///   in the pairs it would make a schedule look faster than native that is not.
/// - Checkpoints. At `calls` pairs, then twice, four, eight and sixteen times as many, and only
///   then, the trial looks at the candidate's pairs.
/// - Confidence. A candidate replaces native only when its median time ratio over its pairs is
///   at least kNativeMargin below native's and a one-sided Wilcoxon signed-rank test over the
///   pairs' log time ratios, against that margin, gives p <= kSignificance / (candidates x
///   checkpoints). Ranks weigh how far each pair is won or lost, not only which way, so a
///   clearly faster candidate convinces in fewer pairs than a sign test needs under the same
///   noise, while ranks keep one outlier from deciding. The first to convince wins.
/// - Its own calls too. Where the calls' own times are known (the time weighed runs on to the
///   next all-to-all), a candidate whose own calls take, in the median of its pairs, more than
///   kNativeMargin longer than native's does not win: what it seemed to save lies in the work
///   after its calls, which the ranks' arrival at the next call moves by as much from one pair
///   to the next, and which a slower call cannot be relied on to keep.
/// - Losers stop early. A candidate not faster than native in the median at a checkpoint drops
///   out, so does one whose own calls are slower by more than the margin from the second
///   checkpoint on, and one whose last checkpoint did not convince; when none is left, native
///   stays.
/// - Budget. A candidate runs only while the trial's extra time (each candidate call's time
///   less its pair's native time, or its own time less native's where that differs by more;
///   the first and switch-in calls less native's median; any overhead a measured native call
///   pays only because it is measured; the pattern's learning and probes, add_spent), with
///   what the other trials under way spend (set_others_spent), is at most kBudgetShare of the
///   job's time in all-to-all calls so far, on every communicator (set_job_time), and at
///   least of this communicator's (its calls before the trial at
///   native's time). Otherwise native runs, unmeasured, as many calls as the budget needs to
///   cover the next pair (each counted at native's time in the call). A faster candidate
///   earns credit; a slow one waits.
/// - After the decision the other side is re-measured every `recheck_every` calls (native when
///   a plan won, the best candidate when native did), so a plan that drifts above native
///   reverts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace commsched::learn {

/// The entries of one thread's latest all-to-all calls, on any communicator. The trial times a
/// call from its entry to the next call's entry: the call and the application's work after it,
/// up to its next all-to-all. What a schedule does to that work (ranks left out of step, a
/// network still busy with retransmissions) is part of what it costs the job.
struct EntryClock {
  static constexpr std::uint64_t kKeep = 64;
  std::uint64_t calls = 0;  ///< entries so far; the latest is call calls - 1
  double at[kKeep] = {};
  double in_calls_s = 0;    ///< time inside the calls so far (kept by the caller)
  /// A measured call waits for the next entry: the caller reads the clock on the next call.
  bool next_wanted = false;
  void enter(double t) { at[calls++ % kKeep] = t; }
  /// The entry of call `index` (from 0), or -1 when not made yet or no longer kept.
  double entry(std::uint64_t index) const {
    return index < calls && calls - index <= kKeep ? at[index % kKeep] : -1;
  }
};

struct TrialCandidate {
  std::string id;            ///< strategy id ("native" included)
  double predicted_s = -1;   ///< cost model's prediction, < 0 when unknown
  double measured_s = -1;    ///< median of its measured calls so far, < 0 until measured
};

class Trial {
 public:
  /// A candidate must be this much faster than native (a fraction of native's time) to win.
  static constexpr double kNativeMargin = 0.03;
  /// At most this many times `calls` pairs per candidate (checkpoints at 1, 2, 4, 8 and 16
  /// times `calls`).
  static constexpr int kMaxRoundsPerCall = 16;
  /// The trial's extra time at most this share of the pattern's time so far, by default.
  static constexpr double kBudgetShare = 0.02;
  /// One-sided sign-test level a candidate must reach against native.
  static constexpr double kSignificance = 0.05;

  /// `candidates` in the order to try them; at least `calls` pairs each (>= 1) before one can
  /// drop out; re-check every `recheck_every` calls after a decision (0: never); `seed` the
  /// same on every rank.
  Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every,
        std::uint64_t seed = 0);
  /// Without trial: `winner` is used from the start (measured nothing).
  static Trial decided_for(std::vector<TrialCandidate> candidates, std::size_t winner);

  /// A call's time as the trial weighs it: `since_entry_max`, the longest time over ranks from
  /// the call's entry (before the per-call agreement) to the entry of the thread's next
  /// all-to-all (the call and the application's work after it; the call's end when that is
  /// not known), less the share of the agreement the candidate does not pay once chosen.
  /// Timing every candidate from entry makes each pay the wait for the last rank to arrive. A
  /// plan pays the agreement every call: `skipped_agreement_min` 0. Native agrees once in
  /// `agree_every` calls once chosen: `skipped_agreement_min` is the agreement's own cost, its
  /// shortest duration over ranks, of which native's time keeps 1/agree_every.
  static double call_seconds(double since_entry_max, double skipped_agreement_min,
                             int agree_every);

  /// Calls made on the communicator before the trial began (learning, other patterns): they
  /// count in the budget's base at native's measured time each. A count, not local times, so
  /// every rank decides alike.
  void add_calls_before(std::uint64_t calls) { calls_before_ = static_cast<double>(calls); }
  /// Time the job already paid for this pattern outside the trial's calls (its learning, the
  /// probes that found it), agreed: it counts against the same budget as the trial's extra time.
  void add_spent(double seconds) { spent_s_ += seconds > 0 ? seconds : 0; }
  /// The job's time in all-to-all calls so far on every communicator, agreed (the largest over
  /// ranks): the budget's base when it exceeds this communicator's. Never goes back.
  void set_job_time(double seconds) { job_s_ = seconds > job_s_ ? seconds : job_s_; }
  /// What the other patterns' trials under way have spent so far, job-wide (agreed, the largest
  /// over ranks): it counts against this trial's budget too, so that trials under way at the
  /// same time share one budget instead of each spending its own. Negative when their
  /// candidates saved more than that: this trial may spend what they saved.
  void set_others_spent(double seconds) { others_s_ = seconds; }
  /// This trial's spending so far: its extra time against native and add_spent (negative when
  /// its candidates saved more than that).
  double spent_seconds() const { return extra_s_ + spent_s_; }
  /// The budget's share of the time so far (COMMSCHED_TRIAL_BUDGET), kBudgetShare unless set;
  /// 1 (or more): no call waits for the budget, whatever was spent.
  void set_budget_share(double share) { share_ = share > 0 ? share : kBudgetShare; }
  /// The share a trial gets where earlier trials beside it ended one of two ways: `decided`
  /// reached a verdict, `abandoned` were left undecided when their patterns went away (the
  /// time they spent bought nothing). share x (1 + decided) / (1 + decided + abandoned): where
  /// patterns keep leaving before a verdict, each new trial may spend less, and every verdict
  /// reached wins the share back.
  static double share_after(double share, int decided, int abandoned) {
    decided = decided > 0 ? decided : 0;
    abandoned = abandoned > 0 ? abandoned : 0;
    return share * (1.0 + decided) / (1.0 + decided + abandoned);
  }
  /// The candidate this call runs.
  std::size_t current() const { return current_; }
  /// The agreed time of the call just run with current(); advances the trial. `overhead` is
  /// what the call paid on top of `seconds` only because the trial measured it (a native
  /// call's agreement): it counts against the budget. `own`, when known (>= 0), is the call's
  /// own time where `seconds` runs on to the next all-to-all: the budget's base counts that.
  void measured(double seconds, double overhead = 0, double own = -1);
  /// Native calls the trial wants before its next measured call, while its budget refills:
  /// they need no measurement (so no agreement). 0 when the next call is measured.
  std::uint64_t native_calls_owed() const { return owed_; }
  /// One of those calls ran natively.
  void unmeasured_native_call();

  bool decided() const { return decided_; }
  std::size_t winner() const { return winner_; }
  /// Pairs measured so far, over all candidates.
  int rounds() const { return pairs_total_; }
  /// The trial's extra time against native so far (negative: it saved time).
  double extra_seconds() const { return extra_s_; }
  const std::vector<TrialCandidate>& candidates() const { return cands_; }
  /// Candidate c's time over native's in the median of its pairs so far; -1 before its first
  /// pair (native: -1 too).
  double paired_ratio(std::size_t c) const;

 private:
  enum class Slot { native_alone, first_call, pair_first, pair_second, rechecking };
  struct Pair {
    double candidate_s, native_s;
    double candidate_own_s = -1, native_own_s = -1;  // the calls' own times; < 0 unknown
  };
  double native_estimate() const;
  // Native's time in the call itself: its weighed median scaled by the own share of its
  // measured calls (what each native call adds to the budget's base).
  double native_own_estimate() const;
  void schedule_next();
  // Whether the next call is a switch-in call: a measured pair call whose side differs from
  // what the previous call ran.
  bool switching_in() const;
  // A first or switch-in call's extra time against native's median.
  double extra_against_native(double seconds, double own) const;
  void evaluate(std::size_t candidate);
  // Candidate c's measured_s from what is measured so far (native: native_estimate()), so
  // that an undecided trial's report shows it.
  void note_measured(std::size_t c);
  void decide(std::size_t winner);
  bool beats(std::size_t a, double ta, std::size_t b, double tb) const;
  std::uint64_t draw();

  std::vector<TrialCandidate> cands_;
  std::vector<std::vector<Pair>> pairs_;
  std::vector<double> native_samples_;
  std::vector<bool> alive_, warm_;
  int calls_;
  int recheck_every_;
  std::uint64_t rng_;
  std::size_t native_;  // index of "native"; size() when absent
  std::size_t current_ = 0;
  std::size_t winner_ = 0;
  bool decided_ = false;
  Slot slot_ = Slot::native_alone;
  std::size_t pair_candidate_ = 0;  // the candidate of the pair under way
  std::size_t last_run_ = 0;        // what the previous call ran
  double pair_first_s_ = 0;         // the pair's first call
  double pair_first_own_s_ = -1;    // its own time (< 0 unknown)
  std::size_t contenders_ = 0;      // candidates other than native at the start
  int pairs_total_ = 0;
  double total_s_ = 0;              // every trial call's own time
  double native_own_s_ = 0;         // native's measured calls' own time
  double native_weighed_s_ = 0;     // the same calls as weighed (to the next all-to-all)
  double calls_before_ = 0;
  double job_s_ = 0;                // set_job_time, plus native's time per unmeasured call since
  std::uint64_t owed_ = 0;          // unmeasured native calls before the next measured one
  double owed_native_s_ = 0;        // native_own_estimate() when they were owed
  double share_ = kBudgetShare;
  double extra_s_ = 0;
  double spent_s_ = 0;              // add_spent: learning and probes
  double others_s_ = 0;             // set_others_spent
  // After the decision.
  int since_decision_ = 0;
  std::size_t challenger_ = 0;
  std::vector<double> recheck_winner_, recheck_challenger_;
};

}  // namespace commsched::learn
