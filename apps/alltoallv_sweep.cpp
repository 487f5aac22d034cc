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
// --sizes lists the sizes; otherwise 1, 2, 4, ... up to --max-size. --warmup calls per size run
// before the timed ones (0 by default: the user's job pays for every call).
#include <mpi.h>

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
  std::int64_t max_size = 65536, calls = 100, warmup = 0;
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
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  for (int size : sizes) {
    const auto bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(n);
    std::vector<unsigned char> send(bytes), recv(bytes);
    for (int j = 0; j < n; ++j) {
      counts[static_cast<std::size_t>(j)] = size;
      displs[static_cast<std::size_t>(j)] = j * size;
    }
    double mine = 0;
    for (std::int64_t c = 0; c < warmup + calls; ++c) {
      const int call = static_cast<int>(c);
      for (int j = 0; j < n; ++j)
        for (std::size_t k = 0; k < static_cast<std::size_t>(size); ++k)
          send[static_cast<std::size_t>(j) * static_cast<std::size_t>(size) + k] =
              byte_of(rank, j, k, call, size);
      std::memset(recv.data(), 0, bytes);
      const double t0 = monotonic_now();
      MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_BYTE, recv.data(),
                    counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
      const double dt = monotonic_now() - t0;
      if (c >= warmup) mine += dt;
      for (int j = 0; j < n; ++j)
        for (std::size_t k = 0; k < static_cast<std::size_t>(size); ++k) {
          const unsigned char got = recv[static_cast<std::size_t>(j) * static_cast<std::size_t>(size) + k];
          if (got != byte_of(j, rank, k, call, size)) ++errors;
          checksum = checksum * 1099511628211ull + got;
        }
    }
    double slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    total += slowest;
    if (rank == 0)
      std::printf("size=%d calls=%lld us_per_call=%.4f\n", size, static_cast<long long>(calls),
                  1e6 * slowest / static_cast<double>(calls));
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
