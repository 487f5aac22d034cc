// The strategy table (plan/registry.hpp): `native` first, then the planners in README order.
// Dispatch stays here; each algorithm lives in its own file named after its id.
#include "plan/registry.hpp"

#include <array>
#include <string>

#include "plan/detail.hpp"

namespace commsched::plan {

namespace {

constexpr std::array kStrategies{
    Strategy{"native", "the MPI library's own MPI_Alltoallv", "MPI standard", false, nullptr},
    Strategy{"ac", "one phase: every rank posts all receives, then all sends", "000 §4", false,
             &detail::plan_ac},
    Strategy{"lex", "n steps; in step i every rank with data for i sends it", "002 §3.1, §4.1",
             false, &detail::plan_lex},
    Strategy{"lp_xor", "linear permutation: step k pairs rank i with i XOR k", "000 §5.1", true,
             &detail::plan_lp_xor},
    Strategy{"lp_shift", "linear permutation: step k, rank i sends to (i + k) mod n",
             "000 §5.1; 001 §5", true, &detail::plan_lp_shift},
    Strategy{"pex", "pairwise exchange i <-> i XOR j for j = 1..P-1, self message last",
             "002 §3.2, §4.2", true, &detail::plan_pex},
    Strategy{"bex", "balanced exchange: XOR pairs of virtual ranks (rank + 1) mod n",
             "002 §3.4, §4.3", true, &detail::plan_bex},
    Strategy{"greedy", "each step every rank pairs with its next free peer, in rank order",
             "002 §4.4", true, &detail::plan_greedy},
    Strategy{"rs_n", "random scheduling: random start row, first free receiver per row",
             "000 §7.1 (RS_N)", true, &detail::plan_rs_n},
    Strategy{"rs_n_sort", "rs_n with each row sorted once by size, largest first",
             "000 §7.1 (RS_N+sort)", true, &detail::plan_rs_n_sort},
    Strategy{"rs_nh", "random scheduling with per-row heaps and λ-threshold message splitting",
             "000 §5.2, §6, §7", true, &detail::plan_rs_nh},
    Strategy{"color", "bipartite edge colouring into exactly Δ permutations, large messages first",
             "König edge colouring (beyond the papers)", true, &detail::plan_color},
};

}  // namespace

std::span<const Strategy> strategies() { return kStrategies; }

const Strategy* find_strategy(std::string_view id) {
  for (const Strategy& s : kStrategies)
    if (s.id == id) return &s;
  return nullptr;
}

std::string_view strategy_id_list() {
  static const std::string list = [] {
    std::string out;
    for (const Strategy& s : kStrategies) {
      if (!out.empty()) out += ", ";
      out += s.id;
    }
    return out;
  }();
  return list;
}

}  // namespace commsched::plan
