// Bipartite matchings and the Birkhoff–von Neumann decomposition behind maxmin, maxsum, unif and
// bvn (plan/matching.hpp). Rows are senders, columns receivers; a matching is a partial
// permutation, so every phase built from one keeps one send and one receive per rank.
#include "plan/matching.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include "plan/detail.hpp"

namespace commsched::plan::detail {

std::vector<WeightedMessage> weighted_messages(const core::CommMatrix& m, const Options& opts) {
  std::vector<WeightedMessage> out;
  out.reserve(m.nonzeros());
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) {
      double w = static_cast<double>(e.bytes);
      if (opts.pair_time) {
        w = opts.pair_time(i, e.peer, e.bytes);
        if (!std::isfinite(w) || w <= 0.0) w = std::numeric_limits<double>::min();
      }
      out.push_back({i, e.peer, e.bytes, w});
    }
  return out;
}

void take_self_messages(core::Plan& plan, std::vector<WeightedMessage>& msgs) {
  core::Phase phase;
  for (const WeightedMessage& w : msgs)
    if (w.src == w.dst) phase.transfers.push_back({w.src, w.dst, {core::Piece{w.src, w.dst, 0, w.bytes}}});
  if (phase.transfers.empty()) return;
  plan.phases.push_back(std::move(phase));
  std::erase_if(msgs, [](const WeightedMessage& w) { return w.src == w.dst; });
}

std::vector<std::size_t> max_matching(Rank n, const std::vector<WeightedMessage>& edges,
                                      const std::vector<std::size_t>& usable) {
  const auto nn = static_cast<std::size_t>(n);
  std::vector<std::vector<std::size_t>> adj(nn);  // row -> edge indices
  for (std::size_t e : usable) adj[static_cast<std::size_t>(edges[e].src)].push_back(e);
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> row_edge(nn, kNone), col_row(nn, kNone), dist(nn), it(nn);
  constexpr std::size_t kInf = kNone;

  auto bfs = [&] {
    std::queue<std::size_t> q;
    bool found = false;
    for (std::size_t r = 0; r < nn; ++r) {
      if (row_edge[r] == kNone && !adj[r].empty()) {
        dist[r] = 0;
        q.push(r);
      } else {
        dist[r] = kInf;
      }
    }
    while (!q.empty()) {
      const std::size_t r = q.front();
      q.pop();
      for (std::size_t e : adj[r]) {
        const auto c = static_cast<std::size_t>(edges[e].dst);
        const std::size_t next = col_row[c];
        if (next == kNone) {
          found = true;
        } else if (dist[next] == kInf) {
          dist[next] = dist[r] + 1;
          q.push(next);
        }
      }
    }
    return found;
  };
  // Iterative DFS along the BFS layers (no recursion: n may be large).
  auto augment = [&](std::size_t root) {
    std::vector<std::pair<std::size_t, std::size_t>> stack;  // (row, edge taken)
    std::size_t r = root;
    while (true) {
      bool advanced = false;
      while (it[r] < adj[r].size()) {
        const std::size_t e = adj[r][it[r]++];
        const auto c = static_cast<std::size_t>(edges[e].dst);
        const std::size_t next = col_row[c];
        if (next == kNone) {
          stack.emplace_back(r, e);
          for (const auto& [row, edge] : stack) {
            row_edge[row] = edge;
            col_row[static_cast<std::size_t>(edges[edge].dst)] = row;
          }
          return true;
        }
        if (dist[next] == dist[r] + 1) {
          stack.emplace_back(r, e);
          r = next;
          advanced = true;
          break;
        }
      }
      if (advanced) continue;
      dist[r] = kInf;  // dead end
      if (stack.empty()) return false;
      r = stack.back().first;
      stack.pop_back();
    }
  };
  while (bfs()) {
    std::fill(it.begin(), it.end(), 0);
    for (std::size_t r = 0; r < nn; ++r)
      if (row_edge[r] == kNone && dist[r] == 0) augment(r);
  }
  std::vector<std::size_t> out;
  for (std::size_t e : row_edge)
    if (e != kNone) out.push_back(e);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A cell of the padded matrix Q: real weight of a message, plus dummy padding.
struct Cell {
  Rank col;
  std::size_t msg;  // index into messages, or kNoMsg for a pure dummy cell
  std::uint64_t real;
  std::uint64_t dummy;
  std::uint64_t total() const { return real + dummy; }
};

constexpr std::size_t kNoMsg = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

}  // namespace

