// p2p_bench: an unmodified MPI program (C API only) timing Isend/Irecv bursts made through the
// MPI_* entry points (the library's, when preloaded) against the same bursts made through
// PMPI_* (always MPI's own), in alternating blocks of one run, so both see the same machine
// state even on a loaded host (apps/bench/bench_p2p.py runs it preloaded and, as a control, not).
//   bw        ranks pair up (0-1, 2-3, ...); the even one posts a window of W MPI_Isend of S
//             bytes to its partner and MPI_Waitall, the odd one W MPI_Irecv and MPI_Waitall, then
//             a 4-byte acknowledgement: the OSU bandwidth pattern. Prints the bytes per second
//             summed over pairs.
//   exchange  every rank posts MPI_Irecv from and MPI_Isend to every other rank (--order shift:
//             to r+1, r+2, ...; reverse: to r-1, r-2, ...) and MPI_Waitall: the latency of a
//             burst. Prints the mean time of one exchange (maximum over ranks).
//   self      one rank: W MPI_Irecv from itself and W MPI_Isend to itself, then MPI_Waitall.
//             With --clock cpu (this thread's CPU time, which a loaded host's preemptions do
//             not inflate) it isolates what the entry points cost.
// One line per size: "<mode> size=<S> mpi=<t> pmpi=<t> ratio=<pmpi/mpi>": the time of one
// window or exchange (maximum over ranks, the fastest of 24 blocks: on a shared host the other
// blocks measure the neighbours) each way; ratio >= 1: MPI_* is as fast as PMPI_*.
//   p2p_bench [--mode bw|exchange] [--sizes 8,64,...] [--window 64] [--order shift|reverse]
//             [--seconds 0.2] [--clock wall|cpu]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

// The point-to-point calls of one way of reaching MPI.
struct Api {
  int (*isend)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*irecv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*waitall)(int, MPI_Request*, MPI_Status*);
  int (*send)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
};
constexpr Api kMpi{MPI_Isend, MPI_Irecv, MPI_Waitall, MPI_Send, MPI_Recv};
constexpr Api kPmpi{PMPI_Isend, PMPI_Irecv, PMPI_Waitall, PMPI_Send, PMPI_Recv};


struct Options {
  std::string mode = "bw";
  std::vector<int> sizes{8, 64, 512, 2048, 8192, 65536};
  int window = 64;
  bool reverse = false;
  double seconds = 0.2;  // aimed time per size
  bool cpu_clock = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--mode") {
      o.mode = v;
    } else if (k == "--window") {
      o.window = std::max(1, std::atoi(v.c_str()));
    } else if (k == "--order") {
      o.reverse = v == "reverse";
    } else if (k == "--clock") {
      o.cpu_clock = v == "cpu";
    } else if (k == "--seconds") {
      o.seconds = std::atof(v.c_str());
    } else if (k == "--sizes") {
      o.sizes.clear();
      for (std::size_t p = 0; p < v.size();) {
        const std::size_t q = std::min(v.find(',', p), v.size());
        o.sizes.push_back(std::max(1, std::atoi(v.substr(p, q - p).c_str())));
        p = q + 1;
      }
    }
  }
  return o;
}

// One bandwidth window (see the header); `partner` < 0: this rank sits out.
void bw_window(const Api& api, bool sender, int partner, int size, int window,
               std::vector<char>& buf, std::vector<MPI_Request>& reqs) {
  if (partner < 0) return;
  for (int w = 0; w < window; ++w) {
    char* p = buf.data() + static_cast<std::size_t>(w) * static_cast<std::size_t>(size);
    if (sender) {
      api.isend(p, size, MPI_CHAR, partner, 1, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(w)]);
    } else {
      api.irecv(p, size, MPI_CHAR, partner, 1, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(w)]);
    }
  }
  api.waitall(window, reqs.data(), MPI_STATUSES_IGNORE);
  int ack = 0;
  if (sender) {
    api.recv(&ack, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    api.send(&ack, 1, MPI_INT, partner, 2, MPI_COMM_WORLD);
  }
}

