// The persistent all-to-alls (MPI-4's MPI_Alltoallv_init, MPI_Alltoall_init,
// MPI_Neighbor_alltoallv_init and MPI_Neighbor_alltoall_init; Open MPI 4.1's MPIX_ forms) as
// applications use them: bound once, started many times with new data in the same buffers,
// every received byte checked against its definition. Started one by one and with MPI_Startall
// beside the application's own persistent point-to-point requests; completed by MPI_Wait in
// reverse order, MPI_Waitall, MPI_Testall polling and MPI_Waitany; a datatype freed right after
// its init; and a rank that blocks in a receive between start and wait on a peer that waits for
// the exchange first.
// --waits: MPI_Waitall in place of MPI_Testall and MPI_Waitany (MPICH 4.0's own persistent
// collectives fail in those two: "already active" at the next start, or an error in Testall).
// Prints "persistent_check: N exchanges, M mismatches", or "persistent_check: skipped" (exit 77)
// where the MPI has no persistent collectives.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mpi_test_util.hpp"

#ifndef PCOLL
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("persistent_check: skipped (no persistent collectives)\n");
  MPI_Finalize();
  return 77;
}
#else

namespace {

int g_exchanges = 0;
long g_mismatches = 0;

unsigned char byte_of(int round, int op, int from, int to, int k) {
  return static_cast<unsigned char>(mpi_test::mix64(
      (static_cast<std::uint64_t>(round) << 40) ^ (static_cast<std::uint64_t>(op) << 36) ^
      (static_cast<std::uint64_t>(from) << 20) ^ static_cast<std::uint64_t>(to) ^
      (static_cast<std::uint64_t>(k) << 48)));
}

int count_of(int op, int from, int to) {
  mpi_test::Rng rng(static_cast<std::uint64_t>(op) * 7919u + static_cast<std::uint64_t>(from) * 131u +
                    static_cast<std::uint64_t>(to));
  return rng.chance(20) ? 0 : 1 + rng.below(2000);
}

// One bound exchange in bytes: block i goes to `to[i]` and block i comes from `from[i]`
// (every rank of the communicator for the plain forms; the neighbours for the others).
struct Bound {
  int op = 0, rank = 0;
  std::vector<int> to, from, sc, sd, rc, rd;
  std::vector<unsigned char> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;

  void lay_out(MPI_Comm comm, const std::vector<int>& dst, const std::vector<int>& src, int per) {
    int size = 0;
    mpi_test::rank_and_size(comm, rank, size);
    to = dst, from = src;
    sc.assign(to.size(), 0), sd.assign(to.size(), 0), rc.assign(from.size(), 0), rd.assign(from.size(), 0);
    int st = 0, rt = 0;
    for (std::size_t i = 0; i < to.size(); ++i)
      sc[i] = per ? per : count_of(op, rank, to[i]), sd[i] = st, st += sc[i] + (per ? 0 : 3);
    for (std::size_t j = 0; j < from.size(); ++j)
      rc[j] = per ? per : count_of(op, from[j], rank), rd[j] = rt, rt += rc[j] + (per ? 0 : 5);
    send.assign(static_cast<std::size_t>(st) + 1, 0xEE);
    recv.assign(static_cast<std::size_t>(rt) + 1, 0xCC);
  }

  void fill(int round) {  // new data in the same buffers, before each start
    for (std::size_t i = 0; i < to.size(); ++i)
      for (int k = 0; k < sc[i]; ++k)
        send[static_cast<std::size_t>(sd[i] + k)] = to[i] == MPI_PROC_NULL ? 0 : byte_of(round, op, rank, to[i], k);
    std::fill(recv.begin(), recv.end(), 0xCC);
  }

  void check(int round) {
    ++g_exchanges;
    std::vector<unsigned char> want(recv.size(), 0xCC);
    for (std::size_t j = 0; j < from.size(); ++j) {
      if (from[j] == MPI_PROC_NULL) continue;
      for (int k = 0; k < rc[j]; ++k)
        want[static_cast<std::size_t>(rd[j] + k)] = byte_of(round, op, from[j], rank, k);
    }
    for (std::size_t i = 0; i < want.size(); ++i) g_mismatches += want[i] != recv[i];
  }
};

std::vector<int> everyone(MPI_Comm comm) {
  int rank = 0, size = 0;
  mpi_test::rank_and_size(comm, rank, size);
  std::vector<int> v(static_cast<std::size_t>(size));
  for (int j = 0; j < size; ++j) v[static_cast<std::size_t>(j)] = j;
  return v;
}

// An irregular directed graph, each rank's lists in a shuffled order.
MPI_Comm irregular_graph(int me, int n) {
  auto edge = [n](int x, int y) {
    return y == (x + 1) % n || mpi_test::mix64(static_cast<std::uint64_t>(x) * 1000003u + static_cast<std::uint64_t>(y)) % 3 != 0;
  };
  auto order = [me](std::uint64_t salt, int x) {
    return mpi_test::mix64(salt ^ (static_cast<std::uint64_t>(me) << 32) ^ static_cast<std::uint64_t>(x));
  };
  std::vector<int> dst, src;
  for (int j = 0; j < n; ++j) {
    if (edge(me, j)) dst.push_back(j);
    if (edge(j, me)) src.push_back(j);
  }
  std::sort(dst.begin(), dst.end(), [&](int x, int y) { return order(11, x) < order(11, y); });
  std::sort(src.begin(), src.end(), [&](int x, int y) { return order(23, x) < order(23, y); });
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(src.size()), src.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(dst.size()), dst.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool waits_only = argc > 1 && std::strcmp(argv[1], "--waits") == 0;
  int rank = 0, size = 0;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  MPI_Comm half = MPI_COMM_NULL, graph = irregular_graph(rank, size), line = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  const int open = 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &open, 0, &line);

