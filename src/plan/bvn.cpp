// bvn — Birkhoff–von Neumann schedule (beyond the papers; the padding is 003 §3.3.3's): round
// every message up to whole units of u = max(L/(4Δ), α/β) bytes, pad the unit matrix to equal
// line sums D <= L/u + Δ, and decompose it into weighted permutations; each permutation is one
// phase moving weight·u bytes per message. Permutation; at most D <= 5Δ phases (plus one of
// self messages), bandwidth term Σ phase maxima <= D·u <= L + Δ·u (within 25 % of the
// max-line-sum bound L, or Δ start-ups' worth of bytes when α/β sets u). With pair_time the
// expected-time matrix is decomposed instead (u = L/(4Δ) in time units).
#include <algorithm>
#include <utility>
#include <vector>

#include "plan/detail.hpp"
#include "plan/matching.hpp"

namespace commsched::plan::detail {

core::Plan plan_bvn(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("bvn", m, true);
  const std::vector<WeightedMessage> msgs = weighted_messages(m, opts);
  std::vector<WeightedMessage> net = msgs;
  take_self_messages(plan, net);  // memory copies: one phase of their own, first
  if (net.empty()) return plan;
  const bool use_time = static_cast<bool>(opts.pair_time);
  const std::vector<std::uint64_t> weight = integer_weights(m.size(), net, use_time);
  const std::uint64_t line = max_line(m.size(), net, weight);
  std::uint64_t delta = 1;
  {
    std::vector<std::uint64_t> out(static_cast<std::size_t>(m.size()), 0), in(out.size(), 0);
    for (const WeightedMessage& w : net) {
      delta = std::max(delta, ++out[static_cast<std::size_t>(w.src)]);
      delta = std::max(delta, ++in[static_cast<std::size_t>(w.dst)]);
    }
  }
  std::uint64_t unit = std::max<std::uint64_t>(1, (line + 8 * delta - 1) / (8 * delta));
  if (!use_time && opts.beta_s_per_byte > 0.0 && opts.alpha_s > 0.0)
    unit = std::max(unit, static_cast<std::uint64_t>(opts.alpha_s / opts.beta_s_per_byte));
  std::vector<std::uint64_t> units(weight.size());
  for (std::size_t k = 0; k < weight.size(); ++k) units[k] = (weight[k] + unit - 1) / unit;

  const Decomposition d = decompose(m.size(), net, std::move(units));
  const std::size_t base = plan.phases.size();
  plan.phases.resize(base + d.steps.size());
  std::vector<std::vector<std::pair<std::size_t, std::uint64_t>>> amounts(net.size());
  for (std::size_t k = 0; k < d.steps.size(); ++k)
    for (const auto& [msg, amount] : d.steps[k].cells) amounts[msg].emplace_back(base + k, amount);
  for (std::size_t i = 0; i < net.size(); ++i)
    add_proportional_pieces(plan, net[i], d.total[i], amounts[i]);
  std::erase_if(plan.phases, [](const core::Phase& p) { return p.transfers.empty(); });
  return plan;
}

}  // namespace commsched::plan::detail
