#pragma once
/// Internal to src/plan: bipartite matchings and the Birkhoff–von Neumann decomposition shared by
/// maxmin, maxsum, unif and bvn (matching.cpp).
#include <cstdint>
#include <vector>

#include "core/comm_matrix.hpp"
#include "plan/registry.hpp"

namespace commsched::plan::detail {

/// One message i -> j with the weight the planner optimises: its bytes, or its expected time
/// when Options::pair_time is set (003 §4.1).
struct WeightedMessage {
  Rank src;
  Rank dst;
  Bytes bytes;
  double weight;
};

/// Every non-zero message of `m` in row order, weighted by bytes or by opts.pair_time.
std::vector<WeightedMessage> weighted_messages(const core::CommMatrix& m, const Options& opts);

/// Moves the self messages of `msgs` whole into a new phase of `plan` (unif and bvn decompose
/// only the network part of the matrix).
void take_self_messages(core::Plan& plan, std::vector<WeightedMessage>& msgs);

/// Maximum-cardinality matching of rows to columns over the edges (src -> dst) of `edges` whose
/// index is listed in `usable` (Hopcroft–Karp, O(E·sqrt(V))). Returns the chosen edge indices in
/// increasing order.
std::vector<std::size_t> max_matching(Rank n, const std::vector<WeightedMessage>& edges,
                                      const std::vector<std::size_t>& usable);

/// One step of a decomposition: a partial permutation of real cells, each moving `amount` units
/// of its message's weight (the padding's dummy cells are left out).
struct DecompositionStep {
  std::uint64_t weight = 0;  ///< the step's length in weight units
  std::vector<std::pair<std::size_t, std::uint64_t>> cells;  ///< (message index, amount)
};

struct Decomposition {
  std::vector<std::uint64_t> total;  ///< integer weight of each message (sum of its amounts)
  std::vector<DecompositionStep> steps;
  std::uint64_t line = 0;            ///< the padded matrix's line sum L = sum of step weights
};

/// Pads the integer weight matrix `totals` (one per message) to equal line sums with
/// dummy cells (003 §3.3.3's quasi-doubly-stochastic Q), then repeatedly takes a perfect
/// matching of Q's support, kept wide by bottleneck augmenting paths, and subtracts its smallest
/// cell: each step zeroes at least one cell, so there are at most nnz(Q) <= nnz + 2n steps.
Decomposition decompose(Rank n, const std::vector<WeightedMessage>& messages,
                        std::vector<std::uint64_t> totals);

/// The integer weight of each message: its bytes, or (use_time) its expected time scaled so the
/// largest line sum is about 2^40 (at least 1 per message).
std::vector<std::uint64_t> integer_weights(Rank n, const std::vector<WeightedMessage>& messages,
                                           bool use_time);
/// Largest row or column sum of `total`.
std::uint64_t max_line(Rank n, const std::vector<WeightedMessage>& messages,
                       const std::vector<std::uint64_t>& total);

/// Appends to `plan` the pieces of message `msg` for the amounts `amounts` (phase index and
/// weight units, in phase order): byte offsets proportional to the weight moved so far, the
/// last piece ending at the message's end. Zero-byte pieces are dropped.
void add_proportional_pieces(core::Plan& plan, const WeightedMessage& msg, std::uint64_t total,
                             const std::vector<std::pair<std::size_t, std::uint64_t>>& amounts);

}  // namespace commsched::plan::detail
