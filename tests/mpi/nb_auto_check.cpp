// COMMSCHED_NONBLOCKING=auto in the shape of a solver: each iteration starts an
// MPI_Ialltoallv (or, with --neighbor, an MPI_Ineighbor_alltoallv on a distributed graph) on a
// duplicate of MPI_COMM_WORLD, computes, reduces a dot product on another duplicate with
// MPI_Allreduce, then waits; every 10th iteration an MPI_Ialltoall runs on each rank's half of a
// split by rank parity. With --split halves the exchanges run on the halves instead (each half
// its own trial, summed as one) and the MPI_Ialltoall on the duplicate; with --split part on a
// split that leaves the last rank out (it makes no exchange; the trial ends MPI's own). Every
// received byte is checked against what the native call delivers, so ranks that ran different
// modes, or switched at different calls, show as mismatches or a hang.
//
// The program exports PMPI_Ialltoallv, PMPI_Ineighbor_alltoallv and PMPI_Isend (ENABLE_EXPORTS),
// so the preloaded library's calls land here first: --slow-native-us N makes every call the
// library passes to MPI N µs slower, --slow-engine-us N every send of the library's engine, so
// the trial has a clear answer to find (the application's own calls go straight to MPI).
//
// Prints "nb_auto_check: N exchanges, M mismatches"; exits 1 on a mismatch.
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_test_util.hpp"

using mpi_test::exchange_byte;

// Seen from the preloaded library whatever visibility the build gives (MPICH's mpi.h declares
// PMPI_* without one).
#define EXPORTED extern "C" __attribute__((visibility("default")))

namespace {

int g_slow_native_us = 0;
int g_slow_engine_us = 0;

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void pause_us(int us) {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

}  // namespace

EXPORTED int PMPI_Ialltoallv(const void* sb, const int* sc, const int* sd, MPI_Datatype st,
                               void* rb, const int* rc, const int* rd, MPI_Datatype rt,
                               MPI_Comm comm, MPI_Request* req) {
  using Fn = int (*)(const void*, const int*, const int*, MPI_Datatype, void*, const int*,
                     const int*, MPI_Datatype, MPI_Comm, MPI_Request*);
  static Fn real = next<Fn>("PMPI_Ialltoallv");
  pause_us(g_slow_native_us);
  return real(sb, sc, sd, st, rb, rc, rd, rt, comm, req);
}

EXPORTED int PMPI_Ineighbor_alltoallv(const void* sb, const int* sc, const int* sd,
                                        MPI_Datatype st, void* rb, const int* rc, const int* rd,
                                        MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  using Fn = int (*)(const void*, const int*, const int*, MPI_Datatype, void*, const int*,
                     const int*, MPI_Datatype, MPI_Comm, MPI_Request*);
  static Fn real = next<Fn>("PMPI_Ineighbor_alltoallv");
  pause_us(g_slow_native_us);
  return real(sb, sc, sd, st, rb, rc, rd, rt, comm, req);
}

EXPORTED int PMPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, MPI_Request* req) {
  using Fn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  static Fn real = next<Fn>("PMPI_Isend");
  pause_us(g_slow_engine_us);
  return real(buf, count, type, dest, tag, comm, req);
}

namespace {

long g_mismatches = 0;
int g_exchanges = 0;

// The pattern repeats every iteration (the bytes change): some pairs empty, the rest 1–2000 B.
int count_of(int from, int to) {
  mpi_test::Rng rng(static_cast<std::uint64_t>(from) * 131u + static_cast<std::uint64_t>(to));
  return rng.chance(25) ? 0 : 1 + rng.below(2000);
}

// One exchange with `peers` (all ranks, or a graph's neighbours in order).
struct Exchange {
  std::vector<int> peers;
  std::vector<int> sc, sd, rc, rd;
  std::vector<unsigned char> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;
  int round = 0, rank = 0;

