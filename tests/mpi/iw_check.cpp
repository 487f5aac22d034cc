// MPI_Ialltoallw and MPI_Ineighbor_alltoallw as applications use them, every received int
// checked against what the native call delivers: each block with its own datatype on each side
// (plain ints, or strided vectors of stride 2 or 3, chosen per pair and differently by sender
// and receiver), the types freed right after the call, empty blocks, displacements in bytes with
// gaps between blocks. On MPI_COMM_WORLD, a split of it, an irregular distributed graph with its
// lists in shuffled order, a non-periodic 2-D grid with MPI_PROC_NULL neighbours and a
// multigraph (which the library leaves to MPI); each with computation between start and wait,
// MPI_Test polling, a second exchange in flight on MPI_COMM_WORLD waited first, and a blocking
// receive between start and wait on a peer that waits for the exchange first. Then, where the
// MPI has them, the persistent forms (MPI_Alltoallw_init, MPI_Neighbor_alltoallw_init, or Open
// MPI's MPIX_ ones) bound on each, started three times with new data.
// Prints "iw_check: N exchanges, M mismatches"; exits 1 on a mismatch.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

int g_exchanges = 0;
long g_mismatches = 0;
constexpr int kCanary = -7;

std::uint64_t key(int round, int from, int to) {
  return (static_cast<std::uint64_t>(round) << 40) ^ (static_cast<std::uint64_t>(from) << 20) ^
         static_cast<std::uint64_t>(to);
}

// Int k of the block rank `from` sends to rank `to` in exchange `round`.
int value_of(int round, int from, int to, int k) {
  const std::uint64_t h =
      mpi_test::mix64(key(round, from, to) ^ (static_cast<std::uint64_t>(k) << 48));
  return static_cast<int>(h & 0x3fffffff);
}

int count_of(int round, int from, int to) {
  mpi_test::Rng rng(key(round, from, to) * 31u + 5u);
  return rng.chance(25) ? 0 : 1 + rng.below(700);
}

// One side's block: `count` ints, every `stride`-th int of the buffer from `at` (in ints).
struct Layout {
  int count = 0, stride = 1, at = 0;
  MPI_Datatype type = MPI_INT;  // MPI_INT (count ints) or a vector (one element)
  int type_count() const { return stride == 1 ? count : (count > 0 ? 1 : 0); }
  int span() const { return count == 0 ? 0 : (count - 1) * stride + 1; }
};

// Lays out blocks of `counts` with strides chosen by `salt`, 3 ints free before and between.
std::vector<Layout> lay_out(const std::vector<int>& counts, std::uint64_t salt, int& ints) {
  std::vector<Layout> l(counts.size());
  ints = 3;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    l[i].count = counts[i];
    l[i].stride = 1 + static_cast<int>(mpi_test::mix64(salt + i) % 3);
    l[i].at = ints;
    ints += l[i].span() + 3;
    if (l[i].stride > 1 && l[i].count > 0) {
      MPI_Type_vector(l[i].count, 1, l[i].stride, MPI_INT, &l[i].type);
      MPI_Type_commit(&l[i].type);
    }
  }
  return l;
}

// One exchange: MPI_Ialltoallw on `comm` (block j is rank j's) or, with `neighbourhood`,
// MPI_Ineighbor_alltoallw (block i goes to the i-th destination, comes from the i-th source).
struct Wexchange {
  int round = 0, rank = 0;
  mpi_test::Lists l;
  std::vector<Layout> out, in;
  std::vector<int> send, recv;
  // The call's arrays, which MPI may read until the exchange completes.
  std::vector<int> scount, rcount, sd, rd;
  std::vector<MPI_Aint> sda, rda;
  std::vector<MPI_Datatype> st, rt;
  MPI_Request req = MPI_REQUEST_NULL;

  void start(MPI_Comm comm, int r, bool neighbourhood) { call(comm, r, neighbourhood, false); }

  // Lays out the blocks of exchange `r` and makes the call, or (`persistent`) binds it.
  void call(MPI_Comm comm, int r, bool neighbourhood, bool persistent) {
    round = r;
    int size = 0;
    mpi_test::rank_and_size(comm, rank, size);
    if (neighbourhood) {
      l = mpi_test::lists_of(comm);
    } else {
      l.destinations.resize(static_cast<std::size_t>(size));
      std::iota(l.destinations.begin(), l.destinations.end(), 0);
      l.sources = l.destinations;
    }
    std::vector<int> sc, rc;
    for (int to : l.destinations) sc.push_back(count_of(round, rank, to));
    for (int from : l.sources) rc.push_back(count_of(round, from, rank));
    int send_ints = 0, recv_ints = 0;
    out = lay_out(sc, key(round, rank, 1), send_ints);
    in = lay_out(rc, key(round, rank, 2), recv_ints);
    send.assign(static_cast<std::size_t>(send_ints), -1);
    recv.assign(static_cast<std::size_t>(recv_ints), kCanary);
    for (std::size_t i = 0; i < out.size(); ++i)
      for (int k = 0; k < out[i].count; ++k)
        send[static_cast<std::size_t>(out[i].at + k * out[i].stride)] =
            value_of(round, rank, l.destinations[i], k);
    for (const Layout& b : out) {
      scount.push_back(b.type_count());
      sd.push_back(b.at * static_cast<int>(sizeof(int)));
      sda.push_back(static_cast<MPI_Aint>(b.at * sizeof(int)));
      st.push_back(b.type);
    }
    for (const Layout& b : in) {
      rcount.push_back(b.type_count());
      rd.push_back(b.at * static_cast<int>(sizeof(int)));
      rda.push_back(static_cast<MPI_Aint>(b.at * sizeof(int)));
      rt.push_back(b.type);
    }
    if (persistent)
      bind(comm, neighbourhood);
    else if (neighbourhood)
      MPI_Ineighbor_alltoallw(send.data(), scount.data(), sda.data(), st.data(), recv.data(),
                              rcount.data(), rda.data(), rt.data(), comm, &req);
    else
      MPI_Ialltoallw(send.data(), scount.data(), sd.data(), st.data(), recv.data(),
                     rcount.data(), rd.data(), rt.data(), comm, &req);
    // The application may free its types at once; the exchange must not need them. A bound
    // exchange may use them at every start (Open MPI's own does): freed with its request.
    if (!persistent) free_types();
  }

