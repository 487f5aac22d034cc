// bench_plan: planning time of every strategy on uniform random matrices (paper 000 test set 1:
// d random destinations per row, COM(i, j) in 1..32, times a 1024-byte unit). No MPI.
//   bench_plan [--n 64,256,1024,4096] [--d 8,16] [--quick]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "plan/registry.hpp"

namespace {

using commsched::Bytes;
using commsched::Rank;
namespace core = commsched::core;
namespace plan = commsched::plan;

constexpr double kTimeBoxS = 10.0;

std::vector<long> parse_list(const char* text) {
  std::vector<long> out;
  std::string s(text);
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = std::min(s.find(',', pos), s.size());
    const std::string item = s.substr(pos, comma - pos);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0) {
      std::fprintf(stderr, "bench_plan: bad list item '%s'\n", item.c_str());
      std::exit(2);
    }
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

core::CommMatrix uniform_matrix(Rank n, Rank d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  core::CommMatrix m(n);
  const Rank per_row = std::min(d, n);
  for (Rank i = 0; i < n; ++i) {
    std::vector<core::Entry> row;
    while (static_cast<Rank>(row.size()) < per_row) {
      const auto j = static_cast<Rank>(rng() % static_cast<std::uint64_t>(n));
      if (std::none_of(row.begin(), row.end(), [j](const core::Entry& e) { return e.peer == j; }))
        row.push_back({j, (1 + rng() % 32) * 1024});
    }
    m.set_row(i, std::move(row));
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{64, 256, 1024, 4096}, ds{8, 16};
  bool quick = false;
  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if (arg == "--n" && a + 1 < argc) ns = parse_list(argv[++a]);
    else if (arg == "--d" && a + 1 < argc) ds = parse_list(argv[++a]);
    else if (arg == "--quick") quick = true;
    else {
      std::fprintf(stderr, "usage: bench_plan [--n 64,256,...] [--d 8,16] [--quick]\n");
      return 2;
    }
  }
  std::sort(ns.begin(), ns.end());
  const int reps = quick ? 1 : 5;
  std::printf("planning time, median of %d run%s (uniform random, COM 1..32 x 1 KiB)\n", reps,
              reps == 1 ? "" : "s");
  std::printf("%-10s %6s %4s %12s %8s %10s\n", "strategy", "n", "d", "plan_ms", "phases",
              "transfers");
  for (long d : ds) {
    std::map<std::string_view, bool> too_slow;
    for (long n : ns) {
      const core::CommMatrix m =
          uniform_matrix(static_cast<Rank>(n), static_cast<Rank>(d), 1000 + std::uint64_t(n));
      for (const plan::Strategy& s : plan::strategies()) {
        if (s.plan == nullptr) continue;
        if (too_slow[s.id]) {
          std::printf("%-10.*s %6ld %4ld %12s\n", static_cast<int>(s.id.size()), s.id.data(), n,
                      d, "skipped (>10 s)");
          continue;
        }
        std::vector<double> ms;
        core::Plan p;
        for (int r = 0; r < reps; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          p = s.plan(m, plan::Options{});
          const auto t1 = std::chrono::steady_clock::now();
          ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
          if (ms.back() > kTimeBoxS * 1000.0) break;
        }
        std::sort(ms.begin(), ms.end());
        const double median = ms[ms.size() / 2];
        if (ms.back() > kTimeBoxS * 1000.0) too_slow[s.id] = true;
        std::printf("%-10.*s %6ld %4ld %12.3f %8zu %10zu\n", static_cast<int>(s.id.size()),
                    s.id.data(), n, d, median, p.phases.size(), p.transfer_count());
      }
    }
  }
  return 0;
}
