// commsched-calibrate: measures α and β of every link class present in the job (ping-pong over
// sizes; cost::fit_link takes α from the smallest and β from the larger half), a contention test
// (k senders into one receiver against the model's prediction, k pairs across one shared link),
// and writes a machine file; --check FILE prints predicted against measured times
// of a few plans on a random pattern; --validate FILE only parses a machine file.
//
//   mpirun -np 4 commsched-calibrate [--quick] [--base NAME|FILE] [--out FILE]
//   mpirun -np 4 commsched-calibrate --check FILE [--quick]
//   commsched-calibrate --validate FILE
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/files.hpp"
#include "core/plan.hpp"
#include "cost/fit.hpp"
#include "cost/machine.hpp"
#include "cost/simulate.hpp"
#include "plan/registry.hpp"

namespace {

using commsched::Bytes;
using commsched::Rank;
namespace cost = commsched::cost;
namespace core = commsched::core;

struct Args {
  bool quick = false;
  std::string base, out, check, validate;
};

int rank_ = 0, size_ = 1;

void say(const char* fmt, const std::string& a = {}, double x = 0, double y = 0) {
  if (rank_ == 0) {
    std::printf(fmt, a.c_str(), x, y);
    std::fflush(stdout);
  }
}

// Minimum over `reps` of the one-way time between a and b for `bytes` (half a round trip);
// every rank calls it, only a and b move data. Result valid on every rank.
double ping_pong(Rank a, Rank b, Bytes bytes, int reps, std::vector<char>& buf) {
  double best = 1e30;
  MPI_Barrier(MPI_COMM_WORLD);
  const int count = static_cast<int>(bytes);
  for (int r = 0; r < reps + 1; ++r) {  // the first round warms up
    const double t0 = MPI_Wtime();
    if (rank_ == a) {
      MPI_Send(buf.data(), count, MPI_BYTE, b, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), count, MPI_BYTE, b, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank_ == b) {
      MPI_Recv(buf.data(), count, MPI_BYTE, a, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), count, MPI_BYTE, a, 1, MPI_COMM_WORLD);
    }
    if (r > 0) best = std::min(best, (MPI_Wtime() - t0) / 2);
  }
  if (rank_ != a) best = 0;
  double out = 0;
  MPI_Allreduce(&best, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

std::vector<Bytes> sizes_for(bool quick) {
  if (quick) return {0, 4096, 65536, 262144};
  return {0, 1024, 8192, 65536, 262144, 1 << 20};
}

// k ranks send `bytes` each to `dst` at once; the slowest sender's time, minimum over reps.
double fan_in(const std::vector<Rank>& senders, Rank dst, Bytes bytes, int reps,
              std::vector<char>& buf) {
  double best = 1e30;
  std::vector<char> rbuf(dst == rank_ ? bytes * senders.size() + 1 : 1);
  for (int r = 0; r < reps + 1; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    std::vector<MPI_Request> reqs;
    if (rank_ == dst)
      for (std::size_t k = 0; k < senders.size(); ++k) {
        reqs.emplace_back();
        MPI_Irecv(rbuf.data() + k * bytes, static_cast<int>(bytes), MPI_BYTE, senders[k], 2,
                  MPI_COMM_WORLD, &reqs.back());
      }
    if (std::find(senders.begin(), senders.end(), rank_) != senders.end()) {
      reqs.emplace_back();
      MPI_Isend(buf.data(), static_cast<int>(bytes), MPI_BYTE, dst, 2, MPI_COMM_WORLD, &reqs.back());
    }
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    double mine = MPI_Wtime() - t0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r > 0) best = std::min(best, all);
  }
  return best;
}

// Runs a plan of direct transfers phase by phase (loosely synchronous: each rank waits for its
// own transfers of a phase) and returns the maximum over ranks, minimum over reps.
double run_plan(const core::Plan& plan, const core::CommMatrix& m, int reps) {
  std::vector<Bytes> sdispl(static_cast<std::size_t>(size_) + 1, 0), rdispl(sdispl.size(), 0);
  for (Rank j = 0; j < size_; ++j) {
    sdispl[static_cast<std::size_t>(j) + 1] = sdispl[static_cast<std::size_t>(j)] + m.at(rank_, j);
    rdispl[static_cast<std::size_t>(j) + 1] = rdispl[static_cast<std::size_t>(j)] + m.at(j, rank_);
  }
  std::vector<char> sbuf(sdispl.back() + 1, 1), rbuf(rdispl.back() + 1, 0);
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (const core::Phase& ph : plan.phases) {
      std::vector<MPI_Request> reqs;
      for (const core::Transfer& t : ph.transfers)
        for (const core::Piece& p : t.pieces) {
          if (t.from == rank_ && t.to == rank_) {
            std::memcpy(rbuf.data() + rdispl[static_cast<std::size_t>(p.orig_src)] + p.offset,
                        sbuf.data() + sdispl[static_cast<std::size_t>(p.orig_dst)] + p.offset,
                        p.length);
          } else if (t.to == rank_) {
            reqs.emplace_back();
            MPI_Irecv(rbuf.data() + rdispl[static_cast<std::size_t>(p.orig_src)] + p.offset,
                      static_cast<int>(p.length), MPI_BYTE, t.from, 3, MPI_COMM_WORLD, &reqs.back());
          } else if (t.from == rank_) {
            reqs.emplace_back();
            MPI_Isend(sbuf.data() + sdispl[static_cast<std::size_t>(p.orig_dst)] + p.offset,
                      static_cast<int>(p.length), MPI_BYTE, t.to, 3, MPI_COMM_WORLD, &reqs.back());
          }
        }
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    }
    double mine = MPI_Wtime() - t0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r > 0) best = std::min(best, all);
  }
  return best;
}

