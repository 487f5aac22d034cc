// alltoallv_sweep: an unmodified MPI program (C API only) shaped like a latency benchmark of the
// OSU kind: for each message size in turn, from the smallest to the largest, it makes a fixed
// number of MPI_Alltoallv calls with every rank sending that many bytes to every rank, then
// moves to the next size. A preloaded library sees a new pattern every size and only that
// size's calls to learn it, try candidates and profit, which is the whole-job test of "a run
// of 100 calls per message size" (apps/bench/e2e.py, workload sweep_100).
//
// Every call's receive buffer is checked byte for byte against what its senders wrote (outside
// the timed interval). One line per size, then the totals:
//   size=<bytes> calls=<n> us_per_call=<max over ranks of the rank's mean call time>
//   errors=<wrong bytes over all ranks> checksum=<over all received bytes> alltoallv_total_s=<s>
//   alltoallv_sweep [--sizes 1,2,4,...] [--max-size 65536] [--calls 100] [--warmup 0]
//                   [--pmpi-blocks B]
// --sizes lists the sizes; otherwise 1, 2, 4, ... up to --max-size. --warmup calls per size run
// before the timed ones (0 by default: the user's job pays for every call).
// --pmpi-blocks B: the same number of calls per size also go to PMPI_Alltoallv (always MPI's
// own, never a preloaded library's), in blocks of B alternating with the MPI_Alltoallv blocks,
// so both see the same machine state; each size's line adds pmpi_us_per_call and
// ratio=<pmpi/mpi> of the median block's time per call (maximum over ranks; at least 1: the
// MPI_ path is as fast as MPI's own). Without a preloaded library both paths are MPI's own,
// and the ratio shows the method's noise.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "program_util.hpp"