std::vector<std::uint64_t> integer_weights(Rank n, const std::vector<WeightedMessage>& messages,
                                           bool use_time) {
  const auto nn = static_cast<std::size_t>(n);
  std::vector<std::uint64_t> total(messages.size());
  if (use_time) {
    // Integer weights: the largest line sum of the time matrix maps to about 2^40.
    std::vector<double> rs(nn, 0.0), cs(nn, 0.0);
    for (const WeightedMessage& w : messages) {
      rs[static_cast<std::size_t>(w.src)] += w.weight;
      cs[static_cast<std::size_t>(w.dst)] += w.weight;
    }
    double line = 0.0;
    for (std::size_t i = 0; i < nn; ++i) line = std::max({line, rs[i], cs[i]});
    const double scale = line > 0.0 ? std::ldexp(1.0, 40) / line : 1.0;
    for (std::size_t k = 0; k < messages.size(); ++k)
      total[k] = std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(std::llround(messages[k].weight * scale)));
  } else {
    for (std::size_t k = 0; k < messages.size(); ++k) total[k] = messages[k].bytes;
  }
  return total;
}

std::uint64_t max_line(Rank n, const std::vector<WeightedMessage>& messages,
                       const std::vector<std::uint64_t>& total) {
  std::vector<std::uint64_t> rs(static_cast<std::size_t>(n), 0), cs(rs.size(), 0);
  for (std::size_t k = 0; k < messages.size(); ++k) {
    rs[static_cast<std::size_t>(messages[k].src)] += total[k];
    cs[static_cast<std::size_t>(messages[k].dst)] += total[k];
  }
  std::uint64_t line = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) line = std::max({line, rs[i], cs[i]});
  return line;
}

