#pragma once
/// Small pieces the bundled MPI programs (irregular_exchange, halo_exchange, cg_solver) share:
/// strict integer arguments, a monotonic clock, and the timing lines apps/bench and
/// apps/bench_overhead.sh read. Header-only and MPI-free, so the SMPI build of
/// irregular_exchange compiles it with smpicxx, which maps clock_gettime to simulated time.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace commsched::app_util {

/// A base-10 integer in [lo, hi] filling all of `s`, else nullopt.
inline std::optional<std::int64_t> parse_int(const char* s, std::int64_t lo, std::int64_t hi) {
  if (s == nullptr || *s == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return v;
}

inline double monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Linear-interpolated quantile q in [0, 1] of a sorted, non-empty vector.
inline double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

/// Prints "time_per_iteration_s=<median>" and "time_stats_s=min,p10,p25,median,p75,p90,max" of
/// per-iteration times in seconds; nothing for an empty vector.
inline void print_times(std::vector<double> times) {
  if (times.empty()) return;
  std::sort(times.begin(), times.end());
  const std::size_t m = times.size() / 2;
  const double median = times.size() % 2 == 1 ? times[m] : 0.5 * (times[m - 1] + times[m]);
  std::printf("time_per_iteration_s=%.9g\n", median);
  std::printf("time_stats_s=%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", times.front(),
              quantile(times, 0.1), quantile(times, 0.25), quantile(times, 0.5),
              quantile(times, 0.75), quantile(times, 0.9), times.back());
}

}  // namespace commsched::app_util
