#include "learn/choose.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace commsched::learn {

std::string_view choose_auto(const core::CommMatrix& m) {
  const auto n = static_cast<std::size_t>(m.size());
  if (n <= 2 || m.nonzeros() == 0) return "native";
  if (2 * m.nonzeros() > n * n) return "native";
  std::vector<Bytes> sizes;
  sizes.reserve(m.nonzeros());
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) sizes.push_back(e.bytes);
  const auto mid = sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() / 2);
  std::nth_element(sizes.begin(), mid, sizes.end());
  const Bytes median = *mid;
  const Bytes largest = *std::max_element(sizes.begin(), sizes.end());
  if (largest >= 8 * median) return "rs_nh";
  return "color";
}

namespace {

CandidatePlan make(const core::CommMatrix& m, std::string_view id, const plan::Options& options,
                   const Predictor& predict, Bytes max_staging) {
  CandidatePlan c;
  c.id = std::string(id);
  const plan::Strategy* s = plan::find_strategy(id);
  if (s && s->plan) {
    c.plan = s->plan(m, options);
    const core::Validation v = core::validate(c.plan, m);
    if (!v.ok) {
      c.rejected = "invalid plan: " + v.error;
    } else if (const auto per = core::staging_bytes_per_rank(c.plan);
               !per.empty() && *std::max_element(per.begin(), per.end()) > max_staging) {
      const Bytes st = *std::max_element(per.begin(), per.end());
      c.rejected = "needs " + std::to_string(st) + " staging bytes on a rank, above " +
                   "COMMSCHED_MAX_STAGING=" + std::to_string(max_staging);
    }
  }
  if (c.rejected.empty() && predict) c.predicted_s = predict(s && s->plan ? &c.plan : nullptr);
  return c;
}

// Native with its agreed prediction (entry `at`; none if no rank predicted it).
CandidatePlan native_candidate(const std::vector<Prediction>& agreed, std::size_t at) {
  CandidatePlan c;
  c.id = "native";
  if (at < agreed.size() && agreed[at].predicted_s < Prediction::kNone)
    c.predicted_s = agreed[at].predicted_s;
  return c;
}

// Whether `plan` forwards a message through another rank (a route's relay): some rank stages
// what it passes on, and those bytes cross the network more than once.
bool relays(const core::Plan& plan) {
  const std::vector<Bytes> staged = core::staging_bytes_per_rank(plan);
  return std::any_of(staged.begin(), staged.end(), [](Bytes b) { return b > 0; });
}

}  // namespace

std::vector<CandidatePlan> plan_candidates(const core::CommMatrix& m, std::string_view strategy,
                                           const plan::Options& options,
                                           const std::vector<std::string>& allowed,
                                           const Predictor& predict, std::size_t keep,
                                           Bytes max_staging) {
  if (predict) {
    const std::vector<Prediction> agreed = predict_share(
        m, prediction_pool(strategy, allowed), options, predict, max_staging, 0, 1);
    return plan_agreed(m, strategy, allowed, agreed, options, keep, max_staging);
  }
  const std::string_view id = strategy == "auto" ? choose_auto(m) : strategy;
  std::vector<CandidatePlan> out;
  out.push_back(make(m, id, options, predict, max_staging));
  if (id != "native") out.push_back(make(m, "native", options, predict, max_staging));
  return out;
}

std::vector<std::string> auto_pool(const std::vector<std::string>& allowed) {
  std::vector<std::string> pool;
  for (const plan::Strategy& s : plan::strategies()) {
    if (s.id == "native") continue;
    const bool named = std::find(allowed.begin(), allowed.end(), s.id) != allowed.end();
    if (!allowed.empty() && !named) continue;
    if (s.on_request && !named) continue;
    pool.emplace_back(s.id);
  }
  return pool;
}

std::vector<std::string> forced_pool(std::string_view strategy) {
  if (strategy == "native") return {};
  return {std::string(strategy)};
}

std::vector<std::string> prediction_pool(std::string_view strategy,
                                         const std::vector<std::string>& allowed) {
  return strategy == "auto" ? auto_pool(allowed) : forced_pool(strategy);
}

