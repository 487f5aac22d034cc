// The simulator of cost/simulate.hpp: an event loop over message starts and completions with
// one send and one receive port per rank, and the matrix lower bound.
#include "cost/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace commsched::cost {

namespace {

struct Flow {
  Rank from;
  Rank to;
  std::size_t phase;
  LinkClass cls;
  double cpu;      // seconds of the sender's processor before the message is posted: the
                   // overhead and the packing of forwarded bytes (links with an overhead)
  double startup;  // seconds before data moves, ports held: α and packing (links without one)
  double work;     // seconds of data at full speed: bytes · β
  double latency;  // seconds after the data left, ports free: α − overhead
  double beta;     // s/byte of this message's link at its size
  bool rendezvous;  // sent by the rendezvous protocol (Machine::rendezvous_bytes)
  int from_node;
  int to_node;
  int wan_key;     // from_cluster · clusters + to_cluster for inter-cluster flows, else -1
};

struct Op {
  std::size_t phase;
  std::size_t flow;
  bool send;
};

// Items (a flow, a rank) due at absolute times, soonest (then lowest item) first.
class Events {
 public:
  bool empty() const { return heap_.empty(); }
  double next() const { return heap_.front().first; }
  void push(double at, std::size_t item) {
    heap_.emplace_back(at, item);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
  }
  std::size_t pop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const std::size_t item = heap_.back().second;
    heap_.pop_back();
    return item;
  }

 private:
  std::vector<std::pair<double, std::size_t>> heap_;
};

class Engine {
 public:
  Engine(const Machine& machine, const core::Topology& topo, Rank n)
      : machine_(machine), topo_(topo), n_(n), clusters_(topo.clusters()) {}

  // Runs the flows; ranks enter their first phase at time `start`. Returns the finish time,
  // or infinity (no prediction) when the times are not finite or the run does not settle.
  // A rank posts its sends of a phase in core::send_order, or with `in_order` as the flows come.
  double run(const std::vector<Flow>& flows, double start, bool in_order = false) {
    const auto n = static_cast<std::size_t>(n_);
    std::vector<std::vector<Op>> ops(n);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      ops[static_cast<std::size_t>(flows[f].from)].push_back({flows[f].phase, f, true});
      ops[static_cast<std::size_t>(flows[f].to)].push_back({flows[f].phase, f, false});
    }
    auto ring = [&](const Op& op) {
      const Flow& fl = flows[op.flow];
      return op.send && !in_order ? core::send_order(fl.from, fl.to, n_) : Rank{0};
    };
    for (auto& list : ops)
      std::stable_sort(list.begin(), list.end(), [&](const Op& a, const Op& b) {
        return a.phase != b.phase ? a.phase < b.phase : ring(a) < ring(b);
      });

