#include "learn/in_step.hpp"

#include <algorithm>
#include <cmath>

#include "plan/registry.hpp"

namespace commsched::learn {

long long InStepClock::epoch(double t) const {
  return static_cast<long long>(std::floor(t / epoch_s));
}

bool in_step_epoch(long long k) {
  const long long r = ((k % kInStepEpochs) + kInStepEpochs) % kInStepEpochs;
  return r == 1 || r == 2 || r == 5;
}

double in_step_decide_at(double t, const InStepClock& clock) {
  return static_cast<double>(clock.epoch(t) + 1 + kInStepEpochs) * clock.epoch_s;
}

InStepPhase in_step_phase(double t, double decide_at, const InStepClock& clock) {
  if (t >= decide_at) return InStepPhase::decide;
  if (t < decide_at - kInStepEpochs * clock.epoch_s) return InStepPhase::lead_in;
  return in_step_epoch(clock.epoch(t)) ? InStepPhase::sync : InStepPhase::native;
}

bool in_step_joins(double period, double barrier) {
  return in_step_may_join(period) && barrier >= 0 && barrier <= kInStepMaxCost * period;
}

bool in_step_may_join(double period) { return period >= kInStepMinPeriod; }

int in_step_cycle(const double* entries, int n) {
  // Over a whole cycle the time varies only by the job's noise, the same at any lag; within
  // one, by the cycle's own structure as well.
  int best = 1;
  double best_spread = INFINITY;
  for (int m = 1; m <= kInStepMaxCycle && n - m >= 2; ++m) {
    double sum = 0, sq = 0;
    const int count = n - m;
    for (int j = 0; j < count; ++j) {
      const double d = entries[j + m] - entries[j];
      sum += d;
      sq += d * d;
    }
    const double mean = sum / count;
    const double spread = std::sqrt(std::max(sq / count - mean * mean, 0.0));
    if (spread < best_spread * 0.5) {  // a longer cycle must be clearly steadier
      best = m;
      best_spread = spread;
    }
  }
  return best;
}

void EntryForecast::add(double t) {
  for (std::size_t i = entries_.size() - 1; i > 0; --i) entries_[i] = entries_[i - 1];
  entries_[0] = t;
  if (n_ < static_cast<int>(entries_.size())) ++n_;
}

double EntryForecast::next(int cycle, double period) {
  const int c = std::clamp(cycle, 1, kInStepMaxCycle);
  double t = last_forecast_;
  if (n_ > c) {
    const auto at = [&](int i) { return entries_[static_cast<std::size_t>(i)]; };
    t = at(c - 1) + (at(0) - at(c));
  } else if (n_ > 0) {
    t = entries_[0] + std::max(period, 0.0);
  }
  last_forecast_ = std::max(t, last_forecast_);
  return last_forecast_;
}

void InStepMeter::close() {
  if (whole_ > 0) {
    const std::size_t at = sync_ ? 0 : 2;
    totals_[at] += whole_;
    totals_[at + 1] += last_t_ - anchor_t_;
  }
  calls_ = since_anchor_ = whole_ = 0;
}

void InStepMeter::note(long long k, bool sync, double t, int cycle) {
  if (k != k_) {
    close();
    k_ = k;
    sync_ = sync;
  }
  ++calls_;
  if (calls_ == 2) {
    anchor_t_ = t;
  } else if (calls_ > 2 && ++since_anchor_ % (cycle > 0 ? cycle : 1) == 0) {
    whole_ = since_anchor_;
    last_t_ = t;
  }
}

void InStepMeter::pour(std::array<double, 4>& pool, double period) {
  const double unit = period > 0 ? period : 1;
  for (std::size_t i = 0; i < totals_.size(); ++i) {
    const double added = totals_[i] - poured_[i];
    pool[i] += i % 2 == 1 ? added / unit : added;
  }
  poured_ = totals_;
}

double in_step_ratio(const std::array<double, 4>& summed) {
  if (summed[0] <= 0 || summed[2] <= 0 || summed[3] <= 0) return -1;
  return (summed[1] / summed[0]) / (summed[3] / summed[2]);
}

bool in_step_wins(const std::array<double, 4>& summed) {
  const double r = in_step_ratio(summed);
  return r >= 0 && r <= 1 - kInStepMargin;
}

PhaseVerdict phase_verdict(const std::array<double, 4>& summed, int round, bool heard_kept) {
  const double r = in_step_ratio(summed);
  if (in_step_wins(summed) || (heard_kept && r >= 0 && r < 1)) return PhaseVerdict::keep;
  if (r >= 1 + kPhaseLeave || round >= kPhaseRounds) return PhaseVerdict::leave;
  return PhaseVerdict::again;
}

int phase_schedule(const Trial& trial, const std::vector<bool>& schedule) {
  int best = -1;
  double best_ratio = 0;
  for (std::size_t i = 0; i < schedule.size() && i < trial.candidates().size(); ++i) {
    if (!schedule[i]) continue;
    const double measured = trial.paired_ratio(i);
    const double r = measured >= 0 ? measured : 1.0;  // unmeasured: native's equal
    if (best < 0 || r < best_ratio) {  // ties: the earlier in plan_chosen's order
      best = static_cast<int>(i);
      best_ratio = r;
    }
  }
  return best;
}

bool is_phase_schedule(std::string_view id, std::size_t phases) {
  const plan::Strategy* s = plan::find_strategy(id);
  return s && s->plan && s->permutation && phases > 1;
}

bool in_step_keeps(const std::array<double, 4>& summed, InStepLoss loss) {
  switch (loss) {
    case InStepLoss::none:
      return false;
    case InStepLoss::seen:  // -1, nothing measured on a side: nothing to say it is slower
      return in_step_ratio(summed) <= 1 + kInStepVeto;
    case InStepLoss::unknown:
      return in_step_wins(summed);
  }
  return false;
}

}  // namespace commsched::learn
