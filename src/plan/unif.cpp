// unif — Goldman's uniform algorithm (paper 003 §3.3.3; adapted form §4.1.3): pad the matrix with
// dummy messages until every row and column sums to L (the largest line sum), then repeatedly take
// a max-min perfect matching and send the same amount, its smallest cell, over every real cell of
// it. Permutation; Σ phase lengths = L exactly (the bandwidth bound), but up to nnz + 2n phases,
// each a start-up. With Options::pair_time the expected-time matrix is decomposed instead (the
// adapted form), each piece moving the share of its message that its time share says.
#include <utility>
#include <vector>

#include "plan/detail.hpp"
#include "plan/matching.hpp"

namespace commsched::plan::detail {

core::Plan plan_unif(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("unif", m, true);
  std::vector<WeightedMessage> msgs = weighted_messages(m, opts);
  take_self_messages(plan, msgs);  // memory copies: one phase of their own, first
  if (msgs.empty()) return plan;
  const Decomposition d = decompose(
      m.size(), msgs, integer_weights(m.size(), msgs, static_cast<bool>(opts.pair_time)));
  const std::size_t base = plan.phases.size();
  plan.phases.resize(base + d.steps.size());
  std::vector<std::vector<std::pair<std::size_t, std::uint64_t>>> amounts(msgs.size());
  for (std::size_t k = 0; k < d.steps.size(); ++k)
    for (const auto& [msg, amount] : d.steps[k].cells) amounts[msg].emplace_back(base + k, amount);
  for (std::size_t i = 0; i < msgs.size(); ++i)
    add_proportional_pieces(plan, msgs[i], d.total[i], amounts[i]);
  std::erase_if(plan.phases, [](const core::Phase& p) { return p.transfers.empty(); });
  return plan;
}

}  // namespace commsched::plan::detail
