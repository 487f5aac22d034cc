// Helpers of the indirect planners (route.hpp): combining hops into transfers, colouring a
// stage into partial permutations, the hybrid threshold, the routed planners' frame and the
// hierarchical aggregation.
#include "plan/route.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

std::vector<core::Phase> combine_hops(std::vector<Hop>& hops, std::size_t stages) {
  std::sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) {
    return std::tie(a.stage, a.from, a.to, a.piece.orig_src, a.piece.orig_dst, a.piece.offset) <
           std::tie(b.stage, b.from, b.to, b.piece.orig_src, b.piece.orig_dst, b.piece.offset);
  });
  std::vector<core::Phase> out(stages);
  for (const Hop& h : hops) {
    std::vector<core::Transfer>& ts = out[h.stage].transfers;
    if (ts.empty() || ts.back().from != h.from || ts.back().to != h.to) {
      ts.push_back({h.from, h.to, {h.piece}});
      continue;
    }
    core::Piece& last = ts.back().pieces.back();
    if (last.orig_src == h.piece.orig_src && last.orig_dst == h.piece.orig_dst &&
        last.offset + last.length == h.piece.offset)
      last.length += h.piece.length;
    else
      ts.back().pieces.push_back(h.piece);
  }
  return out;
}

void append_coloured(core::Plan& plan, core::Phase& stage, const Options& opts) {
  if (stage.transfers.empty()) return;
  core::CommMatrix level(plan.n);
  std::vector<core::Entry> row;
  for (std::size_t k = 0; k < stage.transfers.size();) {
    const Rank from = stage.transfers[k].from;
    row.clear();
    for (; k < stage.transfers.size() && stage.transfers[k].from == from; ++k)
      row.push_back({stage.transfers[k].to, stage.transfers[k].bytes()});
    level.set_row(from, row);
  }
  const core::Plan coloured = plan_color(level, opts);
  auto less = [](const core::Transfer& t, std::pair<Rank, Rank> key) {
    return std::make_pair(t.from, t.to) < key;
  };
  for (const core::Phase& ph : coloured.phases) {
    core::Phase out;
    out.transfers.reserve(ph.transfers.size());
    for (const core::Transfer& t : ph.transfers) {
      auto it = std::lower_bound(stage.transfers.begin(), stage.transfers.end(),
                                 std::make_pair(t.from, t.to), less);
      out.transfers.push_back(std::move(*it));
    }
    plan.phases.push_back(std::move(out));
  }
}

Bytes hybrid_threshold(const Options& opts, unsigned hops) {
  if (opts.direct_threshold != 0) return opts.direct_threshold;
  constexpr Bytes kNever = std::numeric_limits<Bytes>::max();
  if (!(opts.beta_s_per_byte > 0.0)) return kNever;  // free bytes: combining always pays
  const double t =
      opts.alpha_s / (opts.beta_s_per_byte * static_cast<double>(std::max(hops, 2u) - 1));
  if (!(t > 0.0)) return 0;  // free startups: every message direct
  if (t >= 1e18) return kNever;
  return static_cast<Bytes>(std::ceil(t));
}

core::Plan plan_routed(std::string_view id, const core::CommMatrix& m, const Options& opts,
                       bool pure, const Routing& routing, const RouteFn& route) {
  core::Plan plan = empty_plan(id, m, false);
  const Rank n = m.size();
  if (n <= 0) return plan;
  const Bytes direct = pure ? std::numeric_limits<Bytes>::max()
                            : hybrid_threshold(opts, routing.threshold_hops);
  std::vector<Hop> hops;
  hops.reserve(m.nonzeros() * routing.stages);
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) {
      const Rank d = e.peer;
      const core::Piece piece{i, d, 0, e.bytes};
      if (d == i || (!pure && e.bytes >= direct))
        hops.push_back({routing.direct_stage, i, d, piece});
      else
        route(i, d, piece, hops);
    }
  std::vector<core::Phase> stages = combine_hops(hops, routing.stages);
  append_steps(plan, stages, 0);
  return plan;
}

std::vector<int> compact_groups(const std::vector<int>& of, Rank n) {
  if (n < 0 || of.size() != static_cast<std::size_t>(n)) return {};
  std::vector<int> sorted = of;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  // Index by first appearance in rank order, so group 0 holds rank 0.
  std::vector<int> id(sorted.size(), -1), out(of.size());
  int next = 0;
  for (std::size_t r = 0; r < of.size(); ++r) {
    const auto pos = static_cast<std::size_t>(
        std::lower_bound(sorted.begin(), sorted.end(), of[r]) - sorted.begin());
    if (id[pos] < 0) id[pos] = next++;
    out[r] = id[pos];
  }
  return out;
}

core::Plan plan_hierarchical(std::string_view id, const core::CommMatrix& m, const Options& opts,
                             const std::vector<int>& group_of, bool spread) {
  core::Plan plan = empty_plan(id, m, true);
  const Rank n = m.size();
  if (n <= 0) return plan;
  const int groups = 1 + *std::max_element(group_of.begin(), group_of.end());
  std::vector<std::vector<Rank>> members(static_cast<std::size_t>(groups));
  for (Rank r = 0; r < n; ++r) members[static_cast<std::size_t>(group_of[r])].push_back(r);
  auto gateway = [&](int a, int b) {
    const std::vector<Rank>& mem = members[static_cast<std::size_t>(a)];
    return spread ? mem[static_cast<std::size_t>(b) % mem.size()] : mem.front();
  };
  std::vector<Hop> hops;
  hops.reserve(m.nonzeros() * 2);
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) {
      const core::Piece piece{i, e.peer, 0, e.bytes};
      const int a = group_of[i], b = group_of[e.peer];
      if (a == b) {
        hops.push_back({0, i, e.peer, piece});
        continue;
      }
      const Rank out = gateway(a, b), in = gateway(b, a);
      if (i != out) hops.push_back({0, i, out, piece});
      hops.push_back({1, out, in, piece});
      if (e.peer != in) hops.push_back({2, in, e.peer, piece});
    }
  std::vector<core::Phase> stages = combine_hops(hops, 3);
  for (core::Phase& stage : stages) append_coloured(plan, stage, opts);
  return plan;
}

}  // namespace commsched::plan::detail
