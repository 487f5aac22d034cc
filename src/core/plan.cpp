#include "core/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace commsched::core {

Bytes Transfer::bytes() const {
  Bytes b = 0;
  for (const Piece& p : pieces) b += p.length;
  return b;
}

std::size_t Plan::transfer_count() const {
  std::size_t c = 0;
  for (const Phase& ph : phases) c += ph.transfers.size();
  return c;
}

Bytes Plan::wire_bytes() const {
  Bytes b = 0;
  for (const Phase& ph : phases)
    for (const Transfer& t : ph.transfers)
      if (t.from != t.to) b += t.bytes();
  return b;
}

Plan one_phase_plan(const CommMatrix& m, std::string strategy) {
  Plan plan;
  plan.strategy = std::move(strategy);
  plan.n = m.size();
  Phase phase;
  phase.transfers.reserve(m.nonzeros());
  for (Rank i = 0; i < m.size(); ++i)
    for (const Entry& e : m.row(i))
      phase.transfers.push_back({i, e.peer, {Piece{i, e.peer, 0, e.bytes}}});
  if (!phase.transfers.empty()) plan.phases.push_back(std::move(phase));
  return plan;
}

void add_piece(Phase& phase, Rank from, Rank to, const Piece& piece) {
  auto it = std::find_if(phase.transfers.begin(), phase.transfers.end(),
                         [&](const Transfer& t) { return t.from == from && t.to == to; });
  if (it == phase.transfers.end()) {
    phase.transfers.push_back({from, to, {piece}});
    return;
  }
  Piece& last = it->pieces.back();
  if (last.orig_src == piece.orig_src && last.orig_dst == piece.orig_dst &&
      last.offset + last.length == piece.offset) {
    last.length += piece.length;
  } else {
    it->pieces.push_back(piece);
  }
}

std::vector<Bytes> staging_bytes_per_rank(const Plan& plan) {
  std::vector<Bytes> out(plan.n > 0 ? static_cast<std::size_t>(plan.n) : 0, 0);
  for (const Phase& ph : plan.phases)
    for (const Transfer& t : ph.transfers) {
      if (t.to < 0 || t.to >= plan.n) continue;
      for (const Piece& p : t.pieces)
        if (p.orig_dst != t.to) out[static_cast<std::size_t>(t.to)] += p.length;
    }
  return out;
}

namespace {

using Interval = std::pair<Bytes, Bytes>;  // [first, second)

// True when [lo, hi) is covered by the union of `have`.
bool covered(const std::vector<Interval>& held, Bytes lo, Bytes hi) {
  if (held.size() == 1) return held[0].first <= lo && hi <= held[0].second;
  std::vector<Interval> have = held;
  std::sort(have.begin(), have.end());
  Bytes reach = lo;
  for (const Interval& iv : have) {
    if (iv.first > reach) break;
    reach = std::max(reach, iv.second);
    if (reach >= hi) return true;
  }
  return reach >= hi;
}

std::string where(std::size_t phase, const Transfer& t) {
  std::ostringstream s;
  s << "phase " << phase << ", transfer " << t.from << "->" << t.to;
  return s.str();
}

}  // namespace

