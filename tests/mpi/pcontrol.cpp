// MPI_Pcontrol pauses the library: pattern A runs `calls` times, then MPI_Pcontrol(0) (on every
// rank, or on one rank only with --pause-rank R), then A and a new pattern B `calls` times
// each, then MPI_Pcontrol(1) and A `calls` times again. Every call must equal PMPI_Alltoallv
// byte for byte; the checker (pcontrol_check.py) reads the report: the paused calls counted, B
// never learned, A optimised only outside the pause. Each of the three stretches also posts
// `calls` Isend/Irecv bursts (to and from 3 peers, checked): a paused rank's bursts are never
// held nor learned, so the report sees only the others.
//   pcontrol [--calls N] [--pause-rank R]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

// Pattern `which` (0: A, 1: B): irregular, some pairs silent.
int count_of(int i, int j, int which) {
  return (i + 2 * j + which) % 4 == 0 ? 0 : (1 + (i * 5 + j * 3 + which * 7) % 5) * 24;
}

// One call of pattern `which`, compared with PMPI_Alltoallv; true when equal.
bool exchange(int rank, int which, int call) {
  return mpi_test::alltoallv_as_pmpi(
      MPI_COMM_WORLD, [&](int i, int j) { return count_of(i, j, which); },
      [&](int k) { return static_cast<unsigned char>(rank * 29 + k * 11 + call); });
}

// One burst: receive from and send to the ranks 1, 2 and 3 away; true when what arrived is right.
bool burst(int rank, int size, int call) {
  constexpr int kPeers = 3, kLen = 64;
  std::vector<int> in(kPeers * kLen, -1), out(kPeers * kLen);
  MPI_Request reqs[2 * kPeers];
  for (int k = 0; k < kPeers; ++k) {
    const int from = ((rank - k - 1) % size + size) % size;
    MPI_Irecv(&in[k * kLen], kLen, MPI_INT, from, k, MPI_COMM_WORLD, &reqs[k]);
  }
  for (int k = 0; k < kPeers; ++k) {
    for (int e = 0; e < kLen; ++e) out[k * kLen + e] = (rank * 1000 + call) * kLen + e;
    MPI_Isend(&out[k * kLen], kLen, MPI_INT, (rank + k + 1) % size, k, MPI_COMM_WORLD,
              &reqs[kPeers + k]);
  }
  MPI_Waitall(2 * kPeers, reqs, MPI_STATUSES_IGNORE);
  bool ok = true;
  for (int k = 0; k < kPeers; ++k) {
    const int from = ((rank - k - 1) % size + size) % size;
    for (int e = 0; e < kLen; ++e) ok = ok && in[k * kLen + e] == (from * 1000 + call) * kLen + e;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  int calls = 12, pause_rank = -1;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--calls") == 0) calls = std::atoi(argv[a + 1]);
    if (std::strcmp(argv[a], "--pause-rank") == 0) pause_rank = std::atoi(argv[a + 1]);
  }
  const bool pauses = pause_rank < 0 || pause_rank == rank;
  int failures = 0, call = 0, paused = 0;
  int bursts = 0;
  for (int k = 0; k < calls; ++k) failures += !exchange(rank, 0, call++);
  for (int k = 0; k < calls; ++k) failures += !burst(rank, size, bursts++);
  if (pauses) MPI_Pcontrol(0);
  for (int k = 0; k < calls; ++k) failures += !exchange(rank, 0, call++);
  for (int k = 0; k < calls; ++k) failures += !exchange(rank, 1, call++);
  for (int k = 0; k < calls; ++k) failures += !burst(rank, size, bursts++);
  if (pauses) paused = 2 * calls;
  MPI_Pcontrol(1);
  for (int k = 0; k < calls; ++k) failures += !exchange(rank, 0, call++);
  for (int k = 0; k < calls; ++k) failures += !burst(rank, size, bursts++);
  int total_failures = 0, total_paused = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&paused, &total_paused, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("pcontrol: %d calls and %d bursts per rank, %d failed; paused=%d unpaused_a=%d\n",
                call, bursts, total_failures, total_paused, 2 * calls);
  MPI_Finalize();
  return total_failures == 0 ? 0 : 1;
}
