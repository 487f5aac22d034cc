#include "exec/program.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace commsched::exec {
namespace {

// A run of bytes of message (src, dst) this rank received for forwarding, and where it sits in
// staging.
struct Held {
  Bytes offset;   // within the original message
  Bytes length;
  Bytes staging;  // offset in the staging buffer
};

class Compiler {
 public:
  Compiler(const core::CommMatrix& m, Rank rank) : m_(m), rank_(rank) {}

  // Where the bytes [off, off+len) of message src->dst are on this rank, appended to `out`.
  void source_segments(const core::Piece& p, std::vector<Segment>& out) const {
    if (p.orig_src == rank_) {
      const bool whole = p.offset == 0 && p.length == m_.at(p.orig_src, p.orig_dst);
      out.push_back({Area::send_msg, p.orig_dst, p.offset, p.length, whole});
      return;
    }
    // Forwarded: gather from the staging runs that hold it (validate guaranteed coverage).
    const auto& runs = held_.at({p.orig_src, p.orig_dst});
    Bytes pos = p.offset;
    const Bytes end = p.offset + p.length;
    while (pos < end) {
      const auto it = std::find_if(runs.begin(), runs.end(), [&](const Held& h) {
        return h.offset <= pos && pos < h.offset + h.length;
      });
      const Bytes take = std::min(end, it->offset + it->length) - pos;
      out.push_back({Area::staging, -1, it->staging + (pos - it->offset), take, false});
      pos += take;
    }
  }

  // Where arriving bytes of piece `p` go on this rank.
  void sink_segments(const core::Piece& p, std::vector<Segment>& out) {
    if (p.orig_dst == rank_) {
      const bool whole = p.offset == 0 && p.length == m_.at(p.orig_src, p.orig_dst);
      out.push_back({Area::recv_msg, p.orig_src, p.offset, p.length, whole});
      return;
    }
    held_[{p.orig_src, p.orig_dst}].push_back({p.offset, p.length, staging_});
    out.push_back({Area::staging, -1, staging_, p.length, false});
    staging_ += p.length;
  }

  Bytes staging() const { return staging_; }

 private:
  const core::CommMatrix& m_;
  Rank rank_;
  std::map<std::pair<Rank, Rank>, std::vector<Held>> held_;
  Bytes staging_ = 0;
};

}  // namespace

RankProgram compile(const core::Plan& plan, const core::CommMatrix& m, Rank rank) {
  RankProgram p;
  p.rank = rank;
  p.n = plan.n;
  p.barrier_between_steps = plan.barrier_between_phases;
  p.steps.resize(plan.phases.size());
  Compiler c(m, rank);
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    Step& step = p.steps[k];
    // Sources are resolved before this phase's arrivals are recorded: a piece can be forwarded
    // only in a later phase than the one it arrived in.
    for (const core::Transfer& t : plan.phases[k].transfers) {
      if (t.from != rank) continue;
      std::vector<Segment> from;
      for (const core::Piece& piece : t.pieces) c.source_segments(piece, from);
      if (t.to == rank) {
        step.copies.push_back({std::move(from), {}});
      } else {
        step.sends.push_back({t.to, t.bytes(), std::move(from)});
      }
    }
    std::size_t self_copy = 0;
    for (const core::Transfer& t : plan.phases[k].transfers) {
      if (t.to != rank) continue;
      std::vector<Segment> to;
      for (const core::Piece& piece : t.pieces) c.sink_segments(piece, to);
      if (t.from == rank) {
        step.copies[self_copy++].to = std::move(to);
      } else {
        step.recvs.push_back({t.from, t.bytes(), std::move(to)});
      }
    }
    std::stable_sort(step.sends.begin(), step.sends.end(), [&](const Op& a, const Op& b) {
      return core::send_order(rank, a.peer, p.n) < core::send_order(rank, b.peer, p.n);
    });
  }
  p.staging_bytes = c.staging();
  // Only an op carrying exactly one whole user message can use the user's datatype directly.
  auto raw = [](const std::vector<Segment>& segs, Area area, bool own_op) {
    return std::any_of(segs.begin(), segs.end(), [&](const Segment& s) {
      return s.area == area && !(own_op && segs.size() == 1 && s.whole);
    });
  };
  for (const Step& st : p.steps) {
    for (const Op& op : st.sends) p.reads_send_bytes |= raw(op.segments, Area::send_msg, true);
    for (const Op& op : st.recvs) p.writes_recv_bytes |= raw(op.segments, Area::recv_msg, true);
    for (const LocalCopy& lc : st.copies) {
      p.reads_send_bytes |= raw(lc.from, Area::send_msg, false);
      p.writes_recv_bytes |= raw(lc.to, Area::recv_msg, false);
    }
  }
  return p;
}

void post_step(const RankProgram& p, std::size_t k, Transport& t) {
  const Step& s = p.steps[k];
  for (const Op& op : s.recvs) t.post_recv(k, op);
  for (const LocalCopy& c : s.copies) t.copy_local(c);
  for (const Op& op : s.sends) t.post_send(k, op);
}

void run(const RankProgram& p, Transport& t) {
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const Step& s = p.steps[k];
    if (s.recvs.empty() && s.sends.empty() && s.copies.empty() && !p.barrier_between_steps)
      continue;
    post_step(p, k, t);
    t.wait_all();
    if (p.barrier_between_steps && k + 1 < p.steps.size()) t.barrier();
  }
}

}  // namespace commsched::exec