std::vector<Prediction> predict_share(const core::CommMatrix& m,
                                      const std::vector<std::string>& pool,
                                      const plan::Options& options, const Predictor& predict,
                                      Bytes max_staging, std::size_t part, std::size_t parts) {
  std::vector<Prediction> out(pool.size() + 1);  // native last
  if (parts == 0) parts = 1;
  for (std::size_t i = part % parts; i <= pool.size(); i += parts) {
    const CandidatePlan c =
        make(m, i < pool.size() ? std::string_view(pool[i]) : "native", options, predict,
             max_staging);
    Prediction& p = out[i];
    if (c.rejected.empty()) {
      p.predicted_s = c.predicted_s;
      continue;
    }
    p.why = c.rejected;
    p.rejected = c.rejected.rfind("invalid plan", 0) == 0 ? 1 : 2;
    if (p.rejected == 2 && !c.plan.phases.empty()) {
      const auto per = core::staging_bytes_per_rank(c.plan);
      p.staging_bytes = static_cast<double>(*std::max_element(per.begin(), per.end()));
    }
  }
  return out;
}

std::vector<double> pack_predictions(const std::vector<Prediction>& p) {
  std::vector<double> out;
  out.reserve(3 * p.size());
  for (const Prediction& x : p) {
    out.push_back(x.predicted_s);
    out.push_back(-static_cast<double>(x.rejected));  // the minimum is the largest code
    out.push_back(-x.staging_bytes);
  }
  return out;
}

std::vector<Prediction> unpack_predictions(const std::vector<double>& packed) {
  std::vector<Prediction> out(packed.size() / 3);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].predicted_s = packed[3 * i];
    out[i].rejected = static_cast<int>(-packed[3 * i + 1]);
    out[i].staging_bytes = -packed[3 * i + 2];
  }
  return out;
}

std::size_t trial_width(const std::vector<Prediction>& agreed, int calls, double budget_s,
                        std::size_t in_step) {
  if (agreed.empty()) return kTrialKeep;
  std::vector<double> t;  // the pool's usable plans' predictions, best first
  for (std::size_t i = 0; i + 1 < agreed.size(); ++i)
    if (i != in_step && agreed[i].rejected == 0 && agreed[i].predicted_s < Prediction::kNone)
      t.push_back(agreed[i].predicted_s);
  std::sort(t.begin(), t.end());
  const Prediction& native = agreed.back();
  double round = native.predicted_s < Prediction::kNone ? native.predicted_s : 0;
  if (in_step < agreed.size() - 1) round *= 2;  // native_sync, tried beside the plans
  std::size_t k = 0;
  for (; k < t.size() && k < kTrialKeep; ++k) round += t[k];
  const double rounds = static_cast<double>(std::max(calls, 1) + 1);
  while (k < t.size() && k < kTrialKeepMost && (round + t[k]) * rounds <= budget_s)
    round += t[k++];
  return std::max(k, kTrialKeep);
}

