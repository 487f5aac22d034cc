// long_run: a small irregular MPI_Alltoallv repeated many times while its pattern changes at
// random iterations (issue 9, part 4). Checks what a long job needs from a preloaded library:
//   - never a stale schedule: every received byte is verified against what its sender wrote;
//   - resident memory flat after warm-up: growth of /proc/self/statm's resident pages between
//     the warm-up iteration and the end, maximum over ranks, must stay under --rss-bound-kib;
//   - no file-descriptor leak: /proc/self/fd entries at warm-up and at the end;
//   - no communicator leak: sub-communicators are created (split or dup), used long enough to
//     be learned, and freed, over and over; the Fortran handle of each new one (MPI_Comm_c2f, the
//     index of the lowest free handle slot in Open MPI and MPICH) must not grow after warm-up,
//     as it would if the library kept a private duplicate of a freed communicator alive.
//
// Pattern changes, drawn from one seed identically on every rank: the whole matrix (a new one,
// or one seen before, so stored plans are reused and the per-communicator pattern cache
// overflows and evicts), one pair's count, or one rank's message to itself (a change only
// that rank can see: only the per-call agreement keeps the others from a stale schedule).
//
//   long_run [--iterations N] [--warmup W] [--seed S] [--rss-bound-kib K] [--subcomm-every M]
//
// Prints "long_run: N iterations, C changes (...), S sub-communicators, M mismatches, rss growth
// G KiB, fds A->B, comm handles A->B, T s"; exits 1 on a mismatch or a bound exceeded.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using namespace mpi_test;

long resident_kib() {
  long pages_total = 0, pages_resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int open_fds() {
  int count = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++count;
    closedir(d);
    --count;  // the directory stream itself
  }
  return count;
}

/// Byte counts (Matrix): m[i*n+j] = bytes rank i sends to rank j.
Matrix make_matrix(std::uint64_t epoch, int n) {
  Rng r(epoch * 7919 + 17);
  Matrix m(static_cast<std::size_t>(n * n), 0);
  const int density = 20 + r.below(81);
  for (auto& c : m)
    if (r.below(100) < density) c = 1 + r.below(64);
  return m;
}

std::uint8_t payload(int src, int dst, long it, int k) {
  return static_cast<std::uint8_t>(
      mix64((static_cast<std::uint64_t>(it) << 24) ^ (static_cast<std::uint64_t>(src) << 12) ^
            static_cast<std::uint64_t>(dst) ^ (static_cast<std::uint64_t>(k) << 44)) >> 40);
}

