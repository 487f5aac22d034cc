#pragma once
/// Internal to src/plan: the planners the registry dispatches to and the helpers they share.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "plan/registry.hpp"

namespace commsched::plan::detail {

/// ac: one phase holding every message (ac.cpp).
core::Plan plan_ac(const core::CommMatrix& m, const Options& opts);
/// lex: step i gathers every message to rank i (lex.cpp).
core::Plan plan_lex(const core::CommMatrix& m, const Options& opts);
/// lp_xor: step k pairs rank i with i XOR k, self messages first (lp_xor.cpp).
core::Plan plan_lp_xor(const core::CommMatrix& m, const Options& opts);
/// lp_shift: step k, rank i sends to (i + k) mod n (lp_shift.cpp).
core::Plan plan_lp_shift(const core::CommMatrix& m, const Options& opts);
/// pex: lp_xor's pairs with the self messages last (pex.cpp).
core::Plan plan_pex(const core::CommMatrix& m, const Options& opts);
/// bex: XOR pairs of virtual ranks (rank + 1) mod n, self messages last (bex.cpp).
core::Plan plan_bex(const core::CommMatrix& m, const Options& opts);
/// greedy: every rank pairs with its next free peer, in rank order (greedy.cpp).
core::Plan plan_greedy(const core::CommMatrix& m, const Options& opts);
/// rs_n: random start row, first free receiver per row (rs_n.cpp).
core::Plan plan_rs_n(const core::CommMatrix& m, const Options& opts);
/// rs_n_sort: rs_n with each row sorted once by size, largest first (rs_n_sort.cpp).
core::Plan plan_rs_n_sort(const core::CommMatrix& m, const Options& opts);
/// rs_nh: random scheduling with per-row heaps and λ-threshold splitting (rs_nh.cpp).
core::Plan plan_rs_nh(const core::CommMatrix& m, const Options& opts);
/// color: bipartite edge colouring into exactly Δ permutations (color.cpp).
core::Plan plan_color(const core::CommMatrix& m, const Options& opts);
/// maxmin / maxsum: bottleneck / maximum-weight partial permutations (maxmin.cpp, maxsum.cpp).
core::Plan plan_maxmin(const core::CommMatrix& m, const Options& opts);
core::Plan plan_maxsum(const core::CommMatrix& m, const Options& opts);
/// unif / bvn: decomposition of the padded matrix into permutations (unif.cpp, bvn.cpp).
core::Plan plan_unif(const core::CommMatrix& m, const Options& opts);
core::Plan plan_bvn(const core::CommMatrix& m, const Options& opts);
/// two_stage: every message split over all ranks, two linear-permutation stages (two_stage.cpp).
core::Plan plan_two_stage(const core::CommMatrix& m, const Options& opts);
/// mesh2d / mesh2d_pure: row then column routing on a virtual 2-D mesh (mesh2d.cpp).
core::Plan plan_mesh2d(const core::CommMatrix& m, const Options& opts);
core::Plan plan_mesh2d_pure(const core::CommMatrix& m, const Options& opts);
/// grid3d / grid3d_pure: X, Y, Z routing on a virtual 3-D grid (grid3d.cpp).
core::Plan plan_grid3d(const core::CommMatrix& m, const Options& opts);
core::Plan plan_grid3d_pure(const core::CommMatrix& m, const Options& opts);
/// hypercube / hypercube_pure: dimensional exchange, also REX and HL (hypercube.cpp).
core::Plan plan_hypercube(const core::CommMatrix& m, const Options& opts);
core::Plan plan_hypercube_pure(const core::CommMatrix& m, const Options& opts);
/// two_level: inside clusters, between cluster gateways, inside again (two_level.cpp).
core::Plan plan_two_level(const core::CommMatrix& m, const Options& opts);
/// node_aware / node_aware_multi: gather to node leaders, exchange, scatter (node_aware.cpp).
core::Plan plan_node_aware(const core::CommMatrix& m, const Options& opts);
core::Plan plan_node_aware_multi(const core::CommMatrix& m, const Options& opts);

/// splitmix64 step, the seeded generator every randomised planner shares (rs_n.cpp).
std::uint64_t next_random(std::uint64_t& state);

/// The rs_n / rs_n_sort core; `sort_by_size` sorts each row once, largest first (rs_n.cpp).
core::Plan random_schedule(const core::CommMatrix& m, const Options& opts, bool sort_by_size,
                           std::string_view id);

/// Appends the XOR-pairing steps: message i -> j whole in step v(i) XOR v(j), v(r) = (r + shift)
/// mod n, over P = next power of two >= n steps; step 0 (self messages) first or last (lp_xor.cpp).
void add_xor_steps(core::Plan& plan, const core::CommMatrix& m, Rank shift, bool self_last);

/// A plan of strategy `id` for `m` with no phases yet.
inline core::Plan empty_plan(std::string_view id, const core::CommMatrix& m, bool permutation) {
  core::Plan plan;
  plan.strategy = std::string(id);
  plan.n = m.size();
  plan.permutation = permutation;
  return plan;
}

/// Buckets each message i -> j whole into step step_of(i, j) < count, in row order.
template <typename StepOf>
std::vector<core::Phase> bucket_messages(const core::CommMatrix& m, std::size_t count,
                                         StepOf step_of) {
  std::vector<core::Phase> steps(count);
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i))
      steps[step_of(i, e.peer)].transfers.push_back(
          {i, e.peer, {core::Piece{i, e.peer, 0, e.bytes}}});
  return steps;
}

/// Moves the non-empty steps into plan.phases in order first, first + 1, ..., wrapping round.
inline void append_steps(core::Plan& plan, std::vector<core::Phase>& steps, std::size_t first) {
  for (std::size_t k = 0; k < steps.size(); ++k) {
    core::Phase& phase = steps[(first + k) % steps.size()];
    if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  }
}

}  // namespace commsched::plan::detail
