// MPI_Ialltoallv and MPI_Ialltoall as applications use them, every received byte checked
// against what the native call delivers (each byte says which rank sent it to whom, where):
// computation between start and wait, MPI_Test polling, two exchanges in flight on two
// communicators waited in either order, MPI_Waitall and MPI_Waitany over a mix of the
// application's own requests and the exchanges, a derived datatype freed right after the call,
// sparse counts, and the programs that deadlock if a rank holds its sends while it blocks
// elsewhere (a blocking receive, a receive waited for, a barrier or MPI_Comm_create between start
// and wait).
// Prints "nonblocking_check: N exchanges, M mismatches"; exits 1 on a mismatch.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mpi_test_util.hpp"

using mpi_test::exchange_byte;

namespace {

int g_exchanges = 0;
long g_mismatches = 0;

// One MPI_Ialltoallv in bytes: counts drawn per (round, pair), some pairs empty.
struct Vexchange {
  int round = 0, rank = 0, size = 0;
  std::vector<int> sc, sd, rc, rd;
  std::vector<unsigned char> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;

  static int count(int round, int from, int to) {
    mpi_test::Rng rng(static_cast<std::uint64_t>(round) * 7919u + static_cast<std::uint64_t>(from) * 131u +
                      static_cast<std::uint64_t>(to));
    return rng.chance(30) ? 0 : 1 + rng.below(3000);
  }

  void start(MPI_Comm comm, int r) {
    round = r;
    mpi_test::rank_and_size(comm, rank, size);
    sc.assign(size, 0), sd.assign(size, 0), rc.assign(size, 0), rd.assign(size, 0);
    int st = 0, rt = 0;
    for (int j = 0; j < size; ++j) {
      sc[j] = count(round, rank, j), sd[j] = st, st += sc[j] + 5;  // gaps between blocks
      rc[j] = count(round, j, rank), rd[j] = rt, rt += rc[j] + 7;
    }
    send.assign(static_cast<std::size_t>(st) + 1, 0xEE);
    recv.assign(static_cast<std::size_t>(rt) + 1, 0xCC);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < sc[j]; ++k) send[static_cast<std::size_t>(sd[j] + k)] = exchange_byte(round, rank, j, k);
    MPI_Ialltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                   MPI_BYTE, comm, &req);
  }

  void check() {
    ++g_exchanges;
    std::vector<unsigned char> want(recv.size(), 0xCC);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < rc[j]; ++k) want[static_cast<std::size_t>(rd[j] + k)] = exchange_byte(round, j, rank, k);
    for (std::size_t i = 0; i < want.size(); ++i) g_mismatches += want[i] != recv[i];
  }
};

