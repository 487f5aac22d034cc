// maxmin — Max-Min phases (paper 003 §3.3.1; adapted form §4.1.2): each phase is a maximum
// partial permutation of the remaining messages whose smallest message is as large as possible
// (bottleneck matching: binary search on the threshold, Hopcroft–Karp at each probe); its
// messages go whole and leave the matrix. Permutation; planning O(phases · E·sqrt(n) · log E).
// With Options::pair_time the phases are found on the expected-time matrix, so local and distant
// messages are weighed by what they cost, not by their bytes.
#include <algorithm>
#include <vector>

#include "plan/detail.hpp"
#include "plan/matching.hpp"

namespace commsched::plan::detail {

core::Plan plan_maxmin(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("maxmin", m, true);
  const std::vector<WeightedMessage> msgs = weighted_messages(m, opts);
  // Remaining messages, heaviest first (ties: row order), so a threshold is a prefix.
  std::vector<std::size_t> left(msgs.size());
  for (std::size_t i = 0; i < left.size(); ++i) left[i] = i;
  std::stable_sort(left.begin(), left.end(),
                   [&](std::size_t a, std::size_t b) { return msgs[a].weight > msgs[b].weight; });
  while (!left.empty()) {
    const std::size_t target = max_matching(m.size(), msgs, left).size();
    // Smallest prefix of `left` (ending at a weight boundary) holding a matching of that size.
    std::size_t lo = 1, hi = left.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const std::vector<std::size_t> prefix(left.begin(), left.begin() + static_cast<long>(mid));
      if (max_matching(m.size(), msgs, prefix).size() >= target)
        hi = mid;
      else
        lo = mid + 1;
    }
    std::size_t end = lo;  // extend over equal weights so ties do not depend on the order
    while (end < left.size() && msgs[left[end]].weight == msgs[left[end - 1]].weight) ++end;
    const std::vector<std::size_t> prefix(left.begin(), left.begin() + static_cast<long>(end));
    const std::vector<std::size_t> chosen = max_matching(m.size(), msgs, prefix);
    core::Phase phase;
    for (std::size_t e : chosen)
      phase.transfers.push_back(
          {msgs[e].src, msgs[e].dst, {core::Piece{msgs[e].src, msgs[e].dst, 0, msgs[e].bytes}}});
    plan.phases.push_back(std::move(phase));
    std::vector<char> used(msgs.size(), 0);
    for (std::size_t e : chosen) used[e] = 1;
    std::erase_if(left, [&](std::size_t e) { return used[e] != 0; });
  }
  return plan;
}

}  // namespace commsched::plan::detail
