// two_stage — the transportation primitive's two-stage algorithm (001 §7–8): every message
// i -> j of u elements is split into p = n parts of ⌊u/p⌋ elements, its u mod p leftover
// elements dealt one each to consecutive intermediates by one global round-robin pointer (the
// prefix-scan refinement of 001 §7.1, Fig. 9: row-major, so each intermediate receives
// ≤ ⌈r/p⌉ from any source; when the outgoing bound r exceeds the incoming bound c, column-major,
// the alternate scheme of 001 §8, so each intermediate sends ≤ ⌈c/p⌉ to any destination).
// Stage 1: part k goes i -> k; stage 2: k -> j; each stage a linear permutation, step s pairing
// i with (i + s) mod p (barriers when Options::barrier_between_phases). ≤ 2(p − 1) steps:
// O(p(τ + μ(t/p + p))) (001 §7.3). Parts that would stay in place are not sent; self messages
// are local copies in step 0. An element is g bytes, g the smallest power of two that keeps
// each stage within kMaxPiecesPerStage pieces (Σ min(⌈a/g⌉, p)); planning O(p²·δ + pieces).
#include <algorithm>
#include <utility>
#include <vector>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

namespace {

// Bounds the plan (every rank holds it whole): 2^20 pieces of 24 bytes per stage.
constexpr std::size_t kMaxPiecesPerStage = std::size_t{1} << 20;

// Message of u elements split over p intermediates, its u mod p leftover elements on
// intermediates start, start + 1, ... (mod p). Positions below count elements.
struct Split {
  Bytes q;      // ⌊u/p⌋
  Bytes extra;  // u mod p
  Bytes start;  // first intermediate of the leftover run

  bool has_extra(Bytes k, Bytes p) const { return (k + p - start) % p < extra; }
  Bytes length(Bytes k, Bytes p) const { return q + (has_extra(k, p) ? 1 : 0); }
  // Bytes of the parts 0..k−1, which precede part k in the message.
  Bytes offset(Bytes k, Bytes p) const {
    Bytes before = 0;  // leftover bytes on intermediates < k
    if (start + extra <= p) {
      before = std::min(k, start + extra) > start ? std::min(k, start + extra) - start : 0;
    } else {
      before = (k > start ? k - start : 0) + std::min(k, start + extra - p);
    }
    return k * q + before;
  }
};

}  // namespace

