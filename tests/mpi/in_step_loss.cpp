// Word of packet loss reaching communicators that wait for it. The library reads the node's
// TCP retransmission count from COMMSCHED_IN_STEP_NETSTAT; this program writes that file
// itself: a count of 0 before MPI_Init, and a higher count on rank 0 at call `at`, as a node
// whose queue overflowed would show. Two communicators (MPI_COMM_WORLD and its ranks in reverse
// order, so any rank count has both) make irregular exchanges, `pause_ms` apart in turn (each
// communicator's calls twice that apart): both gauge with no word of loss and watch; once rank
// 0's count rises they must join the in-step trial on every rank at the same call, run it and
// decide, with no rank left waiting and every call equal to PMPI_Alltoallv byte for byte. The
// gauge keeps a communicator out where a barrier costs more than 5 % of its calls' period, so
// on a loaded machine the calls must be far enough apart.
//   in_step_loss [calls] [at] [pause_ms]
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

// Writes the netstat lines with `count` retransmission timeouts to `path`, whole: a file of
// this process's own, renamed onto it, so a reader never sees half of it.
bool write_count(const std::string& path, long long count) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\nTcpExt: 0 %lld 0\n", count);
  return std::fclose(f) == 0 && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Rank i sends (1 + (i*5 + j*3 + salt) % 7) * 32 bytes to j where (i + j + salt) % 4 != 0.
int count_of(int i, int j, int salt) {
  return (i + j + salt) % 4 == 0 ? 0 : (1 + (i * 5 + j * 3 + salt) % 7) * 32;
}

// One exchange through the library and the same through MPI's own; 1 when they differ.
int exchange(MPI_Comm comm, int salt, int call) {
  int rank = 0, size = 1;
  mpi_test::rank_and_size(comm, rank, size);
  return mpi_test::alltoallv_as_pmpi(
             comm, [&](int i, int j) { return count_of(i, j, salt); },
             [&](int k) { return static_cast<unsigned char>(rank * 13 + k * 7 + call); })
             ? 0
             : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path_env = std::getenv("COMMSCHED_IN_STEP_NETSTAT");
  const std::string path = path_env != nullptr ? path_env : "";
  // Every rank writes the same count of 0 before the library reads it at MPI_Init.
  if (path.empty() || !write_count(path, 0)) {
    std::fprintf(stderr, "in_step_loss: set COMMSCHED_IN_STEP_NETSTAT to a writable path\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  const int calls = argc > 1 ? std::atoi(argv[1]) : 60;
  const int at = argc > 2 ? std::atoi(argv[2]) : 15;
  const int pause_us = 1000 * (argc > 3 ? std::atoi(argv[3]) : 100);
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  int failures = 0;
  for (int call = 0; call < calls; ++call) {
    if (rank == 0 && call == at && !write_count(path, 3)) {
      std::printf("in_step_loss: could not write %s\n", path.c_str());
      ++failures;
    }
    failures += exchange(MPI_COMM_WORLD, 0, call);
    ::usleep(static_cast<useconds_t>(pause_us));
    failures += exchange(reversed, 1, call);
    ::usleep(static_cast<useconds_t>(pause_us));
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("in_step_loss: %d calls, %d mismatches\n", calls, total);
  MPI_Comm_free(&reversed);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