/// One verified call; returns the number of wrong bytes on this rank.
long exchange(MPI_Comm comm, const Matrix& m, long it) {
  int rank = 0, n = 1;
  rank_and_size(comm, rank, n);
  const auto& [sc, sd, rc, rd, st, rt] =
      count_table(n, rank, [&](int i, int j) { return at(m, n, i, j); });
  std::vector<std::uint8_t> sb(static_cast<std::size_t>(std::max(st, 1))),
      rb(static_cast<std::size_t>(std::max(rt, 1)), 0xEE);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < sc[static_cast<std::size_t>(j)]; ++k)
      sb[static_cast<std::size_t>(sd[static_cast<std::size_t>(j)] + k)] = payload(rank, j, it, k);
  MPI_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_BYTE, rb.data(), rc.data(), rd.data(),
                MPI_BYTE, comm);
  long wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < rc[static_cast<std::size_t>(j)]; ++k)
      wrong += rb[static_cast<std::size_t>(rd[static_cast<std::size_t>(j)] + k)] != payload(j, rank, it, k);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  rank_and_size(MPI_COMM_WORLD, rank, n);
  long iterations = 100000, warmup = 10000, rss_bound_kib = 4096, subcomm_every = 1000;
  std::uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long v = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = v;
    else if (std::strcmp(argv[i], "--warmup") == 0) warmup = v;
    else if (std::strcmp(argv[i], "--seed") == 0) seed = static_cast<std::uint64_t>(v);
    else if (std::strcmp(argv[i], "--rss-bound-kib") == 0) rss_bound_kib = v;
    else if (std::strcmp(argv[i], "--subcomm-every") == 0) subcomm_every = v;
  }
  warmup = std::min(warmup, iterations);
  const double t0 = MPI_Wtime();

  Rng events(seed);  // the same draws on every rank
  std::uint64_t epoch = 0, next_new_epoch = 1;
  Matrix m = make_matrix(epoch, n);
  long changes_full = 0, changes_pair = 0, changes_self = 0, subcomms = 0;
  long wrong_bytes = 0, wrong_calls = 0, first_wrong_it = -1;
  long rss_warm = 0, fds_warm = 0;
  int handle_warm = -1, handle_max_after = -1;

  for (long it = 0; it < iterations; ++it) {
    // About one change every 400 calls: enough calls in between to learn and run each pattern.
    if (events.below(400) == 0) {
      const int kind = events.below(3);
      if (kind == 0) {  // a whole new matrix, or one seen before (plans reused)
        epoch = events.below(3) == 0 ? next_new_epoch++ : static_cast<std::uint64_t>(events.below(static_cast<int>(next_new_epoch)));
        m = make_matrix(epoch, n);
        ++changes_full;
      } else if (kind == 1) {  // one pair
        const int i = events.below(n), j = events.below(n);
        auto& c = m[static_cast<std::size_t>(i * n + j)];
        c = c > 0 && events.below(2) == 0 ? 0 : c + 1 + events.below(8);
        ++changes_pair;
      } else {  // one rank's message to itself: invisible to every other rank
        const int i = events.below(n);
        auto& c = m[static_cast<std::size_t>(i * n + i)];
        c = c > 0 && events.below(2) == 0 ? 0 : c + 1 + events.below(8);
        ++changes_self;
      }
    }
    const long wrong = exchange(MPI_COMM_WORLD, m, it);
    if (wrong > 0) {
      if (first_wrong_it < 0) {
        first_wrong_it = it;
        std::fprintf(stderr, "long_run: FAIL rank %d iteration %ld: %ld wrong bytes (seed %llu)\n",
                     rank, it, wrong, static_cast<unsigned long long>(seed));
      }
      wrong_bytes += wrong;
      ++wrong_calls;
    }

    if (subcomm_every > 0 && it % subcomm_every == subcomm_every / 2) {
      // A sub-communicator that lives for a few learned calls, then is freed.
      MPI_Comm sub = MPI_COMM_NULL;
      if (events.below(2) == 0)
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, n - rank, &sub);
      else
        MPI_Comm_dup(MPI_COMM_WORLD, &sub);
      const int handle = static_cast<int>(MPI_Comm_c2f(sub));
      int sn = 1;
      MPI_Comm_size(sub, &sn);
      const Matrix sm = make_matrix(static_cast<std::uint64_t>(1000 + events.below(4)), sn);
      for (int c = 0; c < 6; ++c) {
        const long w = exchange(sub, sm, it * 8 + c);
        if (w > 0 && first_wrong_it < 0) {
          first_wrong_it = it;
          std::fprintf(stderr, "long_run: FAIL rank %d sub-communicator at iteration %ld\n", rank, it);
        }
        wrong_bytes += w;
        wrong_calls += w > 0;
      }
      MPI_Comm_free(&sub);
      ++subcomms;
      if (it >= warmup) handle_max_after = std::max(handle_max_after, handle);
      else handle_warm = std::max(handle_warm, handle);
    }
    if (it + 1 == warmup) {
      rss_warm = resident_kib();
      fds_warm = open_fds();
    }
  }
  const long rss_growth = resident_kib() - rss_warm;
  const long fds_end = open_fds();
  long local[4] = {rss_growth, fds_end - fds_warm, wrong_bytes, wrong_calls}, worst[4] = {};
  MPI_Reduce(local, worst, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(local + 2, worst + 2, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int handles[2] = {handle_warm, handle_max_after}, handles_max[2] = {};
  MPI_Reduce(handles, handles_max, 2, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    const bool handle_grew = handles_max[1] > handles_max[0] + 2;  // slack: split vs dup order
    ok = worst[2] == 0 && worst[0] <= rss_bound_kib && worst[1] <= 0 && !handle_grew;
    std::printf("long_run: %ld iterations, %ld changes (%ld whole, %ld pair, %ld self-only on one "
                "rank), %ld sub-communicators, %ld mismatches (%ld bytes), rss growth %ld KiB "
                "(bound %ld), fds %+ld, comm handles %d->%d, %.1f s\n",
                iterations, changes_full + changes_pair + changes_self, changes_full,
                changes_pair, changes_self, subcomms, worst[3], worst[2], worst[0], rss_bound_kib,
                worst[1], handles_max[0], handles_max[1], MPI_Wtime() - t0);
    if (worst[0] > rss_bound_kib)
      std::printf("long_run: FAIL resident memory grew %ld KiB after iteration %ld\n", worst[0], warmup);
    if (worst[1] > 0) std::printf("long_run: FAIL %ld file descriptors leaked\n", worst[1]);
    if (handle_grew) std::printf("long_run: FAIL communicator handles keep growing\n");
    std::fflush(stdout);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
