// two_level — the two-level algorithm of 003 §4.2 over Options::topology's clusters: stage 1
// exchanges the messages inside each cluster and gathers those for cluster b on rank b mod |a|
// of cluster a (003: p_j^i talks to cluster L_j); stage 2 moves each cluster pair's traffic
// between its two gateways, one large message per pair; stage 3 distributes it inside the
// destination cluster. Each stage is planned by color's algorithm on that stage's sub-matrix
// (Δ_stage partial permutations). With one cluster (or no topology) it is color's direct plan.
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

core::Plan plan_two_level(const core::CommMatrix& m, const Options& opts) {
  std::vector<int> groups;
  if (opts.topology != nullptr) groups = compact_groups(opts.topology->cluster_of, m.size());
  if (groups.empty()) groups.assign(static_cast<std::size_t>(m.size()), 0);  // one cluster
  return plan_hierarchical("two_level", m, opts, groups, true);
}

}  // namespace commsched::plan::detail
