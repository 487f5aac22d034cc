// An intercommunicator, which the library leaves native with one notice; a job initialised
// with MPI_THREAD_MULTIPLE, where it learns as usual (only bursts stay native, with one notice);
// the same initialised through PMPI_Init_thread, which the library does not see, so that it
// stays native (it cannot check the settings across ranks there) and the report says why; and
// a job whose ranks see different COMMSCHED_SEED values (set here before MPI_Init from the
// launcher's rank variable), where every rank runs natively and the report says why. Each
// calls MPI_Alltoallv (intercepted when preloaded) enough times to be learned, and compares
// every byte with PMPI_Alltoallv on the same inputs.
//   native_cases intercomm | thread_multiple | thread_multiple_unseen | settings_differ
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Sends (1 + (src + dst) % 3) ints from every rank to every rank of the remote (or own) group.
int exchange_and_compare(MPI_Comm comm, int peers, int me, int calls) {
  int failures = 0;
  std::vector<int> sc(peers), sd(peers), rc(peers), rd(peers);
  int stotal = 0, rtotal = 0;
  for (int j = 0; j < peers; ++j) {
    sc[j] = 1 + (me + j) % 3;
    rc[j] = 1 + (j + me) % 3;
    sd[j] = stotal;
    rd[j] = rtotal;
    stotal += sc[j];
    rtotal += rc[j];
  }
  for (int call = 0; call < calls; ++call) {
    std::vector<int> send(stotal), got(rtotal, -1), ref(rtotal, -2);
    for (int j = 0; j < peers; ++j)
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = me * 100000 + j * 100 + k + call;
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(), rc.data(), rd.data(),
                  MPI_INT, comm);
    PMPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, ref.data(), rc.data(), rd.data(),
                   MPI_INT, comm);
    if (std::memcmp(got.data(), ref.data(), got.size() * sizeof(int)) != 0) {
      std::printf("native_cases: rank %d call %d differs from PMPI_Alltoallv\n", me, call);
      ++failures;
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "intercomm";
  const bool unseen = mode == "thread_multiple_unseen";
  const bool threads = mode == "thread_multiple" || unseen;
  if (mode == "settings_differ") {
    // Open MPI's and MPICH's launchers name each process's rank before MPI_Init.
    const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = std::getenv("PMI_RANK");
    setenv("COMMSCHED_SEED", r ? r : "0", 1);
  }
  int provided = 0;
  if (unseen) {
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else if (threads) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (threads && provided != MPI_THREAD_MULTIPLE) {  // a skip that says so, never a pass
    if (rank == 0) std::printf("native_cases %s: SKIP: no MPI_THREAD_MULTIPLE\n", mode.c_str());
    MPI_Finalize();
    return 77;
  }
  int failures = 0;
  if (threads || mode == "settings_differ") {
    failures = exchange_and_compare(MPI_COMM_WORLD, size, rank, 6);
  } else if (size >= 2) {
    // Two halves joined by an intercommunicator; ranks address the remote half.
    const int colour = rank < size / 2 ? 0 : 1;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &half);
    const int remote_leader = colour == 0 ? size / 2 : 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 7, &inter);
    int remote = 0, me = 0;
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm_rank(inter, &me);
    failures = exchange_and_compare(inter, remote, me, 6);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("native_cases %s: %s\n", mode.c_str(), total == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