    constexpr std::size_t kDone = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> seg_begin(n, 0), seg_end(n, 0), phase(n, kDone), left(n, 0);
    // Seconds of data (bytes · β) of each rank's sends in its phase that have not left yet.
    std::vector<double> sends_left(n, 0.0);
    std::vector<char> send_busy(n, 0), recv_busy(n, 0), started(flows.size(), 0);
    // The sender's processor posts its sends of a phase one after the other, in the order
    // sorted above, each after its `cpu` seconds; only posted messages may take the ports.
    std::vector<std::size_t> next_post(n, 0);
    std::vector<std::size_t> unstarted(n, 0);  // no send before it in its phase is waiting
    std::vector<double> post_at(n, -1.0);  // when the send at next_post is posted; < 0: not begun
    std::vector<char> posted(flows.size(), 0);
    // Ranks with sends still to post in their phase, soonest first. The events below are kept
    // as absolute times in heaps: a dense 1024-rank matrix has a million messages, and
    // scanning every pending one at every event made native's prediction take a minute.
    Events posting;
    double now = start;
    // What the next start pass looks at, in rank order as a pass over every sender would: every
    // posted send of a sender whose port came free or that entered a phase (rescan), and, of
    // the others, only the sends that may start now (recheck): one just posted, or one that
    // waits for a receiver that came free or entered a phase (watchers[receiver] lists the
    // waiting sends as sender and index in ops). Any other send would still wait.
    std::vector<std::size_t> touched, scan;
    std::vector<char> is_touched(n, 0), whole(n, 0);
    std::vector<std::vector<std::size_t>> recheck_ops(n);
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> watchers(n);
    auto touch = [&](std::size_t r) {
      if (!is_touched[r]) {
        is_touched[r] = 1;
        touched.push_back(r);
      }
    };
    auto rescan = [&](std::size_t r) {
      whole[r] = 1;
      recheck_ops[r].clear();
      touch(r);
    };
    auto recheck = [&](std::size_t r, std::size_t k) {
      if (!whole[r]) recheck_ops[r].push_back(k);
      touch(r);
    };
    auto wake = [&](std::size_t receiver) {
      for (const auto& [r, k] : watchers[receiver]) recheck(r, k);
      watchers[receiver].clear();
    };
    auto post_ready = [&](std::size_t r, double tol) {
      const std::vector<Op>& list = ops[r];
      while (next_post[r] < seg_end[r]) {
        const Op& op = list[next_post[r]];
        if (!op.send) {
          ++next_post[r];
          continue;
        }
        if (post_at[r] < 0.0) post_at[r] = now + flows[op.flow].cpu;
        if (post_at[r] - now > tol) {
          posting.push(post_at[r], r);
          return;
        }
        posted[op.flow] = 1;
        recheck(r, next_post[r]);
        post_at[r] = -1.0;
        ++next_post[r];
      }
    };
    double finish = start;
    auto enter_next = [&](std::size_t r) {
      rescan(r);
      wake(r);
      const std::vector<Op>& list = ops[r];
      seg_begin[r] = seg_end[r];
      if (seg_begin[r] >= list.size()) {
        phase[r] = kDone;
        return;
      }
      phase[r] = list[seg_begin[r]].phase;
      std::size_t e = seg_begin[r];
      sends_left[r] = 0.0;
      for (; e < list.size() && list[e].phase == phase[r]; ++e)
        if (list[e].send) sends_left[r] += flows[list[e].flow].work;
      seg_end[r] = e;
      left[r] = e - seg_begin[r];
      unstarted[r] = next_post[r] = seg_begin[r];
      post_at[r] = -1.0;
      post_ready(r, 0.0);
    };
    for (std::size_t r = 0; r < n; ++r) enter_next(r);

    struct Active {
      std::size_t flow;
      double startup;
      double work;
      double latency;  // after the data left: the flow's, and a rendezvous wait
    };
    std::vector<Active> active;
    std::vector<double> slow;
    std::vector<int> wan_count(static_cast<std::size_t>(clusters_) *
                               static_cast<std::size_t>(clusters_), 0);
    std::vector<int> nic_out, nic_in;
    const bool nic = machine_.node_beta_s_per_byte > 0.0;
    if (nic) {
      nic_out.assign(static_cast<std::size_t>(topo_.nodes(n_)), 0);
      nic_in.assign(nic_out.size(), 0);
    }
    Events flight;  // messages past their ports, in latency: when each arrives
    std::size_t remaining = flows.size();
    std::vector<std::size_t> done_ranks;
    // A message arrived: both ends count it towards their phase.
    auto arrive = [&](std::size_t f) {
      const Flow& fl = flows[f];
      const auto from = static_cast<std::size_t>(fl.from), to = static_cast<std::size_t>(fl.to);
      --remaining;
      finish = std::max(finish, now);
      if (--left[from] == 0) done_ranks.push_back(from);
      if (--left[to] == 0) done_ranks.push_back(to);
    };