void exchange(const Api& api, int me, int n, int size, bool reverse, std::vector<char>& out,
              std::vector<char>& in, std::vector<MPI_Request>& reqs) {
  int k = 0;
  for (int d = 1; d < n; ++d) {
    const int src = (me - d + n) % n;
    api.irecv(in.data() + static_cast<std::size_t>(d) * static_cast<std::size_t>(size), size,
              MPI_CHAR, src, 3, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k++)]);
  }
  for (int d = 1; d < n; ++d) {
    const int step = reverse ? n - d : d;
    api.isend(out.data() + static_cast<std::size_t>(step) * static_cast<std::size_t>(size), size,
              MPI_CHAR, (me + step) % n, 3, MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k++)]);
  }
  api.waitall(k, reqs.data(), MPI_STATUSES_IGNORE);
}

void self_window(const Api& api, int me, int size, int window, std::vector<char>& out,
                 std::vector<char>& in, std::vector<MPI_Request>& reqs) {
  for (int w = 0; w < window; ++w) {
    const std::size_t at = static_cast<std::size_t>(w) * static_cast<std::size_t>(size);
    api.irecv(in.data() + at, size, MPI_CHAR, me, 4, MPI_COMM_SELF,
              &reqs[static_cast<std::size_t>(2 * w)]);
    api.isend(out.data() + at, size, MPI_CHAR, me, 4, MPI_COMM_SELF,
              &reqs[static_cast<std::size_t>(2 * w + 1)]);
  }
  api.waitall(2 * window, reqs.data(), MPI_STATUSES_IGNORE);
}

double now(bool cpu) {
  if (!cpu) return MPI_Wtime();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const Options o = parse(argc, argv);
  const bool bw = o.mode == "bw";
  const int partner = (me ^ 1) < n ? me ^ 1 : -1;
  for (int size : o.sizes) {
    const std::size_t per = static_cast<std::size_t>(size);
    std::vector<char> out(per * static_cast<std::size_t>(std::max(n, o.window)), 'x');
    std::vector<char> in(out.size());
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(std::max(2 * n, 2 * o.window)));
    auto step = [&](const Api& api) {
      if (bw) {
        bw_window(api, me % 2 == 0, partner, size, o.window, out, reqs);
      } else if (o.mode == "self") {
        self_window(api, me, size, o.window, out, in, reqs);
      } else {
        exchange(api, me, n, size, o.reverse, out, in, reqs);
      }
    };
    // Warm up both ways (the library learns its bursts here), then size the blocks on rank 0's
    // estimate so every rank runs the same count.
    for (int w = 0; w < 50; ++w) step(kMpi);
    for (int w = 0; w < 20; ++w) step(kPmpi);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int w = 0; w < 20; ++w) step(kPmpi);
    t = (MPI_Wtime() - t) / 20;
    constexpr int kBlocks = 24;  // per way, alternating MPI_ and PMPI_ (and which goes first)
    int reps = static_cast<int>(std::clamp(o.seconds / kBlocks / 2 / std::max(t, 1e-9), 4.0, 100000.0));
    MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<double> mpi, pmpi;
    for (int b = 0; b < 2 * kBlocks; ++b) {
      const bool use_mpi = (b % 2 == 0) == (b / 2 % 2 == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = now(o.cpu_clock);
      for (int r = 0; r < reps; ++r) step(use_mpi ? kMpi : kPmpi);
      double mine = (now(o.cpu_clock) - start) / reps, slowest = 0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      (use_mpi ? mpi : pmpi).push_back(slowest);
    }
    if (me == 0) {
      const double a = *std::min_element(mpi.begin(), mpi.end());
      const double b = *std::min_element(pmpi.begin(), pmpi.end());
      std::printf("%s size=%d mpi=%.6g pmpi=%.6g ratio=%.4f\n", o.mode.c_str(), size, a, b,
                  a > 0 ? b / a : 0);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