// MPI_Ialltoall of `per` doubles per peer through a strided type (every other double of the
// send buffer), the type freed right after the call.
void strided_alltoall(MPI_Comm comm, int round) {
  int rank = 0, size = 0;
  mpi_test::rank_and_size(comm, rank, size);
  const int per = 300;
  std::vector<double> send(static_cast<std::size_t>(2 * per * size), -1.0), recv(static_cast<std::size_t>(per * size) + 1, -2.0);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < per; ++k) send[static_cast<std::size_t>(2 * (j * per + k))] = round * 1e6 + rank * 1e3 + j + k * 1e-3;
  MPI_Datatype every_other = MPI_DATATYPE_NULL, block = MPI_DATATYPE_NULL;
  MPI_Type_vector(per, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_create_resized(every_other, 0, static_cast<MPI_Aint>(2 * per * sizeof(double)), &block);
  MPI_Type_commit(&block);
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Ialltoall(send.data(), 1, block, recv.data(), per, MPI_DOUBLE, comm, &req);
  MPI_Type_free(&block);
  MPI_Type_free(&every_other);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  ++g_exchanges;
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < per; ++k)
      g_mismatches += recv[static_cast<std::size_t>(j * per + k)] != round * 1e6 + j * 1e3 + rank + k * 1e-3;
  g_mismatches += recv.back() != -2.0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  MPI_Comm half = MPI_COMM_NULL;  // a second communicator, made by a split
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  int round = 0;
  volatile double sink = 0;

  for (int rep = 0; rep < 6; ++rep) {
    // Start, compute, wait.
    Vexchange a;
    a.start(MPI_COMM_WORLD, ++round);
    sink = sink + mpi_test::busy(20000);
    MPI_Wait(&a.req, MPI_STATUS_IGNORE);
    a.check();

    // Polling with MPI_Test.
    Vexchange b;
    b.start(MPI_COMM_WORLD, ++round);
    for (int flag = 0; !flag;) MPI_Test(&b.req, &flag, MPI_STATUS_IGNORE);
    b.check();

    // Two in flight on two communicators, waited in the order opposite to their start.
    Vexchange c, d;
    c.start(MPI_COMM_WORLD, ++round);
    d.start(half, ++round);
    MPI_Wait(&d.req, MPI_STATUS_IGNORE);
    MPI_Wait(&c.req, MPI_STATUS_IGNORE);
    c.check();
    d.check();

    // Waitany and Waitall over the application's ring messages and two exchanges.
    Vexchange e, f;
    e.start(half, ++round);
    f.start(MPI_COMM_WORLD, ++round);
    int token_out = rank * 10 + rep, token_in = -1;
    MPI_Request mix[4] = {MPI_REQUEST_NULL, e.req, MPI_REQUEST_NULL, f.req};
    MPI_Irecv(&token_in, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &mix[0]);
    MPI_Isend(&token_out, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &mix[2]);
    for (int done = 0; done < 2; ++done) {
      int index = MPI_UNDEFINED;
      MPI_Waitany(4, mix, &index, MPI_STATUS_IGNORE);
    }
    MPI_Waitall(4, mix, MPI_STATUSES_IGNORE);
    e.check();
    f.check();
    g_mismatches += token_in != ((rank + size - 1) % size) * 10 + rep;

    // A rank blocks elsewhere before its wait, on a peer that waits for the exchange first.
    Vexchange g;
    g.start(MPI_COMM_WORLD, ++round);
    mpi_test::wait_behind_receive(g.req, 9);
    g.check();
    int word = rep;

    // The same through a receive the application waits for, and a barrier on the other
    // communicator between start and wait.
    Vexchange h;
    h.start(MPI_COMM_WORLD, ++round);
    if (rank == 0) {
      MPI_Wait(&h.req, MPI_STATUS_IGNORE);
      MPI_Send(&word, 1, MPI_INT, 1 % size, 11, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Request r = MPI_REQUEST_NULL;
      MPI_Irecv(&word, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Wait(&h.req, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(half);
      MPI_Wait(&h.req, MPI_STATUS_IGNORE);
    }
    if (rank < 2 && size > 1) MPI_Barrier(half);  // the barrier the others made
    h.check();

    strided_alltoall(half, ++round);

    // Another collective the library does not otherwise handle, between start and wait: every
    // rank but 0 makes a communicator (MPI_Comm_create) before its wait, rank 0 after.
    Vexchange k;
    k.start(MPI_COMM_WORLD, ++round);
    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (rank == 0) MPI_Wait(&k.req, MPI_STATUS_IGNORE);
    MPI_Comm_create(MPI_COMM_WORLD, world_group, &made);
    if (rank != 0) MPI_Wait(&k.req, MPI_STATUS_IGNORE);
    k.check();
    MPI_Comm_free(&made);
    MPI_Group_free(&world_group);
  }

  long total = 0;
  int exchanges = 0;
  MPI_Reduce(&g_mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&g_exchanges, &exchanges, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  if (rank == 0) std::printf("nonblocking_check: %d exchanges, %ld mismatches\n", exchanges, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
