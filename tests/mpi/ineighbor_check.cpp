// MPI_Ineighbor_alltoallv and MPI_Ineighbor_alltoall as applications use them, every received
// byte checked against what the native call delivers (each byte says which rank sent it to whom): an irregular distributed graph made by MPI_Dist_graph_create_adjacent with its
// lists in shuffled order, one made by MPI_Dist_graph_create, a multigraph (which the library
// leaves to MPI), Cartesian rings, a non-periodic 2-D grid with MPI_PROC_NULL neighbours, an
// MPI_Graph_create ring and a duplicate of the first graph.
// Each is exercised with computation between start and wait, MPI_Test polling, a second exchange
// in flight on MPI_COMM_WORLD waited first, and a blocking receive between start and wait on a
// peer that waits for the exchange first.
// Prints "ineighbor_check: N exchanges, M mismatches"; exits 1 on a mismatch.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

int g_exchanges = 0;
long g_mismatches = 0;

std::uint64_t key(int round, int from, int to) {
  return (static_cast<std::uint64_t>(round) << 40) ^ (static_cast<std::uint64_t>(from) << 20) ^
         static_cast<std::uint64_t>(to);
}

// Byte k of the block rank `from` sends to rank `to` in exchange `round`. A multigraph's repeated
// edges carry the same block: MPI does not say which of them meets which.
unsigned char byte_of(int round, int from, int to, int k) {
  return static_cast<unsigned char>(
      mpi_test::mix64(key(round, from, to) ^ (static_cast<std::uint64_t>(k) << 48)));
}

int count_of(int round, int from, int to) {
  mpi_test::Rng rng(key(round, from, to) * 31u + 17u);
  return rng.chance(15) ? 0 : 1 + rng.below(2500);
}

// One neighbourhood exchange in bytes (the vector form; `regular` sends `per` bytes per edge
// through MPI_Ineighbor_alltoall instead).
struct Nexchange {
  int round = 0, rank = 0;
  bool regular = false;
  mpi_test::Lists l;
  std::vector<int> sc, sd, rc, rd;
  std::vector<unsigned char> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;
  static constexpr int per = 640;

  void start(MPI_Comm comm, int r, bool regular_form) {
    round = r, regular = regular_form;
    int size = 0;
    mpi_test::rank_and_size(comm, rank, size);
    l = mpi_test::lists_of(comm);
    const std::size_t out = l.destinations.size(), in = l.sources.size();
    sc.assign(out, 0), sd.assign(out, 0), rc.assign(in, 0), rd.assign(in, 0);
    int st = 0, rt = 0;
    for (std::size_t i = 0; i < out; ++i) {
      sc[i] = regular ? per : count_of(round, rank, l.destinations[i]);
      sd[i] = st, st += sc[i] + (regular ? 0 : 3);
    }
    for (std::size_t j = 0; j < in; ++j) {
      rc[j] = regular ? per : count_of(round, l.sources[j], rank);
      rd[j] = rt, rt += rc[j] + (regular ? 0 : 5);
    }
    send.assign(static_cast<std::size_t>(st) + 1, 0xEE);
    recv.assign(static_cast<std::size_t>(rt) + 1, 0xCC);
    for (std::size_t i = 0; i < out; ++i)
      for (int k = 0; k < sc[i]; ++k)
        send[static_cast<std::size_t>(sd[i] + k)] = byte_of(round, rank, l.destinations[i], k);
    if (regular)
      MPI_Ineighbor_alltoall(send.data(), per, MPI_BYTE, recv.data(), per, MPI_BYTE, comm, &req);
    else
      MPI_Ineighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(),
                              rd.data(), MPI_BYTE, comm, &req);
  }

  void check() {
    ++g_exchanges;
    std::vector<unsigned char> want(recv.size(), 0xCC);
    for (std::size_t j = 0; j < l.sources.size(); ++j) {
      if (l.sources[j] == MPI_PROC_NULL) continue;  // MPI leaves that block alone
      for (int k = 0; k < rc[j]; ++k)
        want[static_cast<std::size_t>(rd[j] + k)] = byte_of(round, l.sources[j], rank, k);
    }
    for (std::size_t i = 0; i < want.size(); ++i) g_mismatches += want[i] != recv[i];
  }
};

// One MPI_Ialltoallv on MPI_COMM_WORLD, in flight beside a neighbourhood exchange.
struct Wexchange {
  int round = 0, rank = 0, size = 0;
  std::vector<int> counts, displs;
  std::vector<unsigned char> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;