core::Plan plan_two_stage(const core::CommMatrix& m, const Options& opts) {
  core::Plan plan = empty_plan("two_stage", m, true);
  plan.barrier_between_phases = opts.barrier_between_phases;
  const Rank n = m.size();
  if (n <= 0) return plan;
  const auto p = static_cast<Bytes>(n);

  // Position of each row entry in one flat array, and the traffic bounds without self messages.
  std::vector<std::size_t> row_first(static_cast<std::size_t>(n) + 1, 0);
  std::vector<Bytes> out_bytes(static_cast<std::size_t>(n), 0), in_bytes(out_bytes);
  for (Rank i = 0; i < n; ++i) {
    row_first[static_cast<std::size_t>(i) + 1] =
        row_first[static_cast<std::size_t>(i)] + m.row(i).size();
    for (const core::Entry& e : m.row(i))
      if (e.peer != i) {
        out_bytes[static_cast<std::size_t>(i)] += e.bytes;
        in_bytes[static_cast<std::size_t>(e.peer)] += e.bytes;
      }
  }
  const Bytes r = *std::max_element(out_bytes.begin(), out_bytes.end());
  const Bytes c = *std::max_element(in_bytes.begin(), in_bytes.end());
  auto index_of = [&](Rank i, Rank j) {
    const auto row = m.row(i);
    const auto it = std::lower_bound(row.begin(), row.end(), j,
                                     [](const core::Entry& e, Rank peer) { return e.peer < peer; });
    return row_first[static_cast<std::size_t>(i)] + static_cast<std::size_t>(it - row.begin());
  };

  // Element size g: the smallest power of two keeping a stage within kMaxPiecesPerStage.
  Bytes largest = 0;
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i))
      if (e.peer != i) largest = std::max(largest, e.bytes);
  Bytes g = 1;
  auto pieces_with = [&](Bytes elem) {
    std::size_t total = 0;
    for (Rank i = 0; i < n; ++i)
      for (const core::Entry& e : m.row(i))
        if (e.peer != i)
          total += static_cast<std::size_t>(std::min((e.bytes + elem - 1) / elem, p));
    return total;
  };
  while (g < largest && pieces_with(g) > kMaxPiecesPerStage) g *= 2;
  auto elements = [g](Bytes a) { return (a + g - 1) / g; };

  std::vector<Split> split(row_first.back());
  Bytes pointer = 0;
  auto deal = [&](std::size_t idx, Bytes a) {
    const Bytes u = elements(a);
    split[idx] = {u / p, u % p, pointer};
    pointer = (pointer + u % p) % p;
  };
  // Byte range of part k of a message of a bytes.
  auto part = [&](const Split& sp, Rank k, Bytes a) {
    const auto kk = static_cast<Bytes>(k);
    const Bytes first = sp.offset(kk, p), count = sp.length(kk, p);
    const Bytes lo = std::min(a, first * g), hi = std::min(a, (first + count) * g);
    return std::pair<Bytes, Bytes>{lo, hi - lo};
  };
  if (r <= c) {
    for (Rank i = 0; i < n; ++i)
      for (const core::Entry& e : m.row(i))
        if (e.peer != i) deal(index_of(i, e.peer), e.bytes);
  } else {
    for (Rank j = 0; j < n; ++j)
      for (const core::Entry& e : m.column(j))
        if (e.peer != j) deal(index_of(e.peer, j), e.bytes);
  }

  // Split of each column entry, for stage 2.
  std::vector<std::size_t> col_first(static_cast<std::size_t>(n) + 1, 0), col_split;
  col_split.reserve(split.size());
  for (Rank j = 0; j < n; ++j) {
    for (const core::Entry& e : m.column(j)) col_split.push_back(index_of(e.peer, j));
    col_first[static_cast<std::size_t>(j) + 1] = col_split.size();
  }

  // The intermediates holding a part of a message: all p, or the leftover run when ⌊u/p⌋ = 0.
  auto for_each_part = [&](const Split& sp, auto&& f) {
    if (sp.q > 0) {
      for (Rank k = 0; k < n; ++k) f(k);
    } else {
      for (Bytes x = 0; x < sp.extra; ++x) f(static_cast<Rank>((sp.start + x) % p));
    }
  };
  // steps[s] of stage 1 (s < p) and of stage 2 (p + s): the pair of step s is i -> (i + s) mod p.
  std::vector<core::Phase> steps(2 * static_cast<std::size_t>(n));
  std::vector<std::vector<core::Piece>> by_peer(static_cast<std::size_t>(n));
  auto flush = [&](Rank self, std::size_t stage_first, bool outgoing) {
    for (Rank k = 0; k < n; ++k) {
      std::vector<core::Piece>& pieces = by_peer[static_cast<std::size_t>(k)];
      if (pieces.empty()) continue;
      const Rank from = outgoing ? self : k, to = outgoing ? k : self;
      const auto s = static_cast<std::size_t>((to - from + n) % n);
      steps[stage_first + s].transfers.push_back({from, to, std::move(pieces)});
      pieces.clear();
    }
  };
  // Stage 1: i -> k carries part k of each message of i (step 0 only the self messages: part i
  // stays at i until stage 2).
  for (Rank i = 0; i < n; ++i) {
    const auto row = m.row(i);
    for (std::size_t x = 0; x < row.size(); ++x) {
      const core::Entry& e = row[x];
      if (e.peer == i) {
        by_peer[static_cast<std::size_t>(i)].push_back({i, i, 0, e.bytes});
        continue;
      }
      const Split& sp = split[row_first[static_cast<std::size_t>(i)] + x];
      for_each_part(sp, [&](Rank k) {
        if (k == i) return;
        const auto [offset, len] = part(sp, k, e.bytes);
        if (len > 0) by_peer[static_cast<std::size_t>(k)].push_back({i, e.peer, offset, len});
      });
    }
    flush(i, 0, true);
  }
  // Stage 2: k -> j carries part k of every message for j (part j of each was delivered in
  // stage 1). Transfers of a step come in destination order.
  for (Rank j = 0; j < n; ++j) {
    const auto col = m.column(j);
    for (std::size_t x = 0; x < col.size(); ++x) {
      const core::Entry& e = col[x];
      if (e.peer == j) continue;
      const Split& sp = split[col_split[col_first[static_cast<std::size_t>(j)] + x]];
      for_each_part(sp, [&](Rank k) {
        if (k == j) return;
        const auto [offset, len] = part(sp, k, e.bytes);
        if (len > 0) by_peer[static_cast<std::size_t>(k)].push_back({e.peer, j, offset, len});
      });
    }
    flush(j, static_cast<std::size_t>(n), false);
  }
  append_steps(plan, steps, 0);
  return plan;
}

}  // namespace commsched::plan::detail
