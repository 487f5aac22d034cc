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

Trial::Trial(std::vector<TrialCandidate> candidates, int calls, int recheck_every)
    : cands_(std::move(candidates)),
      samples_(cands_.size()),
      calls_(calls < 1 ? 1 : calls),
      recheck_every_(recheck_every < 0 ? 0 : recheck_every) {
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

void Trial::decide() {
  // The first sample of each candidate pays first-touch costs: the median of the rest decides.
  for (std::size_t i = 0; i < cands_.size(); ++i) {
    auto& s = samples_[i];
    std::vector<double> rest(s.size() > 1 ? s.begin() + 1 : s.begin(), s.end());
    cands_[i].measured_s = median(rest);
  }
  winner_ = 0;
  for (std::size_t i = 1; i < cands_.size(); ++i)
    if (cands_[i].measured_s >= 0 &&
        (cands_[winner_].measured_s < 0 || cands_[i].measured_s < cands_[winner_].measured_s))
      winner_ = i;
  // Re-checks pit the winner against the measured runner-up.
  challenger_ = winner_ == 0 ? 1 : 0;
  for (std::size_t i = 0; i < cands_.size(); ++i)
    if (i != winner_ && cands_[i].measured_s >= 0 &&
        cands_[i].measured_s < cands_[challenger_].measured_s)
      challenger_ = i;
  decided_ = true;
  current_ = winner_;
  since_decision_ = 0;
}

void Trial::measured(double seconds) {
  if (!decided_) {
    samples_[current_].push_back(seconds);
    // One extra call per candidate absorbs the first-touch sample.
    if (static_cast<int>(samples_[current_].size()) >= calls_ + 1) {
      if (current_ + 1 < cands_.size()) {
        ++current_;
      } else {
        decide();
      }
    }
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
  recheck_challenger_.push_back(seconds);
  if (static_cast<int>(recheck_challenger_.size()) >= calls_ + 1) {
    const double w = median(recheck_winner_);
    const double c = median({recheck_challenger_.begin() + 1, recheck_challenger_.end()});
    cands_[challenger_].measured_s = c;
    if (w >= 0) cands_[winner_].measured_s = w;
    if (c >= 0 && w >= 0 && c < w) std::swap(winner_, challenger_);
    rechecking_ = false;
    since_decision_ = 0;
    recheck_winner_.clear();
    current_ = winner_;
  }
}

}  // namespace commsched::learn
