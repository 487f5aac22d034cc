// Counts the collectives the library issues while an application's MPI_Alltoallv counts change
// on every call (nothing to learn): the library must not agree on every call, and must not
// set up a private communicator it never uses. This program defines the PMPI collectives the
// library calls (exported: ENABLE_EXPORTS), so the preloaded library's calls land here first,
// are counted, and go on to MPI's own.
//
// It also counts the library's clock reads (PMPI_Wtime): a call that only runs MPI's own reads
// the clock on one call in several, not twice on every call.
//
//   collectives_per_call --calls N --max-per-call F [--same-counts] [--max-clock-per-call C]
//                        [--max-communicators M]
// prints "collectives_per_call: N calls, K library collectives, D communicators created, W
// wrong values, R clock reads" and fails when K > F * N, D > M (default 0) or R > C * N.
// --same-counts keeps the counts of the first call (a pattern that repeats).
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Seen from the preloaded library whatever visibility the build gives (MPICH's mpi.h declares
// PMPI_* without one).
#define EXPORTED extern "C" __attribute__((visibility("default")))

namespace {
long long collectives = 0;
long long communicators = 0;  // created by the library
long long clock_reads = 0;

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
}  // namespace

EXPORTED int PMPI_Allreduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o,
                              MPI_Comm m) {
  using Fn = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
  static Fn real = next<Fn>("PMPI_Allreduce");
  ++collectives;
  return real(s, r, c, t, o, m);
}

EXPORTED int PMPI_Iallreduce(const void* s, void* r, int c, MPI_Datatype t, MPI_Op o,
                               MPI_Comm m, MPI_Request* q) {
  using Fn = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*);
  static Fn real = next<Fn>("PMPI_Iallreduce");
  ++collectives;
  return real(s, r, c, t, o, m, q);
}

EXPORTED int PMPI_Bcast(void* b, int c, MPI_Datatype t, int root, MPI_Comm m) {
  using Fn = int (*)(void*, int, MPI_Datatype, int, MPI_Comm);
  static Fn real = next<Fn>("PMPI_Bcast");
  ++collectives;
  return real(b, c, t, root, m);
}

EXPORTED int PMPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                              MPI_Datatype rt, MPI_Comm m) {
  using Fn = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  static Fn real = next<Fn>("PMPI_Allgather");
  ++collectives;
  return real(s, sc, st, r, rc, rt, m);
}

EXPORTED int PMPI_Comm_dup(MPI_Comm m, MPI_Comm* out) {
  using Fn = int (*)(MPI_Comm, MPI_Comm*);
  static Fn real = next<Fn>("PMPI_Comm_dup");
  ++collectives;
  ++communicators;
  return real(m, out);
}

EXPORTED int PMPI_Comm_split_type(MPI_Comm m, int type, int key, MPI_Info info,
                                    MPI_Comm* out) {
  using Fn = int (*)(MPI_Comm, int, int, MPI_Info, MPI_Comm*);
  static Fn real = next<Fn>("PMPI_Comm_split_type");
  ++collectives;
  ++communicators;
  return real(m, type, key, info, out);
}

EXPORTED double PMPI_Wtime() {
  using Fn = double (*)();
  static Fn real = next<Fn>("PMPI_Wtime");
  ++clock_reads;
  return real();
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int calls = 500;
  double max_per_call = 0.1, max_clock_per_call = -1;
  long long max_communicators = 0;
  bool same_counts = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--same-counts") == 0) {
      same_counts = true;
      continue;
    }
    if (i + 1 >= argc) break;
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-per-call") == 0) max_per_call = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-clock-per-call") == 0)
      max_clock_per_call = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-communicators") == 0)
      max_communicators = std::atoll(argv[i + 1]);
    ++i;
  }
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  const long long before = collectives, created_before = communicators, clock_before = clock_reads;
  int wrong = 0;
  for (int call = 0; call < calls; ++call) {
    // Counts redrawn every call (from the call index, so senders and receivers agree).
    const int drawn = same_counts ? 0 : call;
    auto count = [drawn](int i, int j) { return (i * 7 + j * 13 + drawn * 31) % 9; };
    int st = 0, rt = 0;
    for (int j = 0; j < n; ++j) {
      sc[j] = count(rank, j), rc[j] = count(j, rank);
      sd[j] = st, rd[j] = rt;
      st += sc[j], rt += rc[j];
    }
    std::vector<int> send(static_cast<std::size_t>(st)), recv(static_cast<std::size_t>(rt), -1);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < sc[j]; ++k) send[static_cast<std::size_t>(sd[j] + k)] = rank * 1000 + j * 10 + k + call;
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, recv.data(), rc.data(), rd.data(),
                  MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < rc[j]; ++k)
        if (recv[static_cast<std::size_t>(rd[j] + k)] != j * 1000 + rank * 10 + k + call) ++wrong;
  }
  const long long mine = collectives - before, created = communicators - created_before;
  const long long reads = clock_reads - clock_before;
  long long most = 0, created_most = 0, reads_most = 0;
  int wrong_all = 0;
  PMPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  PMPI_Allreduce(&created, &created_most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  PMPI_Allreduce(&reads, &reads_most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  PMPI_Allreduce(&wrong, &wrong_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  const bool ok = wrong_all == 0 && static_cast<double>(most) <= max_per_call * calls &&
                  created_most <= max_communicators &&
                  (max_clock_per_call < 0 ||
                   static_cast<double>(reads_most) <= max_clock_per_call * calls);
  if (rank == 0)
    std::printf(
        "collectives_per_call: %d calls, %lld library collectives, %lld communicators created, "
        "%d wrong values, %lld clock reads%s\n",
        calls, most, created_most, wrong_all, reads_most, ok ? "" : " (FAIL)");
  return ok ? 0 : 1;
}
