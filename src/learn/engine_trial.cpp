#include "learn/engine_trial.hpp"

#include <algorithm>
#include <cmath>

namespace commsched::learn {
namespace {

// The six orders of the three arms; round r runs kOrders[r % 6].
constexpr std::array<std::array<EngineTrial::Arm, EngineTrial::kArms>, 6> kOrders{{
    {EngineTrial::native, EngineTrial::eager, EngineTrial::shift},
    {EngineTrial::eager, EngineTrial::shift, EngineTrial::native},
    {EngineTrial::shift, EngineTrial::native, EngineTrial::eager},
    {EngineTrial::native, EngineTrial::shift, EngineTrial::eager},
    {EngineTrial::shift, EngineTrial::eager, EngineTrial::native},
    {EngineTrial::eager, EngineTrial::native, EngineTrial::shift},
}};

// A round's log-ratio is clipped to ±kClip (a factor of 2.7): one interval that took a
// checkpoint's time moves the mean by at most this much. Not less: over a network the engine's
// gain is mostly in the rare slow rounds it avoids (a retransmission timeout after an incast).
constexpr double kClip = 1.0;

// An arm replaces MPI's own when its mean is kChoose standard errors below zero and its sign
// test reaches kSign; MPI's own stays early when every arm's mean is kKeep standard errors above
// the margin. The sign test carries the evidence: a network's intervals have tails (a
// retransmission timeout) that make the mean's standard error large even where an arm wins
// most rounds.
constexpr double kChoose = 1.0;
constexpr double kKeep = 2.0;
constexpr double kSign = 2.0;

}  // namespace

std::optional<EngineTrial::Arm> EngineTrial::arm(std::uint32_t index) {
  if (index < kWarm || index >= kEnd) return std::nullopt;
  const std::uint32_t k = index - kWarm;
  return kOrders[(k / kArms) % kOrders.size()][k % kArms];
}

void EngineTrial::observe(std::uint32_t index, double seconds, bool valid) {
  const auto a = arm(index);
  if (!a) return;
  if (!(seconds > 0) || !std::isfinite(seconds)) valid = false;
  round_s_[*a] = seconds;
  round_valid_ = round_valid_ && valid;
  if (++round_seen_ < kArms) return;
  if (round_valid_) {
    totals_.rounds += 1;
    for (int arm_index : {eager, shift}) {
      const double r = std::clamp(std::log(round_s_[arm_index] / round_s_[native]), -kClip, kClip);
      totals_.log_ratio[arm_index] += r;
      totals_.log_sq[arm_index] += r * r;
      if (round_s_[arm_index] < round_s_[native]) totals_.wins[arm_index] += 1;
    }
  } else {
    totals_.broken += 1;
  }
  round_seen_ = 0;
  round_valid_ = true;
  ++rounds_seen_;
}

std::array<double, EngineTrial::Totals::kValues> EngineTrial::Totals::pack() const {
  return {log_ratio[0], log_ratio[1], log_ratio[2], log_sq[0], log_sq[1], log_sq[2],
          wins[0],      wins[1],      wins[2],      rounds,    broken};
}

EngineTrial::Totals EngineTrial::Totals::unpack(const double* v) {
  Totals t;
  for (int a = 0; a < kArms; ++a) {
    t.log_ratio[static_cast<std::size_t>(a)] = v[a];
    t.log_sq[static_cast<std::size_t>(a)] = v[kArms + a];
    t.wins[static_cast<std::size_t>(a)] = v[2 * kArms + a];
  }
  t.rounds = v[3 * kArms];
  t.broken = v[3 * kArms + 1];
  return t;
}

EngineTrial::Totals::Measure EngineTrial::Totals::measure(Arm a, int ranks) const {
  const double per_rank = rounds / ranks;  // a round counts once, whatever the ranks
  const double mean = log_ratio[a] / rounds;
  const double var = std::max(0.0, log_sq[a] / rounds - mean * mean);
  const double won = wins[a] / rounds;
  // Sign test: wins against half the rounds, in a fair coin's standard deviations.
  return {mean, std::sqrt(var / per_rank), won, (won - 0.5) * 2.0 * std::sqrt(per_rank)};
}

std::optional<EngineTrial::Arm> EngineTrial::verdict(const Totals& sum, int ranks,
                                                    std::uint32_t fewest) {
  if (ranks <= 0 || fewest < kRounds) return std::nullopt;
  const double seen = sum.rounds + sum.broken;
  // Back-to-back starts, or intervals that could not be read: nothing to judge by.
  if (sum.broken * 3 > seen || sum.rounds <= 0) return native;
  const double bar = std::log(1.0 - kMargin);
  Arm best = native;
  double best_mean = bar;
  bool open = false;  // some arm might still turn out kMargin faster
  for (Arm a : {eager, shift}) {
    const Totals::Measure m = sum.measure(a, ranks);
    if (m.mean_log <= best_mean && m.mean_log + kChoose * m.se < 0 && m.sign_z >= kSign) {
      best = a;
      best_mean = m.mean_log;
    }
    if (m.mean_log - kKeep * m.se <= bar) open = true;
  }
  if (best != native || !open || fewest >= kMaxRounds) return best;
  return std::nullopt;
}

const char* arm_name(EngineTrial::Arm a) {
  switch (a) {
    case EngineTrial::eager: return "eager";
    case EngineTrial::shift: return "shift";
    case EngineTrial::native: break;
  }
  return "native";
}

}  // namespace commsched::learn
