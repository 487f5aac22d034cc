#include "learn/trial.hpp"

#include <algorithm>

namespace commsched::learn {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

Trial::Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every,
             double budget_s)
    : cands_(std::move(candidates)),
      samples_(cands_.size()),
      calls_(calls < 1 ? 1 : calls),
      recheck_every_(recheck_every < 0 ? 0 : recheck_every),
      budget_s_(budget_s > 0 ? budget_s : 0) {
  native_ = cands_.size();
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (cands_[i].id == "native") native_ = i;
  if (cands_.size() <= 1) {
    decided_ = true;
    winner_ = 0;
  }
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

bool Trial::beats(std::size_t a, double ta, std::size_t b, double tb) const {
  if (ta < 0) return false;
  if (tb < 0) return true;
  if (b == native_) return ta < tb * (1.0 - kNativeMargin);
  if (a == native_) return !(tb < ta * (1.0 - kNativeMargin));
  return ta < tb;
}

void Trial::decide() {
  for (std::size_t i = 0; i < cands_.size(); ++i) cands_[i].measured_s = median(samples_[i]);
  winner_ = native_ < cands_.size() ? native_ : 0;
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (i != winner_ && beats(i, cands_[i].measured_s, winner_, cands_[winner_].measured_s))
      winner_ = i;
  // Re-checks pit the winner against the measured runner-up.
  challenger_ = winner_ == 0 ? 1 : 0;
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (i != winner_ && cands_[i].measured_s >= 0 &&
        (cands_[challenger_].measured_s < 0 ||
         cands_[i].measured_s < cands_[challenger_].measured_s))
      challenger_ = i;
  decided_ = true;
  current_ = winner_;
  since_decision_ = 0;
}

void Trial::measured(double seconds) {
  if (!decided_) {
    if (warm_) {
      samples_[current_].push_back(seconds);
      spent_s_ += seconds;
    }
    if (++current_ < cands_.size()) return;
    current_ = 0;  // a round is complete
    if (!warm_) {
      warm_ = true;
      return;
    }
    ++rounds_;
    const bool more = rounds_ < calls_ ||
                      (spent_s_ < budget_s_ && rounds_ < kMaxRoundsPerCall * calls_);
    if (!more) decide();
    return;
  }
  if (recheck_every_ == 0 || cands_.size() < 2) return;
  if (!rechecking_) {
    if (current_ == winner_) recheck_winner_.push_back(seconds);
    if (static_cast<int>(recheck_winner_.size()) > calls_)
      recheck_winner_.erase(recheck_winner_.begin());
    if (++since_decision_ >= recheck_every_) {
      rechecking_ = true;
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
    rechecking_ = false;
    since_decision_ = 0;
    recheck_winner_.clear();
    current_ = winner_;
  }
}

}  // namespace commsched::learn