    // Every step retires at least one event (a post, a start-up or a transfer ending, an
    // arrival), at most four per flow; the cap only trips when rounding keeps time from moving
    // (times so large that dt vanishes against now), and then there is no prediction.
    const std::size_t max_steps = 8 * (flows.size() + n) + 1024;
    std::size_t steps = 0;
    for (const Flow& fl : flows)
      if (!std::isfinite(fl.cpu + fl.startup + fl.work + fl.latency))
        return std::numeric_limits<double>::infinity();
    while (remaining > 0) {
      if (++steps > max_steps) return std::numeric_limits<double>::infinity();
      // Start every message whose ends are in its phase and whose ports are free.
      scan.swap(touched);
      touched.clear();
      if (scan.size() * 16 < n) {
        std::sort(scan.begin(), scan.end());
      } else {  // many: rank order from the flags, in O(n)
        scan.clear();
        for (std::size_t r = 0; r < n; ++r)
          if (is_touched[r]) scan.push_back(r);
      }
      for (std::size_t r : scan) {
        is_touched[r] = 0;
        std::vector<std::size_t>& some = recheck_ops[r];
        const bool all = whole[r];
        whole[r] = 0;
        if (phase[r] == kDone || send_busy[r]) {  // a port coming free rescans it
          some.clear();
          continue;
        }
        // Starts send k if its receiver is ready; else k waits for the receiver.
        auto try_start = [&](std::size_t k) {
          const Op& op = ops[r][k];
          const Flow& fl = flows[op.flow];
          const auto to = static_cast<std::size_t>(fl.to);
          if (phase[to] != fl.phase || recv_busy[to]) {
            watchers[to].emplace_back(r, k);
            return false;
          }
          started[op.flow] = 1;
          send_busy[r] = 1;
          recv_busy[to] = 1;
          // A rendezvous message's acknowledgement queues behind the receiver's own sends of
          // this phase still to leave, up to as long as the message itself.
          const double ack_wait =
              fl.rendezvous ? std::clamp(sends_left[to], 0.0, fl.work) : 0.0;
          active.push_back(
              {op.flow, fl.startup, fl.work, fl.latency + machine_.rendezvous_wait * ack_wait});
          return true;
        };
        if (all) {
          std::size_t& first = unstarted[r];
          while (first < seg_end[r] && (!ops[r][first].send || started[ops[r][first].flow]))
            ++first;
          for (std::size_t k = first; k < seg_end[r]; ++k) {
            const Op& op = ops[r][k];
            if (!op.send || started[op.flow]) continue;
            if (!posted[op.flow]) break;
            if (try_start(k)) break;
          }
        } else {
          std::sort(some.begin(), some.end());
          some.erase(std::unique(some.begin(), some.end()), some.end());
          for (std::size_t k : some)
            if (!started[ops[r][k].flow] && try_start(k)) break;
        }
        some.clear();
      }
      if (active.empty() && flight.empty() && posting.empty())
        return std::numeric_limits<double>::infinity();  // cannot happen

      // Slowdowns of the messages moving data now.
      std::fill(wan_count.begin(), wan_count.end(), 0);
      if (nic) {
        std::fill(nic_out.begin(), nic_out.end(), 0);
        std::fill(nic_in.begin(), nic_in.end(), 0);
      }
      for (const Active& a : active) {
        if (a.startup > 0.0) continue;
        const Flow& fl = flows[a.flow];
        if (fl.wan_key >= 0) ++wan_count[static_cast<std::size_t>(fl.wan_key)];
        if (nic && fl.from_node != fl.to_node) {
          ++nic_out[static_cast<std::size_t>(fl.from_node)];
          ++nic_in[static_cast<std::size_t>(fl.to_node)];
        }
      }
      slow.assign(active.size(), 1.0);
      double dt = std::numeric_limits<double>::infinity();
      if (!flight.empty()) dt = std::min(dt, flight.next() - now);
      if (!posting.empty()) dt = std::min(dt, posting.next() - now);
      for (std::size_t i = 0; i < active.size(); ++i) {
        const Active& a = active[i];
        if (a.startup > 0.0) {
          dt = std::min(dt, a.startup);
          continue;
        }
        const Flow& fl = flows[a.flow];
        double s = 1.0;
        if (fl.wan_key >= 0)
          s = std::max(s, 1.0 + machine_.inter_sharing *
                                    (wan_count[static_cast<std::size_t>(fl.wan_key)] - 1));
        if (nic && fl.from_node != fl.to_node) {
          const int k = std::max(nic_out[static_cast<std::size_t>(fl.from_node)],
                                 nic_in[static_cast<std::size_t>(fl.to_node)]);
          if (fl.beta > 0.0) s = std::max(s, k * machine_.node_beta_s_per_byte / fl.beta);
        }
        slow[i] = s;
        dt = std::min(dt, a.work * s);
      }
      if (!(dt >= 0.0) || !std::isfinite(now + dt))  // NaN too
        return std::numeric_limits<double>::infinity();
      const double tol = dt * 1e-12 + 1e-18;
      now += dt;
      done_ranks.clear();
      while (!flight.empty() && flight.next() - now <= tol) arrive(flight.pop());
      while (!posting.empty() && posting.next() - now <= tol) post_ready(posting.pop(), tol);
      std::size_t kept = 0;
      for (std::size_t i = 0; i < active.size(); ++i) {
        Active a = active[i];
        bool done = false;
        if (a.startup > 0.0) {
          a.startup -= dt;
          if (a.startup <= tol) {
            a.startup = 0.0;
            done = a.work <= 0.0;
          }
        } else {
          a.work -= dt / slow[i];
          done = a.work * slow[i] <= tol;
        }
        if (!done) {
          active[kept++] = a;
          continue;
        }
        const Flow& fl = flows[a.flow];
        send_busy[static_cast<std::size_t>(fl.from)] = 0;
        recv_busy[static_cast<std::size_t>(fl.to)] = 0;
        rescan(static_cast<std::size_t>(fl.from));
        wake(static_cast<std::size_t>(fl.to));
        sends_left[static_cast<std::size_t>(fl.from)] -= fl.work;
        if (a.latency > 0.0)
          flight.push(now + a.latency, a.flow);
        else
          arrive(a.flow);
      }
      active.resize(kept);
      for (std::size_t r : done_ranks)
        if (left[r] == 0 && phase[r] != kDone) enter_next(r);
    }
    return finish;
  }

  Flow make_flow(const core::Transfer& t, std::size_t phase) const {
    Flow fl{};
    fl.from = t.from;
    fl.to = t.to;
    fl.phase = phase;
    fl.cls = link_class(topo_, t.from, t.to);
    Bytes bytes = 0, forwarded = 0;
    for (const core::Piece& p : t.pieces) {
      bytes += p.length;
      if (p.orig_src != t.from) forwarded += p.length;
    }
    const Link link = machine_.link_for(fl.cls, bytes);
    const double packing = static_cast<double>(forwarded) * machine_.copy_beta_s_per_byte;
    fl.beta = link.beta_s_per_byte;
    if (link.overhead_s >= 0.0) {
      fl.cpu = link.overhead_s + packing;
      fl.startup = 0.0;
      fl.latency = std::max(0.0, link.alpha_s - link.overhead_s);
    } else {
      fl.cpu = 0.0;
      fl.startup = link.alpha_s + packing;
      fl.latency = 0.0;
    }
    fl.work = static_cast<double>(bytes) * link.beta_s_per_byte;
    fl.rendezvous = machine_.rendezvous_bytes > 0 && bytes >= machine_.rendezvous_bytes &&
                    fl.cls != LinkClass::self;
    fl.from_node = topo_.node(t.from);
    fl.to_node = topo_.node(t.to);
    fl.wan_key = fl.cls == LinkClass::inter ? topo_.cluster(t.from) * clusters_ +
                                                  topo_.cluster(t.to)
                                            : -1;
    return fl;
  }

 private:
  const Machine& machine_;
  const core::Topology& topo_;
  Rank n_;
  int clusters_;
};

}  // namespace

