#include "learn/choose.hpp"

#include <algorithm>
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

}  // namespace

std::vector<CandidatePlan> plan_candidates(const core::CommMatrix& m, std::string_view strategy,
                                           const plan::Options& options,
                                           const std::vector<std::string>& allowed,
                                           const Predictor& predict, std::size_t keep,
                                           Bytes max_staging) {
  std::vector<CandidatePlan> out;
  if (strategy != "auto") {
    out.push_back(make(m, strategy, options, predict, max_staging));
    if (strategy != "native") out.push_back(make(m, "native", options, predict, max_staging));
    return out;
  }
  if (!predict) {
    const std::string_view rule = choose_auto(m);
    out.push_back(make(m, rule, options, predict, max_staging));
    if (rule != "native") out.push_back(make(m, "native", options, predict, max_staging));
    return out;
  }
  std::vector<CandidatePlan> all;
  for (const plan::Strategy& s : plan::strategies()) {
    if (s.id == "native") continue;
    const bool named = std::find(allowed.begin(), allowed.end(), s.id) != allowed.end();
    if (!allowed.empty() && !named) continue;
    // drs is scheduled at run time: no plan for the cost model to predict, so only on request.
    if (s.id == "drs" && !named) continue;
    all.push_back(make(m, s.id, options, predict, max_staging));
  }
  std::stable_sort(all.begin(), all.end(), [](const CandidatePlan& a, const CandidatePlan& b) {
    if (a.rejected.empty() != b.rejected.empty()) return a.rejected.empty();
    return a.predicted_s < b.predicted_s;
  });
  for (std::size_t i = 0; i < all.size() && out.size() < keep; ++i)
    if (all[i].rejected.empty()) out.push_back(std::move(all[i]));
  CandidatePlan native = make(m, "native", options, predict, max_staging);
  // Native goes where its prediction puts it, so the best predicted candidate runs first.
  const auto pos = std::find_if(out.begin(), out.end(), [&](const CandidatePlan& c) {
    return c.predicted_s > native.predicted_s;
  });
  out.insert(pos, std::move(native));
  for (auto& c : all)
    if (!c.rejected.empty()) out.push_back(std::move(c));
  return out;
}

}  // namespace commsched::learn