  void free_types() {
    for (auto* side : {&out, &in})
      for (Layout& b : *side)
        if (b.type != MPI_INT) MPI_Type_free(&b.type);
  }

  void bind(MPI_Comm comm, bool neighbourhood) {
#ifdef PCOLL
    if (neighbourhood)
      PCOLL(Neighbor_alltoallw_init)(send.data(), scount.data(), sda.data(), st.data(),
                                     recv.data(), rcount.data(), rda.data(), rt.data(), comm,
                                     MPI_INFO_NULL, &req);
    else
      PCOLL(Alltoallw_init)(send.data(), scount.data(), sd.data(), st.data(), recv.data(),
                            rcount.data(), rd.data(), rt.data(), comm, MPI_INFO_NULL, &req);
#else
    (void)comm, (void)neighbourhood;
#endif
  }

  // A bound exchange started again as exchange `r`: the same blocks, new data.
  void restart(int r) {
    round = r;
    for (std::size_t i = 0; i < out.size(); ++i)
      for (int k = 0; k < out[i].count; ++k)
        send[static_cast<std::size_t>(out[i].at + k * out[i].stride)] =
            value_of(round, rank, l.destinations[i], k);
    std::fill(recv.begin(), recv.end(), kCanary);
    MPI_Start(&req);
  }

  void check() {
    ++g_exchanges;
    std::vector<int> want(recv.size(), kCanary);
    for (std::size_t j = 0; j < in.size(); ++j) {
      if (l.sources[j] == MPI_PROC_NULL) continue;  // MPI leaves that block alone
      for (int k = 0; k < in[j].count; ++k)
        want[static_cast<std::size_t>(in[j].at + k * in[j].stride)] =
            value_of(round, l.sources[j], rank, k);
    }
    for (std::size_t i = 0; i < want.size(); ++i) g_mismatches += want[i] != recv[i];
  }
};

// Edge a -> b of the irregular graph, `copies` times (doubled ring edges in the multigraph).
int copies(int a, int b, int n, bool multi) {
  if (b == (a + 1) % n) return multi ? 2 : 1;
  const std::uint64_t h =
      mpi_test::mix64(static_cast<std::uint64_t>(a) * 1000003u + static_cast<std::uint64_t>(b));
  return h % 3 == 0 ? 0 : 1;
}

MPI_Comm graph(int me, int n, bool multi) {
  mpi_test::Lists l;
  for (int b = 0; b < n; ++b)
    for (int c = copies(me, b, n, multi); c > 0; --c) l.destinations.push_back(b);
  for (int a = 0; a < n; ++a)
    for (int c = copies(a, me, n, multi); c > 0; --c) l.sources.push_back(a);
  std::reverse(l.destinations.begin(), l.destinations.end());  // the application's order
  std::rotate(l.sources.begin(), l.sources.begin() + static_cast<long>(l.sources.size() / 2),
              l.sources.end());
  return mpi_test::adjacent_graph_of(l);
}

// Every way of completing an exchange on `comm`, the second exchange on MPI_COMM_WORLD.
void exercise(MPI_Comm comm, bool neighbourhood, int& round) {
  auto on = [](MPI_Comm where, bool neighbourhood_form) {
    return [where, neighbourhood_form](int r) {
      Wexchange x;
      x.start(where, r, neighbourhood_form);
      return x;
    };
  };
  mpi_test::complete_four_ways(on(comm, neighbourhood), on(MPI_COMM_WORLD, false), round);
#ifdef PCOLL
  // The persistent form: bound once, started three times with new data, the last start in
  // flight beside an exchange on MPI_COMM_WORLD.
  Wexchange p;
  p.call(comm, ++round, neighbourhood, true);
  for (int start = 0; start < 3; ++start) {
    p.restart(++round);
    if (start == 2) {
      Wexchange w = on(MPI_COMM_WORLD, false)(++round);
      MPI_Wait(&w.req, MPI_STATUS_IGNORE);
      w.check();
    }
    MPI_Wait(&p.req, MPI_STATUS_IGNORE);
    p.check();
  }
  MPI_Request_free(&p.req);
  p.free_types();
#endif
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);

  MPI_Comm half = MPI_COMM_NULL, grid = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  int dims[2] = {0, 0};
  const int periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Comm distinct = graph(rank, size, false), multi = graph(rank, size, true);

  int round = 0;
  for (int rep = 0; rep < 3; ++rep) {
    exercise(MPI_COMM_WORLD, false, round);
    exercise(half, false, round);
    exercise(distinct, true, round);
    exercise(grid, true, round);
    exercise(multi, true, round);  // MPI's own call
  }

  long total = 0;
  int exchanges = 0;
  MPI_Reduce(&g_mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&g_exchanges, &exchanges, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  for (MPI_Comm* comm : {&half, &grid, &distinct, &multi}) MPI_Comm_free(comm);
  if (rank == 0) std::printf("iw_check: %d exchanges, %ld mismatches\n", exchanges, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
