// The strategy table (plan/registry.hpp): `native` first, then the planners in README order.
// Dispatch stays here; each algorithm lives in its own file named after its id.
#include "plan/registry.hpp"

#include <algorithm>
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
    Strategy{"maxmin", "phases maximising their smallest message (on expected times with a machine)",
             "003 §3.3.1, §4.1.2", true, &detail::plan_maxmin},
    Strategy{"maxsum", "phases maximising their total size (on expected times with a machine)",
             "003 §3.3.2, §4.1.2", true, &detail::plan_maxsum},
    Strategy{"unif", "padded to equal line sums, phases of equal-size pieces (Goldman's Unif)",
             "003 §3.3.3, §4.1.3", true, &detail::plan_unif},
    Strategy{"bvn", "Birkhoff–von Neumann decomposition merged to O(Δ) permutations",
             "beyond the papers (003 §3.3.3's padding)", true, &detail::plan_bvn},
    Strategy{"two_stage",
             "two-stage transportation: every message split over all ranks, two linear "
             "permutations", "001 §7–8", true, &detail::plan_two_stage},
    Strategy{"mesh2d", "2-D mesh: combine along rows, then columns; large messages direct",
             "004 §2.2, §3.2", false, &detail::plan_mesh2d},
    Strategy{"mesh2d_pure", "2-D mesh: every message combined along rows, then columns",
             "004 §2.2", false, &detail::plan_mesh2d_pure},
    Strategy{"grid3d", "3-D grid: combine along X, Y, then Z; large messages direct",
             "004 §2.3, §3.2", false, &detail::plan_grid3d},
    Strategy{"grid3d_pure", "3-D grid: every message combined along X, Y, then Z", "004 §2.3",
             false, &detail::plan_grid3d_pure},
    Strategy{"hypercube",
             "hypercube dimensional exchange (REX, HL); large messages direct",
             "004 §2.4, §3.2; 002 §3.3 (REX); 003 §3.2 (HL)", false, &detail::plan_hypercube},
    Strategy{"hypercube_pure", "hypercube dimensional exchange (REX, HL), every message routed",
             "004 §2.4; 002 §3.3 (REX); 003 §3.2 (HL)", false, &detail::plan_hypercube_pure},
    Strategy{"two_level",
             "inside clusters, one gateway pair per cluster pair, inside again; colour phases",
             "003 §4.2", true, &detail::plan_two_level},
    Strategy{"node_aware", "gather to one leader per node, leaders exchange, scatter",
             "003 §4.2 at node level (beyond the papers)", true, &detail::plan_node_aware},
    Strategy{"node_aware_multi",
             "node_aware with the leader role spread over each node's ranks",
             "003 §4.2 at node level (beyond the papers)", true, &detail::plan_node_aware_multi},
    // No plan: the MPI side schedules at run time with busy flags in an RMA window.
    Strategy{"drs",
             "distributed random scheduling: test-and-set the receiver's busy flag, then send",
             "001 §6", false, nullptr, true},
    // No plan either: MPI's own call, after the agreement every scheduled call makes.
    Strategy{"native_sync",
             "the MPI library's own MPI_Alltoallv, the ranks in step: after a collective "
             "agreement every call",
             "beyond the papers (a barrier before each exchange)", false, nullptr, true},
};

}  // namespace

std::span<const Strategy> strategies() { return kStrategies; }

const Strategy* find_strategy(std::string_view id) {
  for (const Strategy& s : kStrategies)
    if (s.id == id) return &s;
  return nullptr;
}

std::optional<std::vector<std::string>> parse_strategy_list(std::string_view text) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const auto it = std::find_if(kStrategies.begin(), kStrategies.end(), [&](const Strategy& s) {
      return s.id.size() == item.size() &&
             std::equal(item.begin(), item.end(), s.id.begin(),
                        [&](char a, char b) { return lower(a) == lower(b); });
    });
    if (it == kStrategies.end()) return std::nullopt;
    ids.emplace_back(it->id);
    start = comma + 1;
  }
  return ids;
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