Validation validate(const Plan& plan, const CommMatrix& m) {
  auto fail = [](std::string msg) { return Validation{false, std::move(msg)}; };
  const Rank n = m.size();
  if (plan.n != n) return fail("plan is for " + std::to_string(plan.n) + " ranks, matrix for " +
                               std::to_string(n));
  // Messages are numbered in row order (rows are sorted by destination), so one flat array and
  // one hash map keyed by (holder, message) do what maps keyed by rank triples did: indirect
  // plans hold millions of pieces, and this runs for every candidate plan at run time.
  std::vector<std::size_t> row_first(static_cast<std::size_t>(n) + 1, 0);
  for (Rank i = 0; i < n; ++i)
    row_first[static_cast<std::size_t>(i) + 1] =
        row_first[static_cast<std::size_t>(i)] + m.row(i).size();
  const std::size_t messages = row_first.back();
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  auto message_of = [&](Rank src, Rank dst) {
    const auto row = m.row(src);
    const auto it = std::lower_bound(row.begin(), row.end(), dst,
                                     [](const Entry& e, Rank peer) { return e.peer < peer; });
    if (it == row.end() || it->peer != dst) return kNone;
    return row_first[static_cast<std::size_t>(src)] + static_cast<std::size_t>(it - row.begin());
  };
  auto size_of = [&](std::size_t id, Rank src) {
    return m.row(src)[id - row_first[static_cast<std::size_t>(src)]].bytes;
  };
  // What each rank holds of each message (other than the source's own copy), and what arrived
  // at each message's destination.
  // Key holder·messages + message. Most holders get one run of a message: it lives in `held`,
  // further runs in `held_more`, so the common case allocates nothing per key.
  std::unordered_map<std::uint64_t, Interval> held;
  std::unordered_map<std::uint64_t, std::vector<Interval>> held_more;
  std::size_t total_pieces = 0;
  for (const Phase& ph : plan.phases)
    for (const Transfer& t : ph.transfers) total_pieces += t.pieces.size();
  held.reserve(total_pieces);
  std::vector<Interval> runs;
  auto held_key = [&](Rank holder, std::size_t id) {
    return static_cast<std::uint64_t>(holder) * messages + id;
  };
  struct Arrival {
    std::size_t message;
    Rank to;
    bool delivers;
    Interval iv;
  };
  std::vector<Arrival> arrivals, delivered;
  std::vector<int> sends(static_cast<std::size_t>(n)), recvs(static_cast<std::size_t>(n));
  std::vector<std::pair<Rank, Rank>> pairs;
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    const Phase& ph = plan.phases[k];
    pairs.clear();
    arrivals.clear();
    for (const Transfer& t : ph.transfers) {
      if (t.from < 0 || t.from >= n || t.to < 0 || t.to >= n)
        return fail(where(k, t) + ": rank out of range");
      if (t.pieces.empty()) return fail(where(k, t) + ": no pieces");
      pairs.emplace_back(t.from, t.to);
      for (const Piece& p : t.pieces) {
        if (p.orig_src < 0 || p.orig_src >= n || p.orig_dst < 0 || p.orig_dst >= n)
          return fail(where(k, t) + ": piece names a rank out of range");
        const std::size_t id = message_of(p.orig_src, p.orig_dst);
        const Bytes size = id == kNone ? 0 : size_of(id, p.orig_src);
        if (p.length == 0) return fail(where(k, t) + ": empty piece");
        if (p.offset + p.length > size || p.offset + p.length < p.offset)
          return fail(where(k, t) + ": piece beyond message " + std::to_string(p.orig_src) +
                      "->" + std::to_string(p.orig_dst));
        if (t.from != p.orig_src) {
          const std::uint64_t key = held_key(t.from, id);
          const auto it = held.find(key);
          bool ok = false;
          if (it != held.end()) {
            runs.assign(1, it->second);
            if (const auto more = held_more.find(key); more != held_more.end())
              runs.insert(runs.end(), more->second.begin(), more->second.end());
            ok = covered(runs, p.offset, p.offset + p.length);
          }
          if (!ok)
            return fail(where(k, t) + ": forwards bytes of " + std::to_string(p.orig_src) +
                        "->" + std::to_string(p.orig_dst) + " it has not received");
        }
        arrivals.push_back(
            {id, t.to, t.to == p.orig_dst, Interval{p.offset, p.offset + p.length}});
      }
    }
    std::sort(pairs.begin(), pairs.end());
    if (std::adjacent_find(pairs.begin(), pairs.end()) != pairs.end())
      return fail("phase " + std::to_string(k) + ": two transfers between the same pair");
    if (plan.permutation) {
      for (const auto& [from, to] : pairs) {
        ++sends[static_cast<std::size_t>(from)];
        ++recvs[static_cast<std::size_t>(to)];
      }
      for (Rank r = 0; r < n; ++r)
        if (sends[static_cast<std::size_t>(r)] > 1 || recvs[static_cast<std::size_t>(r)] > 1)
          return fail("phase " + std::to_string(k) + ": rank " + std::to_string(r) +
                      " sends or receives more than one message in a permutation phase");
      for (const auto& [from, to] : pairs) {
        sends[static_cast<std::size_t>(from)] = 0;
        recvs[static_cast<std::size_t>(to)] = 0;
      }
    }
    // Arrivals become usable only in later phases.
    for (const Arrival& a : arrivals) {
      if (a.delivers) delivered.push_back(a);
      else if (const auto [it, fresh] = held.try_emplace(held_key(a.to, a.message), a.iv); !fresh)
        held_more[it->first].push_back(a.iv);
    }
  }
  // Bucket the deliveries by message (counting sort), then order each message's few runs.
  std::vector<std::size_t> first(messages + 1, 0);
  for (const Arrival& a : delivered) ++first[a.message + 1];
  for (std::size_t x = 0; x < messages; ++x) first[x + 1] += first[x];
  std::vector<Arrival> by_message(delivered.size());
  {
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (const Arrival& a : delivered) by_message[fill[a.message]++] = a;
  }
  delivered = std::move(by_message);
  for (std::size_t x = 0; x < messages; ++x)
    std::sort(delivered.begin() + static_cast<std::ptrdiff_t>(first[x]),
              delivered.begin() + static_cast<std::ptrdiff_t>(first[x + 1]),
              [](const Arrival& a, const Arrival& b) { return a.iv < b.iv; });
  std::size_t next = 0;
  for (Rank i = 0; i < n; ++i)
    for (std::size_t x = 0; x < m.row(i).size(); ++x) {
      const Entry& e = m.row(i)[x];
      const std::size_t id = row_first[static_cast<std::size_t>(i)] + x;
      auto name = [&] { return "message " + std::to_string(i) + "->" + std::to_string(e.peer); };
      if (next == delivered.size() || delivered[next].message != id)
        return fail(name() + " never delivered");
      Bytes reach = 0;
      for (; next < delivered.size() && delivered[next].message == id; ++next) {
        const Interval& iv = delivered[next].iv;
        if (iv.first != reach)
          return fail(name() + (iv.first < reach ? ": bytes delivered twice" : ": bytes missing"));
        reach = iv.second;
      }
      if (reach != e.bytes) return fail(name() + ": bytes missing at the end");
    }
  return {};
}

}  // namespace commsched::core
