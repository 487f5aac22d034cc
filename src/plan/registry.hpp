#pragma once
/// The strategy registry: every planner, by the id users type in COMMSCHED_STRATEGY.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "core/topology.hpp"

namespace commsched::plan {

/// How rs_nh picks the split threshold λ in each permutation (paper 000 §6, §7.1).
enum class LambdaRule {
  fixed,         ///< λ constant (Options::lambda_fixed), 000 §6.1
  proportional,  ///< λ = 0.8·d* of the current stage, 000 §6.2
  incremental,   ///< λ_k = 0.75 + k/n maximising Σ Gain_k, 000 §6.3 and §7.1 (default)
  one,           ///< λ = 1: never split ("RS_NH+(λ=1)")
};

/// Inputs a planner may use besides the matrix. Every rank passes identical options, so every
/// rank computes the identical plan.
struct Options {
  std::uint64_t seed = 0x5eedc0ffeeULL;  ///< for the randomised planners (rs_n*, rs_nh)
  LambdaRule lambda_rule = LambdaRule::incremental;
  double lambda_fixed = 0.875;
  /// τ (per-message latency, s) and φ (s per byte) of 000 §6.3; the λ rules weigh them.
  double alpha_s = 5e-6;
  double beta_s_per_byte = 1e-9;
  /// lp_xor / lp_shift: synchronise all ranks between steps (001 §5 "with barriers").
  bool barrier_between_phases = false;
  /// Node and cluster of every rank; nullptr: flat (every rank its own node, one cluster).
  const core::Topology* topology = nullptr;
  /// Expected seconds to send `bytes` from src to dst (e.g. α + β·bytes of the link class, from
  /// cost::pair_time). Empty: planners work on bytes. maxmin, maxsum, unif and bvn then plan on
  /// the expected-time matrix, the "adapted" algorithms of 003 §4.1.
  std::function<double(Rank src, Rank dst, Bytes bytes)> pair_time;
  /// mesh2d, grid3d, hypercube (the hybrids of 004 §3.2): messages of at least this many bytes
  /// go direct in the first phase, smaller ones are combined along the virtual topology.
  /// 0: automatic, the crossover α / (β·(hops − 1)) where a message's extra forwarded bytes
  /// cost more than the startup it saves. The *_pure variants ignore it and route everything.
  Bytes direct_threshold = 0;
};

using Planner = core::Plan (*)(const core::CommMatrix&, const Options&);

struct Strategy {
  std::string_view id;           ///< what users type
  std::string_view description;  ///< one line for the README and error messages
  std::string_view reference;    ///< paper and section
  bool permutation;              ///< its plans keep one send and one receive per rank per phase
  /// nullptr for `native` (PMPI_Alltoallv itself), `drs` (scheduled at run time by the MPI
  /// side, without a plan) and `native_sync` (PMPI_Alltoallv once every rank has entered the
  /// call); every other strategy is a planner.
  Planner plan;
  /// `auto` tries it only where COMMSCHED_CANDIDATES names it: `drs` has no plan for the cost
  /// model to predict; native_sync's gain is the whole job in step, which one pattern's trial,
  /// syncing its own calls while the job's others run out of step, measures as their skew.
  bool on_request = false;
};

/// All strategies, `native` first, in the order the README lists them.
std::span<const Strategy> strategies();
/// nullptr when no strategy has that id.
const Strategy* find_strategy(std::string_view id);
/// "native, ac, lex, ..." for messages that list the valid choices.
std::string_view strategy_id_list();
/// A comma-separated list of strategy ids, any case, as the registry spells them; nullopt when
/// an item is empty or names no strategy.
std::optional<std::vector<std::string>> parse_strategy_list(std::string_view text);

}  // namespace commsched::plan