namespace {

using commsched::app_util::monotonic_now;
using commsched::app_util::parse_int;

constexpr const char* kUsage =
    "usage: alltoallv_sweep [--sizes S1,S2,...] [--max-size BYTES] [--calls N] [--warmup N]\n";

// The byte that rank `from` sends to rank `to` at offset `k` of call `call` of size `size`.
unsigned char byte_of(int from, int to, std::size_t k, int call, int size) {
  const std::uint64_t h = (static_cast<std::uint64_t>(from) * 1000003u) ^
                          (static_cast<std::uint64_t>(to) * 10007u) ^ (k * 131u) ^
                          (static_cast<std::uint64_t>(call) * 7919u) ^
                          (static_cast<std::uint64_t>(size) * 15485863u);
  return static_cast<unsigned char>((h ^ (h >> 13)) & 0xFF);
}

bool parse_sizes(const char* s, std::vector<int>& out) {
  out.clear();
  std::string item;
  for (const char* p = s;; ++p) {
    if (*p == ',' || *p == '\0') {
      const auto v = parse_int(item.c_str(), 1, 1 << 24);
      if (!v) return false;
      out.push_back(static_cast<int>(*v));
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  return !out.empty();
}

int run(int argc, char** argv) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<int> sizes;
  std::int64_t max_size = 65536, calls = 100, warmup = 0, blocks = 0;
  bool ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    std::optional<std::int64_t> x;
    if (a == "--sizes") {
      ok = v != nullptr && parse_sizes(v, sizes);
    } else if (a == "--max-size" && (x = parse_int(v, 1, 1 << 24))) {
      max_size = *x;
    } else if (a == "--calls" && (x = parse_int(v, 1, 1000000))) {
      calls = *x;
    } else if (a == "--warmup" && (x = parse_int(v, 0, 1000000))) {
      warmup = *x;
    } else if (a == "--pmpi-blocks" && (x = parse_int(v, 1, 1000000))) {
      blocks = *x;
    } else {
      ok = false;
    }
    ++i;
  }
  if (!ok) {
    if (rank == 0) std::fputs(kUsage, stderr);
    return 2;
  }
  if (sizes.empty())
    for (std::int64_t s = 1; s <= max_size; s *= 2) sizes.push_back(static_cast<int>(s));
  for (int size : sizes) {
    if (static_cast<std::int64_t>(size) * n > (std::int64_t{1} << 31) - 1) {
      if (rank == 0) std::fprintf(stderr, "alltoallv_sweep: size %d × %d ranks exceeds INT_MAX\n", size, n);
      return 2;
    }
  }

  std::uint64_t errors = 0, checksum = 0;
  double total = 0;
  if (blocks > 0) {
    // MPI sets up its connections on a first exchange: one through PMPI_, which a preloaded
    // library never sees, so the first timed block of either path does not pay for it.
    std::vector<int> one(static_cast<std::size_t>(n), 1), at(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) at[static_cast<std::size_t>(j)] = j;
    std::vector<unsigned char> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    PMPI_Alltoallv(a.data(), one.data(), at.data(), MPI_BYTE, b.data(), one.data(), at.data(),
                   MPI_BYTE, MPI_COMM_WORLD);
  }
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  std::vector<double> block_times[2];  // per call, each block of one size: MPI_, PMPI_
  for (int size : sizes) {
    const auto bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(n);
    std::vector<unsigned char> send(bytes), recv(bytes);
    for (int j = 0; j < n; ++j) {
      counts[static_cast<std::size_t>(j)] = size;
      displs[static_cast<std::size_t>(j)] = j * size;
    }
    // Each call's bytes are checked against what its senders wrote; `call` numbers every
    // call of this size, either path, so each one moves different bytes.
    auto one_call = [&](int call, bool pmpi) {
      for (int j = 0; j < n; ++j)
        for (std::size_t k = 0; k < static_cast<std::size_t>(size); ++k)
          send[static_cast<std::size_t>(j) * static_cast<std::size_t>(size) + k] =
              byte_of(rank, j, k, call, size);
      std::memset(recv.data(), 0, bytes);
      const double t0 = monotonic_now();
      (pmpi ? PMPI_Alltoallv : MPI_Alltoallv)(send.data(), counts.data(), displs.data(), MPI_BYTE,
                                              recv.data(), counts.data(), displs.data(), MPI_BYTE,
                                              MPI_COMM_WORLD);
      const double dt = monotonic_now() - t0;
      for (int j = 0; j < n; ++j)
        for (std::size_t k = 0; k < static_cast<std::size_t>(size); ++k) {
          const unsigned char got = recv[static_cast<std::size_t>(j) * static_cast<std::size_t>(size) + k];
          if (got != byte_of(j, rank, k, call, size)) ++errors;
          checksum = checksum * 1099511628211ull + got;
        }
      return dt;
    };
    double mine[2] = {0, 0};  // MPI_ path, PMPI_ path
    int call = 0;
    MPI_Barrier(MPI_COMM_WORLD);  // no rank's first call waits for rank 0's printing
    for (std::int64_t c = 0; c < warmup; ++c) one_call(call++, false);
    if (blocks == 0) {
      for (std::int64_t c = 0; c < calls; ++c) mine[0] += one_call(call++, false);
    } else {
      // Blocks alternate, and which path opens a pair of blocks alternates too, so a slow
      // drift of the machine weighs on both alike.
      for (std::int64_t done = 0, b = 0; done < calls; done += blocks, ++b) {
        const std::int64_t len = std::min(blocks, calls - done);
        for (int half = 0; half < 2; ++half) {
          const bool pmpi = (b % 2 == 1) != (half == 1);
          double block = 0;
          for (std::int64_t c = 0; c < len; ++c) block += one_call(call++, pmpi);
          mine[pmpi ? 1 : 0] += block;
          block_times[pmpi ? 1 : 0].push_back(block / static_cast<double>(len));
        }
      }
    }
    // Per path, this rank's median block (per call): a block that a preemption or the other
    // ranks' lateness hit weighs no more than one block.
    double mid[2] = {0, 0};
    for (int k = 0; k < 2 && blocks > 0; ++k) {
      std::vector<double>& v = block_times[k];
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      mid[k] = v[v.size() / 2];
      v.clear();
    }
    double slowest[2] = {0, 0}, slowest_mid[2] = {0, 0};
    MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mid, slowest_mid, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    total += slowest[0];
    const double per = 1e6 / static_cast<double>(calls);
    if (rank == 0 && blocks == 0)
      std::printf("size=%d calls=%lld us_per_call=%.4f\n", size, static_cast<long long>(calls),
                  per * slowest[0]);
    if (rank == 0 && blocks > 0)
      std::printf("size=%d calls=%lld us_per_call=%.4f pmpi_us_per_call=%.4f ratio=%.4f\n", size,
                  static_cast<long long>(calls), per * slowest[0], per * slowest[1],
                  slowest_mid[1] / slowest_mid[0]);
  }
  std::uint64_t all_errors = 0, sum = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&checksum, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("errors=%llu checksum=%llu alltoallv_total_s=%.9g\n",
                static_cast<unsigned long long>(all_errors), static_cast<unsigned long long>(sum),
                total);
  return all_errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = run(argc, argv);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
