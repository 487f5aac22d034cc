#include "learn/trial.hpp"

#include <algorithm>
#include <cmath>

namespace commsched::learn {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The one-sided Wilcoxon signed-rank test's p-value that the differences `d` are centred below
// zero: P(W+ <= observed) under the null hypothesis that each |d| is as likely positive as
// negative, W+ the sum of the ranks of the positive differences (ties share their mean rank;
// exact, by counting the 2^n sign patterns of rank sums in half ranks). Zeros are dropped.
double signed_rank_p(std::vector<double> d) {
  d.erase(std::remove(d.begin(), d.end(), 0.0), d.end());
  const std::size_t n = d.size();
  if (n == 0) return 1;
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return std::abs(d[a]) < std::abs(d[b]); });
  std::vector<int> half_rank(n);  // twice the rank, so mean ranks of ties stay integers
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && std::abs(d[order[j + 1]]) == std::abs(d[order[i]])) ++j;
    for (std::size_t k = i; k <= j; ++k) half_rank[order[k]] = static_cast<int>(i + j + 2);
    i = j + 1;
  }
  int observed = 0, total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    total += half_rank[i];
    if (d[i] > 0) observed += half_rank[i];
  }
  // ways[s]: sign patterns whose positive ranks sum to s (in half ranks), as probabilities.
  std::vector<double> ways(static_cast<std::size_t>(total) + 1, 0.0);
  ways[0] = 1;
  int reach = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int r = half_rank[i];
    for (int s = reach; s >= 0; --s) {
      const double w = ways[static_cast<std::size_t>(s)] * 0.5;
      ways[static_cast<std::size_t>(s)] = w;
      ways[static_cast<std::size_t>(s + r)] += w;
    }
    reach += r;
  }
  double p = 0;
  for (int s = 0; s <= observed; ++s) p += ways[static_cast<std::size_t>(s)];
  return std::min(p, 1.0);
}

// Each pair's candidate time over native's: the weighed times (1 where native's is 0), or with
// `own` the calls' own times, leaving out the pairs where those are not known.
std::vector<double> ratios(const auto& pairs, bool own = false) {
  std::vector<double> r;
  for (const auto& p : pairs) {
    if (!own) {
      r.push_back(p.native_s > 0 ? p.candidate_s / p.native_s : 1.0);
    } else if (p.candidate_own_s >= 0 && p.native_own_s > 0) {
      r.push_back(p.candidate_own_s / p.native_own_s);
    }
  }
  return r;
}

// The median ratio of the pairs' own call times; 1 where none are known (the calls' own time
// is then the weighed one).
double own_ratio(const auto& pairs) {
  std::vector<double> r = ratios(pairs, true);
  return r.empty() ? 1.0 : median(std::move(r));
}

// What a candidate's call cost the job beyond native's: `weighed`, the difference in the time
// weighed to the next all-to-all, or, where the calls' own times are known and differ by more,
// that. A slower call whose time the work after it seems to absorb still delays the job: the
// next call's entry, taken as the longest over ranks, does not show it.
double extra_of(double weighed, double own_candidate, double own_native) {
  return own_candidate >= 0 && own_native > 0 ? std::max(weighed, own_candidate - own_native)
                                              : weighed;
}

}  // namespace

Trial::Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every,
             std::uint64_t seed)
    : cands_(std::move(candidates)),
      pairs_(cands_.size()),
      alive_(cands_.size(), true),
      warm_(cands_.size(), false),
      calls_(calls < 1 ? 1 : calls),
      recheck_every_(recheck_every < 0 ? 0 : recheck_every),
      rng_(seed ^ 0x243f6a8885a308d3ULL),
      native_(cands_.size()) {
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (cands_[i].id == "native") native_ = i;
  if (native_ < cands_.size()) alive_[native_] = false;  // the baseline, not a contender
  if (cands_.size() <= 1 || native_ == cands_.size()) {
    decide(0);  // nothing to compare against
    return;
  }
  contenders_ = cands_.size() - 1;
  current_ = last_run_ = native_;  // native first: what first calls are weighed against
}

Trial Trial::decided_for(std::vector<TrialCandidate> candidates, std::size_t winner) {
  Trial t(std::move(candidates), 1, 0);
  t.decided_ = true;
  t.winner_ = t.current_ = winner < t.cands_.size() ? winner : 0;
  return t;
}

double Trial::call_seconds(double since_entry_max, double skipped_agreement_min,
                           int agree_every) {
  const double keep = agree_every > 1 ? 1.0 / agree_every : 1.0;
  return std::max(0.0, since_entry_max - std::max(0.0, skipped_agreement_min) * (1.0 - keep));
}