// Node of every rank (shared-memory split), numbered by first appearance; host of every node.
core::Topology detect(const cost::Machine& machine) {
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm);
  int node_rank = 0;
  MPI_Comm_rank(node_comm, &node_rank);
  int leader = rank_;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node_comm);
  MPI_Comm_free(&node_comm);
  std::vector<int> leaders(static_cast<std::size_t>(size_));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::vector<char> hosts(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  std::map<int, int> index;
  std::vector<int> node_of;
  std::vector<std::string> node_hosts;
  for (int l : leaders) {
    auto [it, fresh] = index.emplace(l, static_cast<int>(index.size()));
    if (fresh) node_hosts.emplace_back(&hosts[static_cast<std::size_t>(l) * MPI_MAX_PROCESSOR_NAME]);
    node_of.push_back(it->second);
  }
  return cost::make_topology(machine, node_of, node_hosts);
}

int calibrate(const Args& args) {
  cost::Machine base;
  std::string error;
  if (!cost::load_machine(args.base, base, error)) {
    say("commsched-calibrate: %s\n", error);
    return 1;
  }
  const core::Topology topo = detect(base);
  const int reps = args.quick ? 3 : 10;
  const std::vector<Bytes> sizes = sizes_for(args.quick);
  std::vector<char> buf(sizes.back() + 1, 7);
  cost::Machine out = base;
  out.name = "calibrated";
  out.description = "measured by commsched-calibrate on " + std::to_string(size_) + " ranks";
  std::string notes;

  // Self: a memcpy, timed on rank 0 and shared.
  {
    std::vector<double> times;
    std::vector<char> dst(buf.size());
    for (Bytes s : sizes) {
      double best = 1e30;
      for (int r = 0; r < reps * 3; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        std::memcpy(dst.data(), buf.data(), s);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
      }
      MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      times.push_back(best);
    }
    out.at(cost::LinkClass::self) = cost::fit_link(sizes, times);
    out.copy_beta_s_per_byte = out.at(cost::LinkClass::self).beta_s_per_byte;
  }
  // One pair of ranks for each class present, found identically on every rank.
  for (auto cls : {cost::LinkClass::node, cost::LinkClass::cluster, cost::LinkClass::inter}) {
    Rank a = -1, b = -1;
    for (Rank i = 0; i < size_ && a < 0; ++i)
      for (Rank j = i + 1; j < size_; ++j)
        if (cost::link_class(topo, i, j) == cls) {
          a = i;
          b = j;
          break;
        }
    const std::string name(cost::kLinkClassNames[static_cast<std::size_t>(cls)]);
    if (a < 0) {
      notes += "# link." + name + ": not present in this job, kept from the base machine\n";
      continue;
    }
    std::vector<double> times;
    for (Bytes s : sizes) times.push_back(ping_pong(a, b, s, reps, buf));
    out.at(cls) = cost::fit_link(sizes, times);
    say("link.%s: alpha %.3g s, beta %.3g s/B", name, out.at(cls).alpha_s,
        out.at(cls).beta_s_per_byte);
    say(" (ranks %s)\n", std::to_string(a) + " <-> " + std::to_string(b));
    notes += "# link." + name + ": ping-pong between ranks " + std::to_string(a) + " and " +
             std::to_string(b) + ", one way:";
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      char point[64];
      std::snprintf(point, sizeof point, " %llu B %.1f us%s",
                    static_cast<unsigned long long>(sizes[i]), times[i] * 1e6,
                    i + 1 < sizes.size() ? "," : "\n");
      notes += point;
    }
  }
  // Shared links: k disjoint pairs across one node boundary (NIC) and one cluster boundary.
  for (auto cls : {cost::LinkClass::cluster, cost::LinkClass::inter}) {
    std::vector<std::pair<Rank, Rank>> pairs;
    std::vector<char> used(static_cast<std::size_t>(size_), 0);
    int from_group = -1, to_group = -1;
    auto group = [&](Rank r) { return cls == cost::LinkClass::cluster ? topo.node(r) : topo.cluster(r); };
    for (Rank i = 0; i < size_; ++i)
      for (Rank j = 0; j < size_; ++j) {
        if (used[static_cast<std::size_t>(i)] || used[static_cast<std::size_t>(j)] || i == j) continue;
        if (cost::link_class(topo, i, j) != cls) continue;
        if (from_group < 0) {
          from_group = group(i);
          to_group = group(j);
        }
        if (group(i) != from_group || group(j) != to_group) continue;
        pairs.emplace_back(i, j);
        used[static_cast<std::size_t>(i)] = used[static_cast<std::size_t>(j)] = 1;
      }
    if (pairs.size() < 2) continue;
    const Bytes s = sizes.back();
    const double one = ping_pong(pairs[0].first, pairs[0].second, s, reps, buf);
    double together = 1e30;
    for (int r = 0; r < reps + 1; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Request req = MPI_REQUEST_NULL;
      for (auto [i, j] : pairs) {
        if (rank_ == i) MPI_Isend(buf.data(), static_cast<int>(s), MPI_BYTE, j, 4, MPI_COMM_WORLD, &req);
        if (rank_ == j) MPI_Irecv(buf.data(), static_cast<int>(s), MPI_BYTE, i, 4, MPI_COMM_WORLD, &req);
      }
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      double mine = MPI_Wtime() - t0, all = 0;
      MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) together = std::min(together, all);
    }
    const double k = static_cast<double>(pairs.size());
    const double slowdown = one > 0 ? together / one : 1;
    if (cls == cost::LinkClass::inter) {
      out.inter_sharing = std::clamp((slowdown - 1) / (k - 1), 0.0, 1.0);
    } else if (slowdown > 1.2) {  // the node's ranks share a NIC
      out.node_beta_s_per_byte = std::max(0.0, together - out.at(cls).alpha_s) / (k * static_cast<double>(s));
    } else {
      out.node_beta_s_per_byte = 0;
    }
    notes += "# " + std::to_string(pairs.size()) + " pairs across one " +
             (cls == cost::LinkClass::inter ? "cluster" : "node") + " boundary: " +
             std::to_string(slowdown) + " x one pair\n";
  }
  // Contention: every other rank sends to rank 0 at once, against what the fitted links predict
  // for it (the native call of that pattern, one message after the other into rank 0's port and
  // its node's link). A ratio near 1 says the model holds; far above 1, the network loses time to
  // the fan-in itself (incast: drops, retransmissions) and schedules that avoid hot receivers win
  // more than it predicts.
  if (size_ > 2) {
    const Bytes s = sizes.back();
    std::vector<Rank> all;
    core::CommMatrix pattern(size_);
    for (Rank i = 1; i < size_; ++i) {
      all.push_back(i);
      pattern.set_row(i, {{0, s}});
    }
    const double measured = fan_in(all, 0, s, reps, buf);
    const double predicted = cost::predict_native(pattern, out, topo);
    const double ratio = predicted > 0 ? measured / predicted : 0;
    say("fan-in: %s senders into rank 0 took %.3g s", std::to_string(all.size()), measured);
    say("%s; these links predict %.3g s (ratio %.2f)\n", {}, predicted, ratio);
    notes += "# fan-in of " + std::to_string(all.size()) + " senders of " + std::to_string(s) +
             " B into rank 0: " + std::to_string(measured) + " s measured, " +
             std::to_string(predicted) + " s predicted by this file (ratio " +
             std::to_string(ratio) + ")\n";
  }
  const std::string text = "# Written by commsched-calibrate.\n" + notes + cost::to_toml(out);
  cost::Machine back;
  if (!cost::parse_machine(text, args.out.empty() ? "calibrated.toml" : args.out, back, error)) {
    say("commsched-calibrate: internal error, the file does not parse: %s\n", error);
    return 1;
  }
  if (rank_ == 0) {
    if (args.out.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      // Written whole, and never through a link or onto a device (core/files.hpp).
      if (std::string why; !core::replace_file(args.out, text, why)) {
        std::fprintf(stderr, "commsched-calibrate: %s\n", why.c_str());
        return 1;
      }
      std::printf("wrote %s\n", args.out.c_str());
    }
  }
  return 0;
}