std::vector<CandidatePlan> plan_chosen(const core::CommMatrix& m,
                                       const std::vector<std::string>& pool,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, std::size_t keep,
                                       Bytes max_staging) {
  std::vector<std::size_t> order;
  std::size_t in_step = pool.size();  // native_sync's entry, if in the pool
  for (std::size_t i = 0; i < pool.size() && i < agreed.size(); ++i) {
    if (agreed[i].rejected != 0 || agreed[i].predicted_s >= Prediction::kNone) continue;
    if (pool[i] == kInStep) {
      in_step = i;
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return agreed[a].predicted_s < agreed[b].predicted_s;
  });
  std::vector<CandidatePlan> out;
  std::vector<CandidatePlan> same;  // plans that repeat a kept one: listed, not tried
  std::size_t lookalikes = 0;       // plans the model cannot tell from a kept one
  for (std::size_t k = 0; k < order.size() && out.size() + lookalikes < keep; ++k) {
    // Planned again here (plans are deterministic): the rank that predicted it may be another.
    CandidatePlan c = make(m, pool[order[k]], options, Predictor{}, max_staging);
    c.predicted_s = agreed[order[k]].predicted_s;
    // Lists `c` untried, with why, when a kept plan matches it.
    const auto listed_as = [&](auto&& matches, const std::string& why, const char* note) {
      if (!c.rejected.empty()) return false;
      const auto kept = std::find_if(out.begin(), out.end(), matches);
      if (kept == out.end()) return false;
      CandidatePlan dup;
      dup.id = c.id;
      dup.predicted_s = c.predicted_s;
      dup.rejected = why + kept->id + note;
      same.push_back(std::move(dup));
      return true;
    };
    // A strategy whose plan is one already kept (a hybrid route whose messages are all small
    // enough to take the indirect path is its pure variant) would only repeat that trial.
    if (listed_as(
            [&](const CandidatePlan& o) {
              return o.plan.barrier_between_phases == c.plan.barrier_between_phases &&
                     o.plan.phases == c.plan.phases;
            },
            "same plan as ", " (tried once)"))
      continue;
    // A plan the model cannot tell from a kept one: as many phases, the same predicted time to
    // rounding. On a uniform exchange most direct schedules are one set of phases in another
    // order (a 4-rank remap: pex, lp_xor, bex, greedy, color, maxmin, ...), and trying each
    // would spend the trial's budget, and the job's first calls, looking again at what the
    // first one measures. Listed, untried, and it takes its slot of the width: where the
    // cheapest plans are all alike, fewer are tried.
    if (listed_as(
            [&](const CandidatePlan& o) {
              return o.plan.phases.size() == c.plan.phases.size() &&
                     std::abs(o.predicted_s - c.predicted_s) <= kSamePrediction * o.predicted_s;
            },
            "predicted the same as ", ", with as many phases (not tried)")) {
      ++lookalikes;
      continue;
    }
    out.push_back(std::move(c));
  }
  CandidatePlan native = native_candidate(agreed, pool.size());
  // Native goes where its prediction puts it, so the best predicted candidate runs first.
  const auto pos = std::find_if(out.begin(), out.end(), [&](const CandidatePlan& c) {
    return c.predicted_s > native.predicted_s;
  });
  // Behind native, the trial looks for what the model misses. The model has no receiver
  // contention (a shallow switch queue dropping an incast), and a one-phase plan, which posts
  // every message at once as the MPI library's own exchange does, shares native's contention:
  // plans of several phases go first there. Of those, the direct ones first: they spread the
  // receivers' load without adding a byte, while a route behind native is slower by the
  // model's own count, its relayed bytes crossing the network twice (Quantum ESPRESSO's
  // 8 KiB transposes on shallow queues: `mesh2d_pure`, predicted just ahead of the direct
  // schedules, made the job 1.1-1.4 times slower in its epochs).
  const auto one_phase = std::stable_partition(
      pos, out.end(), [](const CandidatePlan& c) { return c.plan.phases.size() > 1; });
  std::stable_partition(pos, one_phase, [](const CandidatePlan& c) { return !relays(c.plan); });
  const auto behind = out.insert(pos, std::move(native)) + 1;
  // The model has no skew between the ranks either: native_sync, MPI's own call once every
  // rank has entered it, is predicted as native and, where named, comes first behind it,
  // outside the width (it plans nothing and costs one agreement a call).
  if (in_step < pool.size()) {
    CandidatePlan c;
    c.id = pool[in_step];
    c.predicted_s = agreed[in_step].predicted_s;
    out.insert(behind, std::move(c));
  }
  for (CandidatePlan& c : same) out.push_back(std::move(c));
  for (std::size_t i = 0; i < pool.size() && i < agreed.size(); ++i) {
    const Prediction& a = agreed[i];
    if (a.rejected == 0 && a.predicted_s < Prediction::kNone) continue;
    CandidatePlan c;
    c.id = pool[i];
    if (!a.why.empty()) {
      c.rejected = a.why;
    } else if (a.rejected == 1) {
      c.rejected = "invalid plan (found by the rank that predicted it)";
    } else if (a.rejected == 2) {
      c.rejected = "needs " + std::to_string(static_cast<Bytes>(a.staging_bytes)) +
                   " staging bytes on a rank, above COMMSCHED_MAX_STAGING=" +
                   std::to_string(max_staging);
    } else {
      c.rejected = "not predicted (planning failed on the rank that predicted it)";
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CandidatePlan> plan_forced(const core::CommMatrix& m, std::string_view strategy,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, Bytes max_staging) {
  const std::vector<std::string> pool = forced_pool(strategy);
  std::vector<CandidatePlan> out;
  if (!pool.empty()) {
    CandidatePlan c = make(m, pool.front(), options, Predictor{}, max_staging);
    if (c.rejected.empty() && !agreed.empty() && agreed.front().predicted_s < Prediction::kNone)
      c.predicted_s = agreed.front().predicted_s;
    out.push_back(std::move(c));
  }
  out.push_back(native_candidate(agreed, pool.size()));
  return out;
}

std::vector<CandidatePlan> plan_agreed(const core::CommMatrix& m, std::string_view strategy,
                                       const std::vector<std::string>& allowed,
                                       const std::vector<Prediction>& agreed,
                                       const plan::Options& options, std::size_t keep,
                                       Bytes max_staging) {
  if (strategy == "auto")
    return plan_chosen(m, auto_pool(allowed), agreed, options, keep, max_staging);
  return plan_forced(m, strategy, agreed, options, max_staging);
}

}  // namespace commsched::learn
