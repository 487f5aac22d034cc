// rs_nh — random scheduling with heaps and message splitting (paper 000 §5.2 Figs. 8-9, §6, §7):
// per phase a random start row; each row extracts its largest remaining messages until one has a
// free receiver (the others go back); Decide_Size then caps the phase at the λ-quantile M_thresh
// of its sizes and larger messages send only M_thresh bytes, their rest going back to the heap.
// Permutation; planning O(nnz/λ · log d) heap work plus O(m log m) per phase for Decide_Size.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

namespace {

// What is left of message i -> peer: bytes [offset, offset + remaining).
struct Item {
  Bytes remaining;
  Bytes offset;
  Rank peer;
};

// Heap order: larger remainder first, then smaller peer, so extraction is a total order and the
// plan does not depend on the standard library's heap layout.
bool heap_less(const Item& a, const Item& b) {
  return a.remaining != b.remaining ? a.remaining < b.remaining : a.peer > b.peer;
}

using Heap = boost::container::small_vector<Item, 16>;

std::size_t quantile_index(double lambda, std::size_t m) {
  const double k = std::ceil(lambda * static_cast<double>(m));
  if (!(k >= 1.0)) return 0;  // also catches NaN
  return std::min(static_cast<std::size_t>(k), m) - 1;
}

// Decide_Size (000 §6): the threshold M_thresh for one phase from its sorted (ascending) sizes.
// λ = k/m means the k smallest messages go whole and only the m - k larger ones are capped.
Bytes decide_size(const std::vector<Bytes>& sorted, LambdaRule rule, double d_star,
                  const Options& opts) {
  const std::size_t m = sorted.size();
  switch (rule) {
    case LambdaRule::one:
      return sorted.back();
    case LambdaRule::fixed:
      return sorted[quantile_index(std::clamp(opts.lambda_fixed, 0.0, 1.0), m)];
    case LambdaRule::proportional:
      // 000 §6.2 λ = 0.8·d*, clamped to (0, 1]; with the two-phase rule active d* > 2, so this
      // rule in practice never splits: it is RS_NH+(λ=1) reached by the paper's formula.
      return sorted[quantile_index(std::clamp(0.8 * d_star, 0.0, 1.0), m)];
    case LambdaRule::incremental:
      break;
  }
  // 000 §7.1 item 4: λ_k = 0.75 + k/m, k = 0..m/4; Gain_k = (Δλ/λ_k)(τ/φ) - ΔM_k; pick the k
  // maximising Σ_{i<k} Gain_i. Index of M(λ_k) is ceil(0.75 m) + k - 1, reaching m - 1 at k = m/4.
  if (!(opts.beta_s_per_byte > 0.0)) return sorted.back();  // bandwidth free: never split
  const double tau_over_phi = opts.alpha_s / opts.beta_s_per_byte;
  const double dlambda = 1.0 / static_cast<double>(m);
  const std::size_t base = (3 * m + 3) / 4;
  const std::size_t steps = m / 4;
  double sum = 0.0, best = 0.0;
  std::size_t best_k = 0;
  for (std::size_t k = 0; k < steps; ++k) {
    const double lambda_k = 0.75 + static_cast<double>(k) * dlambda;
    const double dm = static_cast<double>(sorted[base + k] - sorted[base + k - 1]);
    sum += dlambda / lambda_k * tau_over_phi - dm;
    if (sum > best) {
      best = sum;
      best_k = k + 1;
    }
  }
  return sorted[base + best_k - 1];
}

}  // namespace

core::Plan plan_rs_nh(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("rs_nh", m, true);
  const Rank n = m.size();
  if (n <= 0) return plan;

  std::vector<Heap> heaps(static_cast<std::size_t>(n));
  std::vector<Rank> active;  // rows with messages left, ascending
  for (Rank i = 0; i < n; ++i) {
    Heap& h = heaps[static_cast<std::size_t>(i)];
    for (const core::Entry& e : m.row(i)) h.push_back({e.bytes, 0, e.peer});
    std::make_heap(h.begin(), h.end(), heap_less);
    if (!h.empty()) active.push_back(i);
  }
  std::size_t entries_left = m.nonzeros();
  // Two-phase rule (000 §7): once d* <= max(2, d/16), λ = 1 for the rest of the schedule.
  const double d0 = active.empty() ? 0.0
                                   : static_cast<double>(entries_left) /
                                         static_cast<double>(active.size());
  const double switch_at = std::max(2.0, d0 / 16.0);
  bool whole_messages = opts.lambda_rule == LambdaRule::one;

  std::uint64_t rng = opts.seed;
  std::vector<std::size_t> received(static_cast<std::size_t>(n), 0);  // phase stamp, 1-based
  struct Chosen {
    Rank src;
    Item item;
  };
  std::vector<Chosen> chosen;
  std::vector<Bytes> sizes;
  Heap skipped;
  for (std::size_t stamp = 1; !active.empty(); ++stamp) {
    const double d_star =
        static_cast<double>(entries_left) / static_cast<double>(active.size());
    if (d_star <= switch_at) whole_messages = true;

    // Step 2 of Fig. 9: build one partial permutation.
    const auto x = static_cast<Rank>(next_random(rng) % static_cast<std::uint64_t>(n));
    const std::size_t start = static_cast<std::size_t>(
        std::lower_bound(active.begin(), active.end(), x) - active.begin());
    chosen.clear();
    for (std::size_t y = 0; y < active.size(); ++y) {
      const Rank i = active[(start + y) % active.size()];
      Heap& h = heaps[static_cast<std::size_t>(i)];
      skipped.clear();
      while (!h.empty()) {
        std::pop_heap(h.begin(), h.end(), heap_less);
        const Item top = h.back();
        h.pop_back();
        if (received[static_cast<std::size_t>(top.peer)] != stamp) {
          received[static_cast<std::size_t>(top.peer)] = stamp;
          chosen.push_back({i, top});
          break;
        }
        skipped.push_back(top);
      }
      for (const Item& it : skipped) {
        h.push_back(it);
        std::push_heap(h.begin(), h.end(), heap_less);
      }
    }

    // Step 3: Decide_Size.
    Bytes thresh = 0;
    if (whole_messages) {
      for (const Chosen& c : chosen) thresh = std::max(thresh, c.item.remaining);
    } else {
      sizes.clear();
      for (const Chosen& c : chosen) sizes.push_back(c.item.remaining);
      std::sort(sizes.begin(), sizes.end());
      thresh = decide_size(sizes, opts.lambda_rule, d_star, opts);
    }

    // Steps 4-5: send at most M_thresh of each; remainders go back to their heaps.
    core::Phase phase;
    phase.transfers.reserve(chosen.size());
    for (const Chosen& c : chosen) {
      const Bytes len = std::min(c.item.remaining, thresh);
      phase.transfers.push_back(
          {c.src, c.item.peer, {core::Piece{c.src, c.item.peer, c.item.offset, len}}});
      if (len < c.item.remaining) {
        Heap& h = heaps[static_cast<std::size_t>(c.src)];
        h.push_back({c.item.remaining - len, c.item.offset + len, c.item.peer});
        std::push_heap(h.begin(), h.end(), heap_less);
      } else {
        --entries_left;
      }
    }
    std::erase_if(active, [&](Rank r) { return heaps[static_cast<std::size_t>(r)].empty(); });
    // Never empty: the first row visited always finds a free receiver. Each phase finishes at
    // least its smallest message, so the schedule ends within nnz phases.
    plan.phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace commsched::plan::detail
