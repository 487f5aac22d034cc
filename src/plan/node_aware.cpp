// node_aware, node_aware_multi — node-level aggregation (003 §4.2's two levels applied to the
// nodes of Options::topology; beyond the papers): stage 1 delivers messages inside each node and
// gathers every rank's traffic for node b to a leader; stage 2 leaders exchange one combined
// message per node pair; stage 3 the receiving leader scatters inside its node. node_aware uses
// one leader per node (its lowest rank); node_aware_multi spreads the leader role: traffic from
// node a to node b passes local rank (b mod |a|) of a and local rank (a mod |b|) of b. Each
// stage is planned by color's algorithm on its sub-matrix. Without topology every rank is its
// own node and the plan is direct (color's phases).
#include <numeric>
#include <vector>

#include "plan/detail.hpp"
#include "plan/route.hpp"

namespace commsched::plan::detail {

namespace {

core::Plan node_aware(const core::CommMatrix& m, const Options& opts, bool multi) {
  std::vector<int> groups;
  if (opts.topology != nullptr) groups = compact_groups(opts.topology->node_of, m.size());
  if (groups.empty()) {  // every rank its own node
    groups.resize(static_cast<std::size_t>(m.size()));
    std::iota(groups.begin(), groups.end(), 0);
  }
  return plan_hierarchical(multi ? "node_aware_multi" : "node_aware", m, opts, groups, multi);
}

}  // namespace

core::Plan plan_node_aware(const core::CommMatrix& m, const Options& opts) {
  return node_aware(m, opts, false);
}

core::Plan plan_node_aware_multi(const core::CommMatrix& m, const Options& opts) {
  return node_aware(m, opts, true);
}

}  // namespace commsched::plan::detail