  void start(int r) {
    round = r;
    mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
    counts.assign(static_cast<std::size_t>(size), 333);
    displs.assign(static_cast<std::size_t>(size), 0);
    for (int j = 0; j < size; ++j) displs[static_cast<std::size_t>(j)] = 333 * j;
    send.resize(static_cast<std::size_t>(333 * size));
    recv.assign(send.size(), 0xCC);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < 333; ++k) send[static_cast<std::size_t>(333 * j + k)] = byte_of(round, rank, j, k);
    MPI_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_BYTE, recv.data(), counts.data(),
                   displs.data(), MPI_BYTE, MPI_COMM_WORLD, &req);
  }

  void check() {
    ++g_exchanges;
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < 333; ++k)
        g_mismatches += recv[static_cast<std::size_t>(333 * j + k)] != byte_of(round, j, rank, k);
  }
};

// Edge a -> b of the irregular graph, `copies` times (0, 1, or 2 in the multigraph, where the
// ring's edges are doubled).
int copies(int a, int b, int n, bool multi) {
  if (b == (a + 1) % n) return multi ? 2 : 1;  // a ring keeps everyone connected
  const std::uint64_t h = mpi_test::mix64(static_cast<std::uint64_t>(a) * 1000003u + static_cast<std::uint64_t>(b));
  if (h % 3 == 0) return 0;
  return multi && h % 5 == 0 ? 2 : 1;
}

// The lists of rank `me`, each in a shuffled order (the order is the application's to choose).
mpi_test::Lists graph_lists(int me, int n, bool multi) {
  mpi_test::Lists l;
  for (int b = 0; b < n; ++b)
    for (int c = copies(me, b, n, multi); c > 0; --c) l.destinations.push_back(b);
  for (int a = 0; a < n; ++a)
    for (int c = copies(a, me, n, multi); c > 0; --c) l.sources.push_back(a);
  auto shuffle = [me](std::vector<int>& v, std::uint64_t salt) {
    std::stable_sort(v.begin(), v.end(), [&](int x, int y) {
      return mpi_test::mix64(salt ^ static_cast<std::uint64_t>(x) ^ (static_cast<std::uint64_t>(me) << 32)) <
             mpi_test::mix64(salt ^ static_cast<std::uint64_t>(y) ^ (static_cast<std::uint64_t>(me) << 32));
    });
  };
  shuffle(l.destinations, 11);
  shuffle(l.sources, 23);
  return l;
}

MPI_Comm adjacent_graph(int me, int n, bool multi) {
  mpi_test::Lists l = graph_lists(me, n, multi);
  return mpi_test::adjacent_graph_of(l);
}

// The same distinct graph, each rank naming only its own outgoing edges.
MPI_Comm general_graph(int me, int n) {
  mpi_test::Lists l = graph_lists(me, n, false);
  const int degree = static_cast<int>(l.destinations.size());
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &degree, l.destinations.data(), MPI_UNWEIGHTED,
                        MPI_INFO_NULL, 0, &g);
  return g;
}

// Every way of completing an exchange on `comm` (mpi_test::complete_four_ways), the polled one
// in the regular form, the second exchange an MPI_Ialltoallv on MPI_COMM_WORLD.
void exercise(MPI_Comm comm, int& round) {
  int started = 0;
  auto start = [&](int r) {
    Nexchange x;
    x.start(comm, r, started++ % 4 == 1);
    return x;
  };
  auto world = [](int r) {
    Wexchange w;
    w.start(r);
    return w;
  };
  mpi_test::complete_four_ways(start, world, round);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);

  std::vector<MPI_Comm> comms;
  comms.push_back(adjacent_graph(rank, size, false));
  comms.push_back(general_graph(rank, size));
  comms.push_back(adjacent_graph(rank, size, true));  // a multigraph: MPI's own call
  MPI_Comm ring = MPI_COMM_NULL, line = MPI_COMM_NULL, grid = MPI_COMM_NULL;
  const int periodic = 1, open = 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, size >= 3 ? &periodic : &open, 0, &ring);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &open, 0, &line);
  int dims[2] = {0, 0};
  const int periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  comms.push_back(ring);
  comms.push_back(line);
  comms.push_back(grid);
  std::vector<int> index, edges;  // MPI_Graph_create's undirected ring
  for (int r = 0; r < size; ++r) {
    edges.push_back((r + size - 1) % size);
    edges.push_back((r + 1) % size);
    index.push_back(static_cast<int>(edges.size()));
  }
  MPI_Comm undirected = MPI_COMM_NULL;
  MPI_Graph_create(MPI_COMM_WORLD, size, index.data(), edges.data(), 0, &undirected);
  comms.push_back(undirected);
  MPI_Comm copy = MPI_COMM_NULL;  // a duplicate keeps the topology
  MPI_Comm_dup(comms[0], &copy);
  comms.push_back(copy);

  int round = 0;
  for (int rep = 0; rep < 4; ++rep)
    for (MPI_Comm comm : comms) exercise(comm, round);

  long total = 0;
  int exchanges = 0;
  MPI_Reduce(&g_mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&g_exchanges, &exchanges, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  if (rank == 0) std::printf("ineighbor_check: %d exchanges, %ld mismatches\n", exchanges, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
