// Legal programs the library must leave exactly as native (issue "Safe in every legal
// program"), one case per argument, each checking every call's data against PMPI's own
// MPI_Alltoallv and printing "comm_safety CASE: ok" on rank 0:
//   disconnect  a communicator released by MPI_Comm_disconnect, then others of other sizes
//               (Open MPI hands out the freed handle again): no stale state, no hang;
//   errors      MPI_ERRORS_RETURN on the communicator, then a negative count and
//               MPI_DATATYPE_NULL after the pattern was learned: the error classes equal those
//               PMPI_Alltoallv returns for the same arguments;
//   device      buffers the CUDA driver stand-in (tests/unit/device_shim.cpp) calls device
//               memory on one rank: those calls run natively on every rank, which the report
//               read back after MPI_Finalize shows (device_calls, calls_optimised).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" void commsched_shim_mark_device(const void* p, std::size_t bytes);
extern "C" void commsched_shim_clear();

namespace {

int failures = 0;

// An irregular pattern over `comm`'s ranks: rank i sends (i + 2j) % 5 + 1 ints to rank j,
// the values a function of (i, j, k, call).
struct Exchange {
  std::vector<int> sc, sd, rc, rd, send, recv, want;
  Exchange(MPI_Comm comm, int call) {
    int r = 0, n = 1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    sc.resize(n), sd.resize(n), rc.resize(n), rd.resize(n);
    int st = 0, rt = 0;
    for (int j = 0; j < n; ++j) {
      sc[j] = (r + 2 * j) % 5 + 1;
      rc[j] = (j + 2 * r) % 5 + 1;
      sd[j] = st, rd[j] = rt;
      st += sc[j], rt += rc[j];
    }
    send.resize(st);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = ((r * 131 + j) * 17 + k) * 7 + call;
    recv.assign(rt, -1);
    want.assign(rt, -2);
  }
  // The same exchange through PMPI (never intercepted): the reference.
  void reference(MPI_Comm comm) {
    PMPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, want.data(), rc.data(), rd.data(),
                   MPI_INT, comm);
  }
  int run(MPI_Comm comm) {
    return MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, recv.data(), rc.data(),
                         rd.data(), MPI_INT, comm);
  }
};

void check(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "comm_safety: %s\n", what);
  }
}

void exchange_calls(MPI_Comm comm, int calls) {
  for (int call = 0; call < calls; ++call) {
    Exchange x(comm, call);
    x.reference(comm);
    check(x.run(comm) == MPI_SUCCESS, "MPI_Alltoallv failed");
    check(x.recv == x.want, "received data differs from PMPI_Alltoallv's");
  }
}

void disconnect_case() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int round = 0; round < 4; ++round) {
    // Alternately all ranks and a split in halves: sizes change while handles get reused.
    MPI_Comm c = MPI_COMM_NULL;
    if (round % 2 == 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    } else {
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
    }
    exchange_calls(c, 8);
    MPI_Comm_disconnect(&c);
    check(c == MPI_COMM_NULL, "MPI_Comm_disconnect left a handle");
  }
}

int error_class(int rc) {
  int cls = 0;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

void errors_case(int rank) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  exchange_calls(c, 8);  // learned and, preloaded, substituted
  // Every rank passes the same bad argument; MPI rejects it before moving anything, so the
  // PMPI call with the same arguments gives native's error class to compare with.
  for (const char* bad : {"negative count", "MPI_DATATYPE_NULL"}) {
    Exchange x(c, 99);
    MPI_Datatype type = MPI_INT;
    if (std::strcmp(bad, "negative count") == 0) x.sc[0] = -1;
    else type = MPI_DATATYPE_NULL;
    const int native = error_class(PMPI_Alltoallv(x.send.data(), x.sc.data(), x.sd.data(), type,
                                                  x.want.data(), x.rc.data(), x.rd.data(), MPI_INT,
                                                  c));
    const int got = error_class(MPI_Alltoallv(x.send.data(), x.sc.data(), x.sd.data(), type,
                                              x.recv.data(), x.rc.data(), x.rd.data(), MPI_INT, c));
    if (got != native || native == 0) {
      ++failures;
      std::fprintf(stderr, "comm_safety errors: %s gave class %d, native %d\n", bad, got, native);
    }
  }
  exchange_calls(c, 4);  // and the communicator still works
  if (rank == 0) std::printf("comm_safety errors: classes as native\n");
  MPI_Comm_free(&c);
}

// The report (COMMSCHED_REPORT) after MPI_Finalize, or "" when not preloaded.
std::string report_text() {
  const char* path = std::getenv("COMMSCHED_REPORT");
  if (!path) return "";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void device_case(int rank) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  exchange_calls(c, 8);  // host memory: learned after 3, then optimised
  for (int call = 0; call < 6; ++call) {
    Exchange x(c, call);
    x.reference(c);
    if (rank == 1) {  // one rank's buffers are "device memory": every rank must run native
      commsched_shim_mark_device(x.send.data(), x.send.size() * sizeof(int));
      commsched_shim_mark_device(x.recv.data(), x.recv.size() * sizeof(int));
    }
    check(x.run(c) == MPI_SUCCESS, "MPI_Alltoallv failed");
    check(x.recv == x.want, "received data differs from PMPI_Alltoallv's");
    commsched_shim_clear();
  }
  MPI_Comm_free(&c);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string which = argc > 1 ? argv[1] : "";
  if (which == "disconnect") disconnect_case();
  if (which == "errors") errors_case(rank);
  if (which == "device") device_case(rank);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (which == "device" && rank == 0 && std::getenv("COMMSCHED_REPORT")) {
    // Host calls 3 to 8 substituted (the third learns the pattern and runs it), the 6 device
    // calls native on every rank, counted by rank 1, which saw them.
    const std::string r = report_text();
    if (r.find("\"device_calls\":6") == std::string::npos ||
        r.find("\"calls_optimised\":6") == std::string::npos) {
      std::fprintf(stderr, "comm_safety device: report lacks device_calls 6 / calls_optimised 6\n");
      ++all;
    }
  }
  if (rank == 0 && all == 0) std::printf("comm_safety %s: ok\n", which.c_str());
  return all == 0 ? 0 : 1;
}