double predict(const core::Plan& plan, const core::CommMatrix& m, const Machine& machine,
               const core::Topology& topo) {
  (void)m;
  const Rank n = plan.n;
  if (n <= 0 || plan.phases.empty()) return 0.0;
  Engine engine(machine, topo, n);
  if (!plan.barrier_between_phases) {
    std::vector<Flow> flows;
    flows.reserve(plan.transfer_count());
    for (std::size_t k = 0; k < plan.phases.size(); ++k)
      for (const core::Transfer& t : plan.phases[k].transfers)
        flows.push_back(engine.make_flow(t, k));
    return engine.run(flows, 0.0);
  }
  // Barrier between phases: each phase alone, then ⌈log2 n⌉ start-ups of its slowest class.
  double slowest_alpha = 0.0;
  for (const core::Phase& ph : plan.phases)
    for (const core::Transfer& t : ph.transfers)
      slowest_alpha =
          std::max(slowest_alpha, machine.link_for(link_class(topo, t.from, t.to), 0).alpha_s);
  const double rounds = std::ceil(std::log2(static_cast<double>(std::max<Rank>(n, 2))));
  double now = 0.0;
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    std::vector<Flow> flows;
    for (const core::Transfer& t : plan.phases[k].transfers) flows.push_back(engine.make_flow(t, 0));
    now = engine.run(flows, now);
    if (k + 1 < plan.phases.size()) now += rounds * slowest_alpha;
  }
  return now;
}