int check(const Args& args) {
  cost::Machine machine;
  std::string error;
  if (!cost::load_machine(args.check, machine, error)) {
    say("commsched-calibrate: %s\n", error);
    return 1;
  }
  const core::Topology topo = detect(machine);
  std::mt19937_64 rng(12345);  // the same pattern on every rank
  std::vector<Bytes> dense(static_cast<std::size_t>(size_) * static_cast<std::size_t>(size_));
  const Bytes top = args.quick ? 16384 : 131072;
  for (Bytes& b : dense) b = rng() % 2 ? 1 + rng() % top : 0;
  const core::CommMatrix m = core::CommMatrix::from_dense(size_, dense);
  const int reps = args.quick ? 3 : 8;
  say("%s: random pattern, %.0f ranks", machine.name, static_cast<double>(size_));
  say("%s%.0f bytes; lower bound %.3g s\n", ", ", static_cast<double>(m.total_bytes()),
      commsched::cost::lower_bound(m, machine, topo));
  for (const char* id : {"ac", "lp_xor", "color"}) {
    commsched::plan::Options opts;
    opts.topology = &topo;
    const core::Plan plan = commsched::plan::find_strategy(id)->plan(m, opts);
    const double predicted = cost::predict(plan, m, machine, topo);
    const double measured = run_plan(plan, m, reps);
    say("%-10s predicted %.3g s, measured %.3g s\n", id, predicted, measured);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 < argc) into = argv[++i];
    };
    if (a == "--quick") args.quick = true;
    else if (a == "--out") value(args.out);
    else if (a == "--base") value(args.base);
    else if (a == "--check") value(args.check);
    else if (a == "--validate") value(args.validate);
    else {
      std::fprintf(stderr, "usage: commsched-calibrate [--quick] [--base MACHINE] [--out FILE] | "
                           "--check FILE | --validate FILE\n");
      return 2;
    }
  }
  if (!args.validate.empty()) {  // no MPI needed
    cost::Machine m;
    std::string error;
    if (!cost::load_machine(args.validate, m, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    std::printf("%s: ok (%s)\n", args.validate.c_str(), m.name.c_str());
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const int rc = args.check.empty() ? calibrate(args) : check(args);
  MPI_Finalize();
  return rc;
}