Decomposition decompose(Rank n, const std::vector<WeightedMessage>& messages,
                        std::vector<std::uint64_t> totals) {
  Decomposition d;
  const auto nn = static_cast<std::size_t>(n);
  d.total = std::move(totals);

  std::vector<std::vector<Cell>> rows(nn);
  std::vector<std::uint64_t> row_sum(nn, 0), col_sum(nn, 0);
  for (std::size_t k = 0; k < messages.size(); ++k) {
    const auto i = static_cast<std::size_t>(messages[k].src);
    rows[i].push_back({messages[k].dst, k, d.total[k], 0});
    row_sum[i] += d.total[k];
    col_sum[static_cast<std::size_t>(messages[k].dst)] += d.total[k];
  }
  std::uint64_t line = 0;
  for (std::size_t i = 0; i < nn; ++i) line = std::max({line, row_sum[i], col_sum[i]});
  d.line = line;
  if (line == 0) return d;
  // Northwest-corner padding: at most 2n - 1 dummy cells bring every line sum to L.
  for (std::size_t i = 0, j = 0; i < nn && j < nn;) {
    const std::uint64_t a = line - row_sum[i], b = line - col_sum[j];
    if (a == 0) {
      ++i;
      continue;
    }
    if (b == 0) {
      ++j;
      continue;
    }
    const std::uint64_t x = std::min(a, b);
    auto cell = std::find_if(rows[i].begin(), rows[i].end(),
                             [&](const Cell& c) { return static_cast<std::size_t>(c.col) == j; });
    if (cell == rows[i].end())
      rows[i].push_back({static_cast<Rank>(j), kNoMsg, 0, x});
    else
      cell->dummy += x;
    row_sum[i] += x;
    col_sum[j] += x;
  }

  // Perfect matching of Q's support, repaired after each step by bottleneck augmenting paths
  // (widest first, so steps stay long and few, 003 §3.3.3's max-min phase).
  std::vector<std::size_t> match_cell(nn, kNone);  // row -> index of its cell in rows[row]
  std::vector<std::size_t> col_row(nn, kNone);
  std::vector<std::uint64_t> width(nn);
  std::vector<std::size_t> parent_cell(nn);        // per row: cell taken from the previous row
  std::vector<std::size_t> parent_row(nn);
  auto augment = [&](std::size_t root) {
    std::fill(width.begin(), width.end(), 0);
    using Item = std::pair<std::uint64_t, std::size_t>;  // (width, row), widest first
    std::priority_queue<Item> heap;
    width[root] = std::numeric_limits<std::uint64_t>::max();
    parent_row[root] = kNone;
    heap.emplace(width[root], root);
    std::vector<char> settled(nn, 0);
    while (!heap.empty()) {
      const auto [w, r] = heap.top();
      heap.pop();
      if (settled[r]) continue;
      settled[r] = 1;
      for (std::size_t ci = 0; ci < rows[r].size(); ++ci) {
        const Cell& c = rows[r][ci];
        if (c.total() == 0 || ci == match_cell[r]) continue;
        const std::uint64_t nw = std::min(w, c.total());
        const auto col = static_cast<std::size_t>(c.col);
        const std::size_t next = col_row[col];
        if (next == kNone) {  // free column: flip the path
          std::size_t row = r, cell = ci;
          while (true) {
            const std::size_t old = match_cell[row];
            const auto cc = static_cast<std::size_t>(rows[row][cell].col);
            match_cell[row] = cell;
            col_row[cc] = row;
            if (parent_row[row] == kNone) break;
            (void)old;
            const std::size_t prev = parent_row[row];
            cell = parent_cell[row];
            row = prev;
          }
          return true;
        }
        if (!settled[next] && nw > width[next]) {
          width[next] = nw;
          parent_row[next] = r;
          parent_cell[next] = ci;
          heap.emplace(nw, next);
        }
      }
    }
    return false;
  };
  for (std::size_t r = 0; r < nn; ++r) augment(r);

  while (true) {
    std::uint64_t w = std::numeric_limits<std::uint64_t>::max();
    bool any = false;
    for (std::size_t r = 0; r < nn; ++r)
      if (match_cell[r] != kNone) {
        w = std::min(w, rows[r][match_cell[r]].total());
        any = true;
      }
    if (!any) break;
    DecompositionStep step;
    step.weight = w;
    std::vector<std::size_t> broken;
    for (std::size_t r = 0; r < nn; ++r) {
      if (match_cell[r] == kNone) continue;
      Cell& c = rows[r][match_cell[r]];
      const std::uint64_t take_real = std::min(c.real, w);
      c.real -= take_real;
      c.dummy -= w - take_real;
      if (take_real > 0) step.cells.emplace_back(c.msg, take_real);
      if (c.total() == 0) {
        col_row[static_cast<std::size_t>(c.col)] = kNone;
        match_cell[r] = kNone;
        broken.push_back(r);
      }
    }
    if (!step.cells.empty()) d.steps.push_back(std::move(step));
    for (std::size_t r : broken) augment(r);
  }
  // Defensive: a perfect matching always exists on Q (equal line sums), so nothing is left; if
  // something were, it goes in steps of its own rather than being lost.
  for (const auto& row : rows)
    for (const Cell& c : row)
      if (c.real > 0) d.steps.push_back({c.real, {{c.msg, c.real}}});
  return d;
}

void add_proportional_pieces(core::Plan& plan, const WeightedMessage& msg, std::uint64_t total,
                             const std::vector<std::pair<std::size_t, std::uint64_t>>& amounts) {
  std::uint64_t moved = 0;
  Bytes offset = 0;
  for (std::size_t k = 0; k < amounts.size(); ++k) {
    moved += amounts[k].second;
    Bytes end = msg.bytes;
    if (k + 1 < amounts.size() && moved < total)
      end = static_cast<Bytes>(static_cast<long double>(msg.bytes) * moved / total);
    end = std::clamp(end, offset, msg.bytes);
    if (end > offset)
      core::add_piece(plan.phases[amounts[k].first], msg.src, msg.dst,
                      core::Piece{msg.src, msg.dst, offset, end - offset});
    offset = end;
  }
}

}  // namespace commsched::plan::detail