double predict_native(const core::CommMatrix& m, const Machine& machine,
                      const core::Topology& topo) {
  // Everything posted at once, each rank's sends in the library's order: core::send_order, as
  // for plans (the next rank first), or with native_rank_order from rank 0 (one_phase_plan
  // lists every row's peers in rank order), so that all ranks reach rank 0 first; a sender
  // still skips to its next message when that receiver is busy.
  const Rank n = m.size();
  const core::Plan plan = core::one_phase_plan(m, "native");
  Engine engine(machine, topo, n);
  std::vector<Flow> flows;
  flows.reserve(plan.transfer_count());
  for (const core::Phase& ph : plan.phases)
    for (const core::Transfer& t : ph.transfers) flows.push_back(engine.make_flow(t, 0));
  if (!machine.native_all_peers || n < 2)
    return engine.run(flows, 0.0, /*in_order=*/machine.native_rank_order);
  // Every rank also posts a send and a receive to every other peer, zero bytes included, in
  // rank order (SimGrid's MPI_Alltoallv). With an overhead the posts are serialised and that
  // order is real: every rank reaches the same receiver at once. The zero-byte messages are
  // not simulated one by one (at 1024 ranks, a million of them): each costs its sender the
  // overhead before its next message is posted, charged at the slowest link class the job
  // spans, and the last one still needs its latency.
  const Link link = machine.link_for(topo.clusters() > 1  ? LinkClass::inter
                                     : topo.nodes(n) > 1 ? LinkClass::cluster
                                                         : LinkClass::node,
                                     0);
  const double floor =
      static_cast<double>(n - 1) * link.port_s() + (link.alpha_s - link.port_s());
  if (link.overhead_s < 0.0) return std::max(engine.run(flows, 0.0), floor);
  std::vector<Rank> last_post(static_cast<std::size_t>(n), 0);
  for (Flow& fl : flows) {
    if (fl.from == fl.to) continue;
    // Position of fl.to among the sender's n − 1 peers in rank order, from 1.
    const Rank pos = fl.to < fl.from ? fl.to + 1 : fl.to;
    Rank& last = last_post[static_cast<std::size_t>(fl.from)];
    fl.cpu += static_cast<double>(pos - last - 1) * link.overhead_s;
    last = pos;
  }
  return std::max(engine.run(flows, 0.0, /*in_order=*/true), floor);
}

