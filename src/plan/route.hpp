#pragma once
/// Internal to src/plan: what the indirect planners share (route.cpp). A route is the list of
/// hops a piece takes; hops of one stage bound for the same next rank are combined into one
/// transfer, and a stage runs as one phase or as colour-planned partial permutations.
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "plan/registry.hpp"

namespace commsched::plan::detail {

/// During stage `stage`, `from` sends `piece` to `to` (from == to: a local copy).
struct Hop {
  std::uint32_t stage;
  Rank from;
  Rank to;
  core::Piece piece;
};

/// One phase per stage (empty ones included): one transfer per (from, to), transfers sorted by
/// (from, to), pieces by (orig_src, orig_dst, offset), contiguous pieces merged. Sorts `hops`.
std::vector<core::Phase> combine_hops(std::vector<Hop>& hops, std::size_t stages);

/// Splits `stage` (transfers sorted by (from, to), as combine_hops makes them) into color's
/// partial permutations of its (from, to) pairs and appends them to `plan`, largest first.
void append_coloured(core::Plan& plan, core::Phase& stage, const Options& opts);

/// Size from which the hybrids send a message direct: Options::direct_threshold, or when that
/// is 0 the crossover α / (β·(hops − 1)) (hops ≥ 2, the routing phases of the topology).
Bytes hybrid_threshold(const Options& opts, unsigned hops);

/// How a routed planner (mesh2d, grid3d, hypercube) lays out its stages: `stages` stages;
/// self messages (and, for the hybrid, messages ≥ hybrid_threshold(opts, threshold_hops)) go
/// direct in stage `direct_stage`.
struct Routing {
  std::size_t stages;
  unsigned threshold_hops;
  std::uint32_t direct_stage = 0;
};

/// Appends the hops that carry `piece` (the whole message i -> d, i != d) to its destination.
using RouteFn =
    std::function<void(Rank i, Rank d, const core::Piece& piece, std::vector<Hop>& hops)>;

/// The frame the routed planners share (004 §3): an empty plan `id` for n ≤ 0; else every
/// message direct in routing.direct_stage when it is a self message or, unless `pure`, at least
/// the hybrid threshold, every other one routed by `route`; the stages combined (combine_hops)
/// and appended in order, empty ones skipped.
core::Plan plan_routed(std::string_view id, const core::CommMatrix& m, const Options& opts,
                       bool pure, const Routing& routing, const RouteFn& route);

/// Dense group index (0..groups−1, in order of the smallest member) of every rank from a
/// topology vector (node_of, cluster_of); empty when `of` does not describe `n` ranks.
std::vector<int> compact_groups(const std::vector<int>& of, Rank n);

/// The three-stage aggregation of two_level and node_aware (003 §4.2): stage 1 delivers
/// messages inside a group and gathers those for group b at gateway(a, b); stage 2 moves each
/// group pair's traffic gateway(a, b) -> gateway(b, a); stage 3 distributes inside the
/// destination group. gateway(a, b) is the (b mod |a|)-th member of a when `spread`, else a's
/// first member. Each stage is planned by color's algorithm on its (from, to) sub-matrix.
core::Plan plan_hierarchical(std::string_view id, const core::CommMatrix& m, const Options& opts,
                             const std::vector<int>& group_of, bool spread);

}  // namespace commsched::plan::detail