std::uint64_t Trial::draw() {  // splitmix64: the same stream on every rank
  std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Trial::native_own_estimate() const {
  const double share =
      native_weighed_s_ > 0 ? std::min(1.0, native_own_s_ / native_weighed_s_) : 1.0;
  return std::max(0.0, native_estimate() * share);
}

double Trial::native_estimate() const {
  std::vector<double> all = native_samples_;
  for (const auto& ps : pairs_)
    for (const Pair& p : ps) all.push_back(p.native_s);
  return median(std::move(all));
}

bool Trial::beats(std::size_t a, double ta, std::size_t b, double tb) const {
  if (ta < 0) return false;
  if (tb < 0) return true;
  if (b == native_) return ta < tb * (1.0 - kNativeMargin);
  if (a == native_) return !(tb < ta * (1.0 - kNativeMargin));
  return ta < tb;
}

// The next call: the next live candidate's first call or pair while the budget allows,
// otherwise native alone.
void Trial::schedule_next() {
  if (std::none_of(alive_.begin(), alive_.end(), [](bool a) { return a; })) {
    decide(native_);
    return;
  }
  const double native = native_own_estimate();
  const double base = std::max(total_s_ + calls_before_ * native, job_s_);
  const double spent = extra_s_ + spent_s_ + others_s_;
  if (share_ < 1.0 && spent > share_ * base) {  // a share of 1: the whole job, never waited for
    slot_ = Slot::native_alone;
    current_ = native_;
    // Native calls, each adding native's time to the base, until the budget covers the extra.
    owed_ = native > 0 ? static_cast<std::uint64_t>(std::ceil((spent / share_ - base) / native))
                       : 0;
    owed_native_s_ = native;  // nothing is measured until the owed calls are made
    return;
  }
  // One candidate at a time, best predicted first: its credit (when faster) pays for the next
  // one's first calls, and a good first candidate decides the trial early. Pairs keep drift
  // fair within each comparison.
  pair_candidate_ = static_cast<std::size_t>(
      std::find(alive_.begin(), alive_.end(), true) - alive_.begin());
  if (!warm_[pair_candidate_]) {
    slot_ = Slot::first_call;
    current_ = pair_candidate_;
    return;
  }
  slot_ = Slot::pair_first;
  current_ = draw() % 2 ? pair_candidate_ : native_;
}

bool Trial::switching_in() const {
  return (slot_ == Slot::pair_first || slot_ == Slot::pair_second) && current_ != last_run_;
}

double Trial::extra_against_native(double seconds, double own) const {
  const double n = native_estimate();
  return extra_of(seconds - (n >= 0 ? n : seconds), own, native_own_estimate());
}

// After a pair of candidate c. At its checkpoints (`calls` pairs, then twice, four and eight
// times as many) it is accepted when it convinces, dropped when it is not faster than native in
// the median or has had its last checkpoint, and otherwise goes on.
void Trial::evaluate(std::size_t c) {
  const int n = static_cast<int>(pairs_[c].size());
  int checkpoints = 0;
  bool at_checkpoint = false;
  for (int k = calls_; k <= kMaxRoundsPerCall * calls_; k *= 2) {
    ++checkpoints;
    at_checkpoint = at_checkpoint || n == k;
  }
  if (!at_checkpoint) return;
  // The level is shared by every contender and every checkpoint, so that looking repeatedly
  // does not multiply the chances of a false win.
  const double level =
      kSignificance / static_cast<double>(std::max<std::size_t>(contenders_, 1) * checkpoints);
  const std::vector<double> r = ratios(pairs_[c]);
  const double m = median(r);
  // The pairs' log time ratios against native's margin: a candidate about as fast as native
  // sits above the margin as often, and as far, as below it, and the test then rejects it.
  std::vector<double> d;
  for (double x : r) d.push_back(std::log(std::max(x, 1e-12)) - std::log(1.0 - kNativeMargin));
  const bool own_ok = own_ratio(pairs_[c]) <= 1.0 + kNativeMargin;
  if (m <= 1.0 - kNativeMargin && own_ok && signed_rank_p(std::move(d)) <= level) {
    decide(c);
    return;
  }
  // From the second checkpoint on, own calls slower by more than the margin, and from the
  // third a median within it, are as good as lost: move on.
  if (m >= 1.0 || (n >= 2 * calls_ && !own_ok) || (n >= 4 * calls_ && m > 1.0 - kNativeMargin) ||
      2 * n > kMaxRoundsPerCall * calls_)
    alive_[c] = false;
}

double Trial::paired_ratio(std::size_t c) const {
  if (c >= pairs_.size() || c == native_ || pairs_[c].empty()) return -1;
  return median(ratios(pairs_[c]));
}

void Trial::note_measured(std::size_t c) {
  if (c == native_) {
    cands_[c].measured_s = native_estimate();
    return;
  }
  std::vector<double> t;
  for (const Pair& p : pairs_[c]) t.push_back(p.candidate_s);
  cands_[c].measured_s = median(std::move(t));
}

void Trial::decide(std::size_t winner) {
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (i == native_ || !pairs_[i].empty()) note_measured(i);
  winner_ = winner < cands_.size() ? winner : 0;
  // Re-checks pit the winner against native, or native against the best measured candidate.
  challenger_ = winner_ == 0 ? 1 : 0;
  if (winner_ != native_ && native_ < cands_.size()) {
    challenger_ = native_;
  } else {
    for (std::size_t i = 0; i < cands_.size(); ++i)
      if (i != winner_ && cands_[i].measured_s >= 0 &&
          (cands_[challenger_].measured_s < 0 ||
           cands_[i].measured_s < cands_[challenger_].measured_s))
        challenger_ = i;
  }
  decided_ = true;
  current_ = winner_;
  slot_ = Slot::native_alone;
  since_decision_ = 0;
}

void Trial::unmeasured_native_call() {
  if (decided_ || owed_ == 0) return;
  calls_before_ += 1;
  job_s_ += owed_native_s_;  // at least; the next agreement tells
  last_run_ = native_;
  if (--owed_ == 0) schedule_next();
}

void Trial::measured(double seconds, double overhead, double own) {
  if (!decided_) {
    const double call_s = own >= 0 ? own : seconds;
    total_s_ += call_s + std::max(0.0, overhead);
    if (current_ == native_) {
      native_own_s_ += call_s;
      native_weighed_s_ += seconds;
    }
    extra_s_ += std::max(0.0, overhead);
    const bool switch_in = switching_in();
    last_run_ = current_;
    if (switch_in) {  // charged like a first call; the measured call comes next
      extra_s_ += extra_against_native(seconds, own);
      return;
    }
    switch (slot_) {
      case Slot::native_alone:
        native_samples_.push_back(seconds);
        note_measured(native_);
        break;
      case Slot::first_call: {
        extra_s_ += extra_against_native(seconds, own);
        warm_[pair_candidate_] = true;
        break;
      }
      case Slot::pair_first:
        pair_first_s_ = seconds;
        pair_first_own_s_ = own;
        slot_ = Slot::pair_second;
        current_ = current_ == native_ ? pair_candidate_ : native_;
        return;
      case Slot::pair_second: {
        const bool native_second = current_ == native_;
        const Pair p{native_second ? pair_first_s_ : seconds,
                     native_second ? seconds : pair_first_s_,
                     native_second ? pair_first_own_s_ : own,
                     native_second ? own : pair_first_own_s_};
        pairs_[pair_candidate_].push_back(p);
        ++pairs_total_;
        note_measured(pair_candidate_);
        note_measured(native_);
        extra_s_ += extra_of(p.candidate_s - p.native_s, p.candidate_own_s, p.native_own_s);
        evaluate(pair_candidate_);
        if (decided_) return;
        break;
      }
      case Slot::rechecking:
        break;
    }
    schedule_next();
    return;
  }
  if (recheck_every_ == 0 || cands_.size() < 2) return;
  if (slot_ != Slot::rechecking) {
    if (current_ == winner_) recheck_winner_.push_back(seconds);
    if (static_cast<int>(recheck_winner_.size()) > calls_)
      recheck_winner_.erase(recheck_winner_.begin());
    if (++since_decision_ >= recheck_every_) {
      slot_ = Slot::rechecking;
      recheck_challenger_.clear();
      current_ = challenger_;
    }
    return;
  }
  // The challenger's first call after a pause pays first-touch costs again: discarded.
  recheck_challenger_.push_back(seconds);
  if (static_cast<int>(recheck_challenger_.size()) >= calls_ + 1) {
    const double w = median(recheck_winner_);
    const double c = median({recheck_challenger_.begin() + 1, recheck_challenger_.end()});
    cands_[challenger_].measured_s = c;
    if (w >= 0) cands_[winner_].measured_s = w;
    if (w >= 0 && beats(challenger_, c, winner_, w)) std::swap(winner_, challenger_);
    slot_ = Slot::native_alone;
    since_decision_ = 0;
    recheck_winner_.clear();
    current_ = winner_;
  }
}

}  // namespace commsched::learn
