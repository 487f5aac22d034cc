// MPI_THREAD_MULTIPLE: the library learns and substitutes as at lower levels, and threads that
// call at once on different communicators get exactly native's bytes.
//   collectives  (a) the main thread alone calls MPI_Alltoallv and MPI_Alltoall on
//                MPI_COMM_WORLD, each with its own fixed irregular pattern; (b) two threads at
//                once, each on its own MPI_Comm_dup of MPI_COMM_WORLD, do the same. Every call
//                is compared byte for byte with PMPI_Alltoallv / PMPI_Alltoall on the same input.
//   bursts       the same two phases with Isend/Irecv bursts (every peer, irregular sizes,
//                completed by MPI_Waitall) compared with the data each sender wrote: the
//                library leaves bursts native under MPI_THREAD_MULTIPLE.
//
//   thread_multiple collectives|bursts [--calls N] [--scale K]
//
// --scale multiplies every count by K: longer calls, which auto's budget pays learning from.
// Prints "thread_multiple MODE: calls=N threads=2 mismatches=M" on rank 0; exits 1 on a
// mismatch, 77 (a skip) where MPI does not provide MPI_THREAD_MULTIPLE.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using mpi_test::mix64;

int scale = 1;  // --scale

// Elements (ints) rank i sends to rank j in stream s: irregular, some pairs empty.
int count(int s, int n, int i, int j) {
  const std::uint64_t h = mix64(static_cast<std::uint64_t>(s * 1000003 + i * n + j));
  return h % 4 == 0 ? 0 : static_cast<int>(1 + h % 61) * (s + 1) * scale;
}

// The value of element k that rank `from` sends rank `to` at call `call` of stream s.
int value(int s, int from, int to, int k, int call) {
  return static_cast<int>(mix64(static_cast<std::uint64_t>(((s * 64 + from) * 64 + to) * 4096 + k) ^
                                (static_cast<std::uint64_t>(call) << 40)) &
                          0x7fffffff);
}

struct Table {
  std::vector<int> sc, sd, rc, rd;
  int send_total = 0, recv_total = 0;
};

Table table(int s, int n, int rank) {
  Table t;
  for (int j = 0; j < n; ++j) {
    t.sc.push_back(count(s, n, rank, j));
    t.rc.push_back(count(s, n, j, rank));
    t.sd.push_back(t.send_total);
    t.rd.push_back(t.recv_total);
    t.send_total += t.sc.back();
    t.recv_total += t.rc.back();
  }
  return t;
}

// This rank's table of stream s on `comm`, with its rank and the communicator's size.
Table table_of(MPI_Comm comm, int s, int& rank, int& n) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  return table(s, n, rank);
}

// What `rank` sends at call `call` of stream s: block j for rank j, packed as `t` lays it out.
std::vector<int> send_data(const Table& t, int s, int rank, int call) {
  std::vector<int> send(static_cast<std::size_t>(t.send_total) + 1);
  for (std::size_t j = 0; j < t.sc.size(); ++j)
    for (int k = 0; k < t.sc[j]; ++k)
      send[static_cast<std::size_t>(t.sd[j] + k)] = value(s, rank, static_cast<int>(j), k, call);
  return send;
}

// `calls` MPI_Alltoallv and MPI_Alltoall on `comm` (stream s), each against PMPI's result.
long collectives(MPI_Comm comm, int s, int calls) {
  int rank = 0, n = 1;
  const Table t = table_of(comm, s, rank, n);
  const int block = (3 + s) * scale;  // MPI_Alltoall's block, in ints
  long bad = 0;
  for (int call = 0; call < calls; ++call) {
    const std::vector<int> send = send_data(t, s, rank, call);
    std::vector<int> got(static_cast<std::size_t>(t.recv_total) + 1, -1);
    std::vector<int> ref(got.size(), -1);
    MPI_Alltoallv(send.data(), t.sc.data(), t.sd.data(), MPI_INT, got.data(), t.rc.data(),
                  t.rd.data(), MPI_INT, comm);
    PMPI_Alltoallv(send.data(), t.sc.data(), t.sd.data(), MPI_INT, ref.data(), t.rc.data(),
                   t.rd.data(), MPI_INT, comm);
    if (std::memcmp(got.data(), ref.data(), got.size() * sizeof(int)) != 0) ++bad;

    const auto total = static_cast<std::size_t>(n * block);
    std::vector<int> a_send(total), a_got(total, -1), a_ref(total, -1);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < block; ++k)
        a_send[static_cast<std::size_t>(j * block + k)] = value(s + 16, rank, j, k, call);
    MPI_Alltoall(a_send.data(), block, MPI_INT, a_got.data(), block, MPI_INT, comm);
    PMPI_Alltoall(a_send.data(), block, MPI_INT, a_ref.data(), block, MPI_INT, comm);
    if (std::memcmp(a_got.data(), a_ref.data(), total * sizeof(int)) != 0) ++bad;
  }
  return bad;
}

