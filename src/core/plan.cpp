#include "core/plan.hpp"

#include <algorithm>
#include <map>
#include <sstream>
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

namespace {

using Interval = std::pair<Bytes, Bytes>;  // [first, second)

// True when [lo, hi) is covered by the union of `have`.
bool covered(std::vector<Interval> have, Bytes lo, Bytes hi) {
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
  // What each rank holds of each message (other than the source's own copy), and what
  // arrived at each message's destination.
  std::map<std::tuple<Rank, Rank, Rank>, std::vector<Interval>> held;  // (holder, src, dst)
  std::map<std::pair<Rank, Rank>, std::vector<Interval>> delivered;
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    const Phase& ph = plan.phases[k];
    std::vector<int> sends(static_cast<std::size_t>(n)), recvs(static_cast<std::size_t>(n));
    std::vector<std::pair<Rank, Rank>> pairs;
    std::vector<std::tuple<Rank, Rank, Rank, Interval>> arrivals;
    for (const Transfer& t : ph.transfers) {
      if (t.from < 0 || t.from >= n || t.to < 0 || t.to >= n)
        return fail(where(k, t) + ": rank out of range");
      if (t.pieces.empty()) return fail(where(k, t) + ": no pieces");
      pairs.emplace_back(t.from, t.to);
      ++sends[static_cast<std::size_t>(t.from)];
      ++recvs[static_cast<std::size_t>(t.to)];
      for (const Piece& p : t.pieces) {
        if (p.orig_src < 0 || p.orig_src >= n || p.orig_dst < 0 || p.orig_dst >= n)
          return fail(where(k, t) + ": piece names a rank out of range");
        const Bytes size = m.at(p.orig_src, p.orig_dst);
        if (p.length == 0) return fail(where(k, t) + ": empty piece");
        if (p.offset + p.length > size || p.offset + p.length < p.offset)
          return fail(where(k, t) + ": piece beyond message " + std::to_string(p.orig_src) +
                      "->" + std::to_string(p.orig_dst));
        if (t.from != p.orig_src) {
          auto it = held.find({t.from, p.orig_src, p.orig_dst});
          if (it == held.end() || !covered(it->second, p.offset, p.offset + p.length))
            return fail(where(k, t) + ": forwards bytes of " + std::to_string(p.orig_src) +
                        "->" + std::to_string(p.orig_dst) + " it has not received");
        }
        arrivals.emplace_back(t.to, p.orig_src, p.orig_dst,
                              Interval{p.offset, p.offset + p.length});
      }
    }
    std::sort(pairs.begin(), pairs.end());
    if (std::adjacent_find(pairs.begin(), pairs.end()) != pairs.end())
      return fail("phase " + std::to_string(k) + ": two transfers between the same pair");
    if (plan.permutation)
      for (Rank r = 0; r < n; ++r)
        if (sends[static_cast<std::size_t>(r)] > 1 || recvs[static_cast<std::size_t>(r)] > 1)
          return fail("phase " + std::to_string(k) + ": rank " + std::to_string(r) +
                      " sends or receives more than one message in a permutation phase");
    // Arrivals become usable only in later phases.
    for (auto& [to, src, dst, iv] : arrivals) {
      if (to == dst) delivered[{src, dst}].push_back(iv);
      else held[{to, src, dst}].push_back(iv);
    }
  }
  for (Rank i = 0; i < n; ++i)
    for (const Entry& e : m.row(i)) {
      auto it = delivered.find({i, e.peer});
      if (it == delivered.end())
        return fail("message " + std::to_string(i) + "->" + std::to_string(e.peer) +
                    " never delivered");
      auto ivs = it->second;
      std::sort(ivs.begin(), ivs.end());
      Bytes reach = 0;
      for (const Interval& iv : ivs) {
        if (iv.first != reach)
          return fail("message " + std::to_string(i) + "->" + std::to_string(e.peer) +
                      (iv.first < reach ? ": bytes delivered twice" : ": bytes missing"));
        reach = iv.second;
      }
      if (reach != e.bytes)
        return fail("message " + std::to_string(i) + "->" + std::to_string(e.peer) +
                    ": bytes missing at the end");
      delivered.erase(it);
    }
  if (!delivered.empty()) {
    const auto& [key, ivs] = *delivered.begin();
    return fail("bytes delivered for " + std::to_string(key.first) + "->" +
                std::to_string(key.second) + ", which is not in the matrix");
  }
  return {};
}

}  // namespace commsched::core