double agreement_time(Rank n, const Machine& machine, const core::Topology& topo) {
  // Recursive doubling: in round k rank r exchanges with r XOR 2^k; a round lasts as long as
  // its slowest pair's start-up (its latency included: each round waits for the last).
  double total = 0.0;
  for (Rank bit = 1; bit < n; bit <<= 1) {
    double round = 0.0;
    for (Rank r = 0; r < n; ++r) {
      const Rank peer = r ^ bit;
      if (peer < n)
        round = std::max(round,
                         machine.link_for(link_class(topo, r, peer), kAgreementBytes).alpha_s);
    }
    total += round;
  }
  return total;
}

double predict_call(const core::Plan* plan, const core::CommMatrix& m, const Machine& machine,
                    const core::Topology& topo, double agreement_s) {
  return plan ? predict(*plan, m, machine, topo) + agreement_s
              : predict_native(m, machine, topo) + agreement_s / kNativeAgreeEvery;
}

double predict_call(const core::Plan* plan, const core::CommMatrix& m, const Machine& machine,
                    const core::Topology& topo) {
  return predict_call(plan, m, machine, topo, agreement_time(m.size(), machine, topo));
}

double lower_bound(const core::CommMatrix& m, const Machine& machine,
                   const core::Topology& topo) {
  const Rank n = m.size();
  if (n <= 0) return 0.0;
  const auto nn = static_cast<std::size_t>(n);
  const int nodes = topo.nodes(n), clusters = topo.clusters();
  std::vector<int> ranks_on_node(static_cast<std::size_t>(nodes), 0);
  std::vector<int> ranks_in_cluster(static_cast<std::size_t>(clusters), 0);
  for (Rank r = 0; r < n; ++r) {
    ++ranks_on_node[static_cast<std::size_t>(topo.node(r))];
    ++ranks_in_cluster[static_cast<std::size_t>(topo.cluster(r))];
  }
  // Nodes per cluster, to know whether a rank has a peer on another node of its cluster.
  std::vector<int> nodes_in_cluster(static_cast<std::size_t>(clusters), 0);
  {
    std::vector<int> cluster_of_node(static_cast<std::size_t>(nodes), -1);
    for (Rank r = 0; r < n; ++r) cluster_of_node[static_cast<std::size_t>(topo.node(r))] = topo.cluster(r);
    for (int c : cluster_of_node)
      if (c >= 0) ++nodes_in_cluster[static_cast<std::size_t>(c)];
  }
  const Link& self = machine.at(LinkClass::self);
  // The size table may make some sizes cheaper than the links say: the bound takes the smallest
  // factors (1 below the first row).
  double alpha_factor = 1.0, beta_factor = 1.0;
  if (!machine.size_factors.empty() && machine.size_factors.front().min_bytes == 0)
    alpha_factor = beta_factor = std::numeric_limits<double>::infinity();
  for (const SizeFactor& f : machine.size_factors) {
    alpha_factor = std::min(alpha_factor, f.alpha_factor);
    beta_factor = std::min(beta_factor, f.beta_factor);
  }
  double bound = 0.0;
  std::vector<Bytes> out(nn, 0), in(nn, 0), self_bytes(nn, 0);
  std::vector<double> node_out(static_cast<std::size_t>(nodes), 0.0), node_in(node_out.size(), 0.0);
  std::vector<double> cl_out(static_cast<std::size_t>(clusters), 0.0), cl_in(cl_out.size(), 0.0);
  for (Rank i = 0; i < n; ++i)
    for (const core::Entry& e : m.row(i)) {
      if (e.peer == i) {
        self_bytes[static_cast<std::size_t>(i)] += e.bytes;
        continue;
      }
      out[static_cast<std::size_t>(i)] += e.bytes;
      in[static_cast<std::size_t>(e.peer)] += e.bytes;
      const auto b = static_cast<double>(e.bytes);
      if (topo.node(i) != topo.node(e.peer)) {
        node_out[static_cast<std::size_t>(topo.node(i))] += b;
        node_in[static_cast<std::size_t>(topo.node(e.peer))] += b;
      }
      if (link_class(topo, i, e.peer) == LinkClass::inter) {
        cl_out[static_cast<std::size_t>(topo.cluster(i))] += b;
        cl_in[static_cast<std::size_t>(topo.cluster(e.peer))] += b;
      }
    }
  // Per rank: its bytes leave (arrive) through its one port, over the cheapest link it has.
  for (Rank r = 0; r < n; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    double alpha = std::numeric_limits<double>::infinity();
    double beta = std::numeric_limits<double>::infinity();
    auto reach = [&](LinkClass c) {
      const Link l = machine.at(c).scaled(alpha_factor, beta_factor);
      alpha = std::min(alpha, l.alpha_s);
      beta = std::min(beta, l.beta_s_per_byte);
    };
    const auto cl = static_cast<std::size_t>(topo.cluster(r));
    if (ranks_on_node[static_cast<std::size_t>(topo.node(r))] > 1) reach(LinkClass::node);
    if (nodes_in_cluster[cl] > 1) reach(LinkClass::cluster);
    if (ranks_in_cluster[cl] < n) reach(LinkClass::inter);
    for (const Bytes moved : {out[ri], in[ri]}) {
      if (moved == 0 && self_bytes[ri] == 0) continue;
      double t = 0.0;
      double a = std::numeric_limits<double>::infinity();
      if (moved > 0) {
        t += static_cast<double>(moved) * beta;
        a = std::min(a, alpha);
      }
      if (self_bytes[ri] > 0) {
        t += static_cast<double>(self_bytes[ri]) * std::min(self.beta_s_per_byte, beta);
        a = std::min({a, self.alpha_s, alpha});
      }
      bound = std::max(bound, t + a);
    }
  }
  // A node's off-node bytes through its NIC.
  if (machine.node_beta_s_per_byte > 0.0)
    for (std::size_t k = 0; k < node_out.size(); ++k)
      bound = std::max(bound, std::max(node_out[k], node_in[k]) * machine.node_beta_s_per_byte);
  // A cluster's outgoing (incoming) bytes over its inter-cluster links, each carrying at most
  // min(|A|, |B|) messages at once (one per port), m of them at 1 / (β·S(m)) each.
  const double beta_w = machine.at(LinkClass::inter).beta_s_per_byte * beta_factor;
  if (clusters > 1 && beta_w > 0.0) {
    for (int a = 0; a < clusters; ++a) {
      double capacity = 0.0;
      for (int b = 0; b < clusters; ++b) {
        if (b == a) continue;
        const double k = std::min(ranks_in_cluster[static_cast<std::size_t>(a)],
                                  ranks_in_cluster[static_cast<std::size_t>(b)]);
        capacity += k / (beta_w * (1.0 + machine.inter_sharing * (k - 1.0)));
      }
      if (capacity > 0.0) {
        const auto ai = static_cast<std::size_t>(a);
        bound = std::max(bound, std::max(cl_out[ai], cl_in[ai]) / capacity);
      }
    }
  }
  return bound;
}

std::function<double(Rank, Rank, Bytes)> pair_time(const Machine& machine,
                                                   const core::Topology& topo) {
  return [machine, topo](Rank src, Rank dst, Bytes bytes) {
    const Link link = machine.link_for(link_class(topo, src, dst), bytes);
    return link.alpha_s + static_cast<double>(bytes) * link.beta_s_per_byte;
  };
}

}  // namespace commsched::cost