// `calls` bursts on `comm`: an Irecv from and an Isend to every other rank, then MPI_Waitall;
// every element checked against what its sender wrote.
long bursts(MPI_Comm comm, int s, int calls) {
  int rank = 0, n = 1;
  const Table t = table_of(comm, s, rank, n);
  long bad = 0;
  for (int call = 0; call < calls; ++call) {
    const std::vector<int> send = send_data(t, s, rank, call);
    std::vector<int> got(static_cast<std::size_t>(t.recv_total) + 1, -1);
    std::vector<MPI_Request> reqs;
    for (int j = 0; j < n; ++j) {
      if (j == rank || t.rc[static_cast<std::size_t>(j)] == 0) continue;
      reqs.emplace_back();
      MPI_Irecv(got.data() + t.rd[static_cast<std::size_t>(j)], t.rc[static_cast<std::size_t>(j)],
                MPI_INT, j, 40 + s, comm, &reqs.back());
    }
    for (int j = 0; j < n; ++j) {
      if (j == rank || t.sc[static_cast<std::size_t>(j)] == 0) continue;
      reqs.emplace_back();
      MPI_Isend(send.data() + t.sd[static_cast<std::size_t>(j)], t.sc[static_cast<std::size_t>(j)],
                MPI_INT, j, 40 + s, comm, &reqs.back());
    }
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    for (int j = 0; j < n; ++j) {
      if (j == rank) continue;
      for (int k = 0; k < t.rc[static_cast<std::size_t>(j)]; ++k)
        if (got[static_cast<std::size_t>(t.rd[static_cast<std::size_t>(j)] + k)] !=
            value(s, j, rank, k, call)) {
          ++bad;
          break;
        }
    }
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int calls = 24;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--calls") == 0) {
      calls = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--scale") == 0) {
      scale = std::max(1, std::atoi(argv[i + 1]));
    }
  if (mode != "collectives" && mode != "bursts") {
    std::fprintf(stderr, "usage: thread_multiple collectives|bursts [--calls N]\n");
    return 2;
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Every rank got the same level from the same MPI; a transport without thread support is
  // a skip that says so, never a silent pass.
  int lowest = provided;
  MPI_Allreduce(&provided, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (lowest != MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::printf("thread_multiple %s: SKIP: MPI_Init_thread provided level %d, not "
                  "MPI_THREAD_MULTIPLE (%d)\n",
                  mode.c_str(), lowest, MPI_THREAD_MULTIPLE);
    MPI_Finalize();
    return 77;
  }
  auto run = [&](MPI_Comm comm, int s) {
    return mode == "collectives" ? collectives(comm, s, calls) : bursts(comm, s, calls);
  };
  // (a) one thread makes every call, as most mpi4py programs do.
  long bad = run(MPI_COMM_WORLD, 0);
  // (b) two threads at once, each on its own communicator (made here, in the same order on
  // every rank, as MPI requires of collective creation).
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  long bad_a = 0, bad_b = 0;
  std::thread ta([&] { bad_a = run(a, 1); });
  std::thread tb([&] { bad_b = run(b, 2); });
  ta.join();
  tb.join();
  bad += bad_a + bad_b;
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("thread_multiple %s: calls=%d threads=2 mismatches=%ld\n", mode.c_str(), calls,
                total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
