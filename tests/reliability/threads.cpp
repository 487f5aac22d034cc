// threads: MPI_Init_thread at one level (issue 9, part 6), then MPI_Alltoallv compared byte for
// byte with PMPI_Alltoallv.
//   single      the main thread calls MPI
//   funneled    worker threads fill the buffers, only the main thread calls MPI
//   serialized  several threads call MPI in turn (a mutex orders them), one communicator each
//   multiple    several threads call MPI_Alltoallv at the same time, each on its own
//               communicator (created by the main thread, in the same order on every rank)
// Each communicator sees the same pattern often enough to be learned, at every level, and the
// calls may run optimised.
//
//   threads single|funneled|serialized|multiple [--threads T] [--calls C]
//
// Prints "threads: level=L provided=P threads=T calls=N mismatches=M"; exits 1 on a mismatch.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using namespace mpi_test;

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "?";
  }
}

/// Counts of stream `s` (one pattern per communicator): bytes rank i sends to rank j.
int count(int s, int n, int i, int j) {
  const std::uint64_t h = mix64(static_cast<std::uint64_t>(s * 1000003 + i * n + j));
  return h % 3 == 0 ? 0 : static_cast<int>(1 + h % 97) * (s + 1);
}

struct Buffers : CountTable {
  std::vector<std::uint8_t> send, ref, test;
};

Buffers prepare(int s, int n, int rank, long call) {
  Buffers b;
  static_cast<CountTable&>(b) =
      count_table(n, rank, [&](int i, int j) { return count(s, n, i, j); });
  const int st = b.send_total, rt = b.recv_total;
  b.send.resize(static_cast<std::size_t>(st + 1));
  for (std::size_t k = 0; k < b.send.size(); ++k)
    b.send[k] = static_cast<std::uint8_t>(mix64(static_cast<std::uint64_t>(call * 131 + rank) ^ (k << 20)) >> 50);
  b.ref.assign(static_cast<std::size_t>(rt + 1), 0xC3);
  b.test = b.ref;
  return b;
}

/// One compared call; true when the library's result equals PMPI's.
bool call_and_compare(MPI_Comm comm, int s, long call, Buffers* pre = nullptr) {
  int rank = 0, n = 1;
  rank_and_size(comm, rank, n);
  Buffers own;
  Buffers& b = pre ? *pre : (own = prepare(s, n, rank, call));
  PMPI_Alltoallv(b.send.data(), b.sc.data(), b.sd.data(), MPI_BYTE, b.ref.data(), b.rc.data(),
                 b.rd.data(), MPI_BYTE, comm);
  const int rc = MPI_Alltoallv(b.send.data(), b.sc.data(), b.sd.data(), MPI_BYTE, b.test.data(),
                               b.rc.data(), b.rd.data(), MPI_BYTE, comm);
  return rc == MPI_SUCCESS && b.ref == b.test;
}

}  // namespace

int main(int argc, char** argv) {
  int required = MPI_THREAD_SINGLE;
  const std::string level = argc > 1 ? argv[1] : "single";
  if (level == "funneled") required = MPI_THREAD_FUNNELED;
  else if (level == "serialized") required = MPI_THREAD_SERIALIZED;
  else if (level == "multiple") required = MPI_THREAD_MULTIPLE;
  int threads = 4, calls = 12;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, required, &provided);
  int rank = 0, n = 1;
  rank_and_size(MPI_COMM_WORLD, rank, n);

  std::vector<MPI_Comm> comms(static_cast<std::size_t>(threads));
  for (MPI_Comm& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
  std::atomic<long> done{0}, bad{0};

  if (provided >= MPI_THREAD_MULTIPLE && required == MPI_THREAD_MULTIPLE) {
    // Truly concurrent calls, one communicator per thread.
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (long c = 0; c < calls; ++c) {
          if (!call_and_compare(comms[static_cast<std::size_t>(t)], t, c)) ++bad;
          ++done;
        }
      });
    for (std::thread& th : pool) th.join();
  } else if (provided >= MPI_THREAD_SERIALIZED && required == MPI_THREAD_SERIALIZED) {
    // Several threads, one MPI call at a time, in the same order on every rank: a turn counter
    // hands the turn from thread to thread (t = turn % threads).
    std::mutex mu;
    std::atomic<long> turn{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (long c = 0; c < calls; ++c) {
          const long mine = c * threads + t;
          while (turn.load() != mine) std::this_thread::yield();
          {
            std::lock_guard lock(mu);
            if (!call_and_compare(comms[static_cast<std::size_t>(t)], t, c)) ++bad;
            ++done;
          }
          turn.store(mine + 1);
        }
      });
    for (std::thread& th : pool) th.join();
  } else {
    // single and funneled: the main thread calls MPI; with funneled, workers fill the buffers.
    for (long c = 0; c < calls; ++c)
      for (int t = 0; t < threads; ++t) {
        Buffers b;
        if (provided >= MPI_THREAD_FUNNELED && required == MPI_THREAD_FUNNELED) {
          std::thread worker([&] { b = prepare(t, n, rank, c); });
          worker.join();
        } else {
          b = prepare(t, n, rank, c);
        }
        if (!call_and_compare(comms[static_cast<std::size_t>(t)], t, c, &b)) ++bad;
        ++done;
      }
  }
  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  long local[2] = {done.load(), bad.load()}, sum[2] = {};
  MPI_Reduce(local, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("threads: level=%s provided=%s threads=%d calls=%ld mismatches=%ld\n",
                level.c_str(), level_name(provided), threads, sum[0], sum[1]);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return sum[1] == 0 || rank != 0 ? 0 : 1;
}