  Bound v, a, nv, na;
  v.op = 1, a.op = 2, nv.op = 3, na.op = 4;
  v.lay_out(MPI_COMM_WORLD, everyone(MPI_COMM_WORLD), everyone(MPI_COMM_WORLD), 0);
  PCOLL(Alltoallv_init)(v.send.data(), v.sc.data(), v.sd.data(), MPI_BYTE, v.recv.data(),
                        v.rc.data(), v.rd.data(), MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &v.req);
  // MPI_Alltoall_init with 700-byte blocks sent through a contiguous type freed at once.
  a.lay_out(half, everyone(half), everyone(half), 700);
  MPI_Datatype block = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(700, MPI_BYTE, &block);
  MPI_Type_commit(&block);
  PCOLL(Alltoall_init)(a.send.data(), 1, block, a.recv.data(), 700, MPI_BYTE, half, MPI_INFO_NULL,
                       &a.req);
  MPI_Type_free(&block);
  const mpi_test::Lists gl = mpi_test::lists_of(graph), ll = mpi_test::lists_of(line);
  nv.lay_out(graph, gl.destinations, gl.sources, 0);
  PCOLL(Neighbor_alltoallv_init)(nv.send.data(), nv.sc.data(), nv.sd.data(), MPI_BYTE,
                                 nv.recv.data(), nv.rc.data(), nv.rd.data(), MPI_BYTE, graph,
                                 MPI_INFO_NULL, &nv.req);
  na.lay_out(line, ll.destinations, ll.sources, 300);
  PCOLL(Neighbor_alltoall_init)(na.send.data(), 300, MPI_BYTE, na.recv.data(), 300, MPI_BYTE, line,
                                MPI_INFO_NULL, &na.req);

  // The application's own persistent ring messages, started with the exchanges.
  int token_out = 0, token_in = -1;
  MPI_Request ring[2];
  MPI_Recv_init(&token_in, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &ring[0]);
  MPI_Send_init(&token_out, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &ring[1]);

  Bound* all[4] = {&v, &a, &nv, &na};
  volatile double sink = 0;
  for (int round = 1; round <= 12; ++round) {
    for (Bound* b : all) b->fill(round);
    token_out = rank * 100 + round;
    token_in = -1;
    MPI_Request reqs[6] = {v.req, a.req, nv.req, na.req, ring[0], ring[1]};
    switch (waits_only && round % 4 >= 2 ? 0 : round % 4) {
      case 0:  // all at once, waited together
        MPI_Startall(6, reqs);
        MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE);
        break;
      case 1:  // one by one, computation, waited in reverse
        for (MPI_Request& r : reqs) MPI_Start(&r);
        sink = sink + mpi_test::busy(20000);
        for (int i = 5; i >= 0; --i) MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        break;
      case 2:  // polled
        MPI_Startall(6, reqs);
        for (int flag = 0; !flag;) MPI_Testall(6, reqs, &flag, MPI_STATUSES_IGNORE);
        break;
      default:  // one at a time as they complete
        MPI_Startall(6, reqs);
        for (int left = 6; left > 0; --left) {
          int index = MPI_UNDEFINED;
          MPI_Waitany(6, reqs, &index, MPI_STATUS_IGNORE);
        }
    }
    for (Bound* b : all) b->check(round);
    g_mismatches += token_in != ((rank + size - 1) % size) * 100 + round;

    // A rank blocks in a receive before its wait, on a peer that waits for the exchange first.
    v.fill(round + 1000);
    MPI_Start(&v.req);
    mpi_test::wait_behind_receive(v.req, 9);
    v.check(round + 1000);
  }

  for (Bound* b : all) MPI_Request_free(&b->req);
  MPI_Request_free(&ring[0]);
  MPI_Request_free(&ring[1]);
  long total = 0;
  int exchanges = 0;
  MPI_Reduce(&g_mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&g_exchanges, &exchanges, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&line);
  if (rank == 0) std::printf("persistent_check: %d exchanges, %ld mismatches\n", exchanges, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
#endif