  void start(MPI_Comm comm, bool neighbor, int r) {
    round = r;
    int size = 0;
    mpi_test::rank_and_size(comm, rank, size);
    const std::size_t n = peers.size();
    sc.assign(n, 0), sd.assign(n, 0), rc.assign(n, 0), rd.assign(n, 0);
    int st = 0, rt = 0;
    for (std::size_t j = 0; j < n; ++j) {
      sc[j] = count_of(rank, peers[j]), sd[j] = st, st += sc[j] + 3;
      rc[j] = count_of(peers[j], rank), rd[j] = rt, rt += rc[j] + 5;
    }
    send.assign(static_cast<std::size_t>(st) + 1, 0xEE);
    recv.assign(static_cast<std::size_t>(rt) + 1, 0xCC);
    for (std::size_t j = 0; j < n; ++j)
      for (int k = 0; k < sc[j]; ++k)
        send[static_cast<std::size_t>(sd[j] + k)] = exchange_byte(round, rank, peers[j], k);
    if (neighbor)
      MPI_Ineighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(),
                              rd.data(), MPI_BYTE, comm, &req);
    else
      MPI_Ialltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(),
                     rd.data(), MPI_BYTE, comm, &req);
  }

  void finish() {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (std::size_t j = 0; j < peers.size(); ++j)
      for (int k = 0; k < rc[j]; ++k)
        if (recv[static_cast<std::size_t>(rd[j] + k)] != exchange_byte(round, peers[j], rank, k))
          ++g_mismatches;
    ++g_exchanges;
  }
};

// MPI_Ialltoall on `comm`, 64 B per peer, checked.
void regular(MPI_Comm comm, int round) {
  int rank = 0, size = 0;
  mpi_test::rank_and_size(comm, rank, size);
  constexpr int kB = 64;
  std::vector<unsigned char> send(static_cast<std::size_t>(size) * kB), recv(send.size(), 0);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < kB; ++k)
      send[static_cast<std::size_t>(j * kB + k)] = exchange_byte(round, rank, j, k);
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Ialltoall(send.data(), kB, MPI_BYTE, recv.data(), kB, MPI_BYTE, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < kB; ++k)
      if (recv[static_cast<std::size_t>(j * kB + k)] != exchange_byte(round, j, rank, k)) ++g_mismatches;
  ++g_exchanges;
}

void spin_us(int us) {
  const double until = MPI_Wtime() + us * 1e-6;
  while (MPI_Wtime() < until) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int iterations = 300;
  bool neighbor = false;
  const char* split = "";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--neighbor")) neighbor = true;
    else if (!std::strcmp(argv[i], "--split") && i + 1 < argc) split = argv[++i];
    else if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--slow-native-us") && i + 1 < argc) g_slow_native_us = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--slow-engine-us") && i + 1 < argc) g_slow_engine_us = std::atoi(argv[++i]);
  }
  int rank = 0, size = 0;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);

  Exchange x;
  MPI_Comm work = MPI_COMM_NULL;
  MPI_Comm dots = MPI_COMM_NULL, half = MPI_COMM_NULL;
  if (!std::strcmp(split, "halves") || !std::strcmp(split, "part")) {
    const bool part = split[0] == 'p';
    MPI_Comm_split(MPI_COMM_WORLD, part ? (rank + 1 < size ? 0 : MPI_UNDEFINED) : rank % 2, rank,
                   &work);
    MPI_Comm_dup(MPI_COMM_WORLD, &dots);
    MPI_Comm_dup(MPI_COMM_WORLD, &half);  // the MPI_Ialltoall's
    int n = 0;
    if (work != MPI_COMM_NULL) MPI_Comm_size(work, &n);
    for (int j = 0; j < n; ++j) x.peers.push_back(j);
  } else if (neighbor) {
    // Every other rank, each once: sources and destinations alike, a graph without repeats.
    for (int k = 1; k < size; ++k) x.peers.push_back((rank - k + size) % size);
    const int degree = static_cast<int>(x.peers.size());
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, x.peers.data(), MPI_UNWEIGHTED,
                                   degree, x.peers.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &work);
  } else {
    for (int j = 0; j < size; ++j) x.peers.push_back(j);
    MPI_Comm_dup(MPI_COMM_WORLD, &work);
  }
  if (dots == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_WORLD, &dots);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  }

  double local = 0;
  for (int it = 0; it < iterations; ++it) {
    if (work != MPI_COMM_NULL) x.start(work, neighbor, it);
    spin_us(50);
    local += 1.0;
    double global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, dots);
    if (global != local * size) ++g_mismatches;
    if (work != MPI_COMM_NULL) x.finish();
    if (it % 10 == 0) regular(half, it);
  }

  MPI_Comm_free(&half);
  MPI_Comm_free(&dots);
  if (work != MPI_COMM_NULL) MPI_Comm_free(&work);
  long total = 0;
  MPI_Allreduce(&g_mismatches, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("nb_auto_check: %d exchanges, %ld mismatches\n", g_exchanges, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
