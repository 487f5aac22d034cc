// irregular_exchange: an unmodified MPI program (C API only) that repeats one irregular
// MPI_Alltoallv and verifies every byte it receives. The demo, the MPI tests and the benchmarks
// run it with and without libcommsched preloaded; it never links the library.
//
// Patterns (n ranks, degree D, unit u bytes):
//   uniform    every row and column has about D entries: the union of D random permutations
//              (i -> pi_k(i)); sizes COM(i,j)*u with COM uniform in 1..32 (paper 000 §7.2, set 1).
//   skewed     paper 000 §7.2 set 2: rows are grouped into five sets with
//              dist = {1,2,4,8,17}, dense = {1,2,4,8,16}, length = {16,8,4,2,1} (defined for
//              n = 32). Scaling to n ranks: set k gets the rows [R(n*C(k-1)/32), R(n*C(k)/32))
//              of a random permutation of the ranks (C = prefix sums of dist, R = round to
//              nearest, so the sets partition the ranks exactly; small n leaves the first sets
//              empty: at n = 4 the sets hold 0,0,1,1,2 rows); a row of set k has
//              max(1, min(n, round(dense[k]*min(1, n/32)))) distinct random destinations, each
//              message length[k]*u bytes. For n >= 32 this is the paper's set exactly (every row
//              sends 16u bytes); for smaller n the big-message rows keep their single message and
//              the many-message rows lose entries, so the skew in row totals grows.
//   hotspot    every rank sends 32u bytes to rank 0, plus min(D-1, n-1) messages of u bytes to
//              distinct random ranks among 1..n-1.
//   neighbors  i -> i+1, ..., i+D (mod n), u bytes each (paper 004 §4.1).
//   fan        a ring fan: i -> i+1, ..., i+D (mod n), 8u bytes each, plus min(D, n-1-D) messages
//              of u bytes to distinct random ranks among the others (a halo exchange with a few
//              far partners; every receiver takes D large messages at once).
//   random     each (i,j) present with probability D/n, size u*10^U(0,3) bytes (three orders of
//              magnitude); rows and columns may be empty.
//   density    every row has exactly min(D, n-1) distinct random destinations other than itself,
//              u bytes each: D = density*(n-1) gives paper 002's synthetic patterns (§4, Table 11:
//              10-75 % of a complete exchange, 256 and 512 bytes).
//   transport  paper 001 §9: fan-out k = min(D, n-1) and traffic t = u bytes per rank in and out.
//              Row i sends to k destinations pi((pi^-1(i) + s_m) mod n) for k distinct random
//              shifts s_m (pi a random permutation), so every column also has k sources, one per
//              shift. With non-uniformity l (--nonuniformity): the fraction l*t of the traffic
//              goes to (1-l)k destinations and (1-l)*t to the other l*k (group sizes rounded,
//              at least 1 each when k >= 2); l = 1/2 gives uniform messages, l = 1/k one large
//              message and k-1 small ones. Sizes are floored to whole bytes (at least 1).
//   fft3d      the transpose of a 3-D FFT (paper 004 §4.4, Tables 3-4): every rank sends u bytes
//              to each of Y = min(D, n) receivers spread evenly over the ranks (receiver m is
//              rank floor(m*n/Y)), itself included. Y = n is an all-to-all; Y much smaller than n
//              is the "high variance" case (Y receivers take n messages each).
// Every rank derives its row and column from (pattern, n, D, u, seed, epoch) alone, so all ranks
// agree without communicating. With --change-every K the epoch (and so the counts) changes every
// K iterations, warm-up included.
// C API only: keep the deprecated C++ bindings (and their warnings) out.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "program_util.hpp"

namespace {

using commsched::app_util::monotonic_now;
using commsched::app_util::parse_int;

constexpr int kMaxErrorLines = 5;  // per rank: enough to diagnose, not enough to flood the log

// ---------------------------------------------------------------------------------------------
// Deterministic randomness: the same on every rank, every MPI and every run (no <random>
// distributions, whose results are implementation-defined).

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix64(a ^ mix64(b ^ mix64(c)));
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix64(state_);
  }
  /// Uniform in [0, bound); bound > 0. The modulo bias is irrelevant for test patterns.
  int below(int bound) { return static_cast<int>(next() % static_cast<std::uint64_t>(bound)); }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

std::vector<int> random_permutation(int n, Rng& rng) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return p;
}

/// `count` distinct values from [lo, lo+range), in draw order.
std::vector<int> distinct_sample(int count, int lo, int range, Rng& rng) {
  count = std::min(count, range);
  std::vector<int> out;
  if (count <= 0) return out;
  if (2 * count > range) {  // dense: partial Fisher-Yates over the whole range
    std::vector<int> all(static_cast<std::size_t>(range));
    std::iota(all.begin(), all.end(), lo);
    for (int i = 0; i < count; ++i) std::swap(all[i], all[i + rng.below(range - i)]);
    all.resize(static_cast<std::size_t>(count));
    return all;
  }
  while (static_cast<int>(out.size()) < count) {  // sparse: rejection, O(count^2)
    int v = lo + rng.below(range);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Patterns

enum class PatternKind {
  uniform, skewed, hotspot, neighbors, random, density, transport, fft3d, fan
};

constexpr std::string_view kPatternNames[] = {"uniform", "skewed",    "hotspot", "neighbors",
                                              "random",  "density",   "transport", "fft3d",
                                              "fan"};

std::optional<PatternKind> parse_pattern(std::string_view s) {
  for (std::size_t k = 0; k < std::size(kPatternNames); ++k)
    if (s == kPatternNames[k]) return static_cast<PatternKind>(k);
  return std::nullopt;
}

struct PatternParams {
  PatternKind kind = PatternKind::uniform;
  int degree = 4;
  std::int64_t unit = 1024;
  std::uint64_t seed = 1;
  double nonuniformity = 0.5;  // transport: fraction l of the traffic to (1-l)k destinations
};

/// One epoch's communication matrix, queried by row (what a rank sends) and by column (what it
/// receives). Holds O(D*n) state at most, never the n*n matrix.
class Pattern {
 public:
  Pattern(const PatternParams& p, int n, std::uint64_t epoch)
      : p_(p), n_(n), key_(hash3(p.seed, epoch, static_cast<std::uint64_t>(p.kind) + 1)) {
    Rng rng(key_);
    if (p_.kind == PatternKind::uniform) {
      for (int k = 0; k < p_.degree; ++k) {
        perms_.push_back(random_permutation(n_, rng));
        std::vector<int> inv(static_cast<std::size_t>(n_));
        for (int i = 0; i < n_; ++i) inv[perms_.back()[i]] = i;
        inverses_.push_back(std::move(inv));
      }
    } else if (p_.kind == PatternKind::skewed) {
      static constexpr int dist[5] = {1, 2, 4, 8, 17};
      static constexpr int dense[5] = {1, 2, 4, 8, 16};
      static constexpr int length[5] = {16, 8, 4, 2, 1};
      std::vector<int> order = random_permutation(n_, rng);
      row_dense_.assign(static_cast<std::size_t>(n_), 1);
      row_length_.assign(static_cast<std::size_t>(n_), 1);
      const double shrink = std::min(1.0, n_ / 32.0);
      int cum = 0;
      for (int k = 0; k < 5; ++k) {
        const int begin = static_cast<int>((static_cast<std::int64_t>(n_) * cum + 16) / 32);
        cum += dist[k];
        const int end = static_cast<int>((static_cast<std::int64_t>(n_) * cum + 16) / 32);
        const int d = std::clamp(static_cast<int>(std::lround(dense[k] * shrink)), 1, n_);
        for (int r = begin; r < end; ++r) {
          row_dense_[order[r]] = d;
          row_length_[order[r]] = length[k];
        }
      }
    } else if (p_.kind == PatternKind::transport) {
      const int k = std::min(p_.degree, n_ - 1);
      perms_.push_back(random_permutation(n_, rng));
      std::vector<int> inv(static_cast<std::size_t>(n_));
      for (int i = 0; i < n_; ++i) inv[perms_[0][i]] = i;
      inverses_.push_back(std::move(inv));
      shifts_ = distinct_sample(k, 1, n_ - 1, rng);
      // (1-l)k "small" destinations share l*t, l*k "large" ones share (1-l)*t.
      int large = static_cast<int>(std::lround(p_.nonuniformity * k));
      if (k >= 2) large = std::clamp(large, 1, k - 1);
      else large = k;
      const int small = k - large;
      const double t = static_cast<double>(p_.unit);
      const double small_share = large == k ? 0.0 : p_.nonuniformity * t;
      const double large_share = large == k ? t : (1.0 - p_.nonuniformity) * t;
      for (int m = 0; m < k; ++m) {
        const double b = m < small ? small_share / small : large_share / large;
        shift_bytes_.push_back(std::max<std::int64_t>(1, static_cast<std::int64_t>(b)));
      }
    }
  }

  /// bytes[j] = bytes rank i sends to rank j.
  void row(int i, std::vector<std::int64_t>& bytes) const {
    bytes.assign(static_cast<std::size_t>(n_), 0);
    switch (p_.kind) {
      case PatternKind::uniform:
        for (const auto& perm : perms_) bytes[perm[i]] = uniform_size(i, perm[i]);
        break;
      case PatternKind::neighbors:
        for (int k = 1; k <= p_.degree; ++k) bytes[(i + k) % n_] = p_.unit;
        break;
      case PatternKind::random:
        for (int j = 0; j < n_; ++j) bytes[j] = random_size(i, j);
        break;
      case PatternKind::skewed:
      case PatternKind::hotspot:
      case PatternKind::density:
      case PatternKind::fan:
        for_each_sampled(i, [&](int j, std::int64_t b) { bytes[j] = b; });
        break;
      case PatternKind::transport:
        for (std::size_t m = 0; m < shifts_.size(); ++m)
          bytes[perms_[0][(inverses_[0][i] + shifts_[m]) % n_]] = shift_bytes_[m];
        break;
      case PatternKind::fft3d:
        for (int m = 0; m < fft_receivers(); ++m) bytes[fft_receiver(m)] = p_.unit;
        break;
    }
  }

  /// bytes[i] = bytes rank i sends to rank j.
  void column(int j, std::vector<std::int64_t>& bytes) const {
    bytes.assign(static_cast<std::size_t>(n_), 0);
    switch (p_.kind) {
      case PatternKind::uniform:
        for (const auto& inv : inverses_) bytes[inv[j]] = uniform_size(inv[j], j);
        break;
      case PatternKind::neighbors:
        for (int k = 1; k <= p_.degree; ++k) bytes[((j - k) % n_ + n_) % n_] = p_.unit;
        break;
      case PatternKind::random:
        for (int i = 0; i < n_; ++i) bytes[i] = random_size(i, j);
        break;
      case PatternKind::skewed:
      case PatternKind::hotspot:  // rows are sampled, so scan them all: O(n*D)
      case PatternKind::density:
      case PatternKind::fan:
        for (int i = 0; i < n_; ++i)
          for_each_sampled(i, [&](int dst, std::int64_t b) {
            if (dst == j) bytes[i] = b;
          });
        break;
      case PatternKind::transport:
        for (std::size_t m = 0; m < shifts_.size(); ++m)
          bytes[perms_[0][((inverses_[0][j] - shifts_[m]) % n_ + n_) % n_]] = shift_bytes_[m];
        break;
      case PatternKind::fft3d:
        for (int m = 0; m < fft_receivers(); ++m)
          if (fft_receiver(m) == j) std::fill(bytes.begin(), bytes.end(), p_.unit);
        break;
    }
  }

 private:
  std::int64_t uniform_size(int i, int j) const {
    return static_cast<std::int64_t>(1 + hash3(key_, static_cast<std::uint64_t>(i),
                                               static_cast<std::uint64_t>(j)) % 32) *
           p_.unit;
  }

  std::int64_t random_size(int i, int j) const {
    Rng rng(hash3(key_, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j)));
    if (rng.unit() * n_ >= p_.degree) return 0;  // present with probability D/n
    const double bytes = static_cast<double>(p_.unit) * std::pow(10.0, 3.0 * rng.unit());
    return std::max<std::int64_t>(1, std::llround(bytes));
  }

  int fft_receivers() const { return std::min(p_.degree, n_); }
  int fft_receiver(int m) const {
    return static_cast<int>(static_cast<std::int64_t>(m) * n_ / fft_receivers());
  }

  /// Rows whose destinations are drawn at random (skewed, hotspot, density, fan): f(dst, bytes)
  /// per entry.
  template <class F>
  void for_each_sampled(int i, F&& f) const {
    Rng rng(hash3(key_, static_cast<std::uint64_t>(i), 0x5a));
    if (p_.kind == PatternKind::skewed) {
      for (int j : distinct_sample(row_dense_[i], 0, n_, rng)) f(j, row_length_[i] * p_.unit);
    } else if (p_.kind == PatternKind::density) {  // i + 1 + [0, n-1) mod n: never i itself
      for (int j : distinct_sample(p_.degree, 0, n_ - 1, rng)) f((i + 1 + j) % n_, p_.unit);
    } else if (p_.kind == PatternKind::fan) {  // ring i+1..i+D, then i+D+1 + [0, n-1-D) mod n
      const int ring = std::min(p_.degree, n_ - 1);
      for (int k = 1; k <= ring; ++k) f((i + k) % n_, 8 * p_.unit);
      const int others = n_ - 1 - ring;
      for (int j : distinct_sample(std::min(ring, others), 0, others, rng))
        f((i + ring + 1 + j) % n_, p_.unit);
    } else {
      f(0, 32 * p_.unit);
      for (int j : distinct_sample(p_.degree - 1, 1, n_ - 1, rng)) f(j, p_.unit);
    }
  }

  PatternParams p_;
  int n_;
  std::uint64_t key_;
  std::vector<std::vector<int>> perms_, inverses_;  // uniform; transport (one permutation)
  std::vector<int> row_dense_, row_length_;         // skewed
  std::vector<int> shifts_;                         // transport
  std::vector<std::int64_t> shift_bytes_;           // transport: bytes per shift
};

// ---------------------------------------------------------------------------------------------
// Payload: byte k of the message src -> dst in iteration it. Depends on every coordinate, so a
// misrouted, misplaced, stale or shifted piece is caught.

std::uint32_t message_key(int src, int dst, int it) {
  return static_cast<std::uint32_t>(hash3(static_cast<std::uint64_t>(src),
                                          static_cast<std::uint64_t>(dst),
                                          static_cast<std::uint64_t>(it)));
}

// Word w of the message (8 bytes): the bytes are generated and checked a word at a time, so the
// program's own work between calls stays small beside the exchange it times.
std::uint64_t payload_word(std::uint32_t key, std::int64_t w) {
  std::uint64_t v = (std::uint64_t{key} << 32 | key) +
                    static_cast<std::uint64_t>(w) * 0x9E3779B97F4A7C15ULL;
  v ^= v >> 31;
  v *= 0xBF58476D1CE4E5B9ULL;
  v ^= v >> 29;
  return v;
}

// Writes the message's `len` bytes (the host's byte order; the checksum compares runs on one
// kind of host).
void fill_payload(std::uint32_t key, std::uint8_t* p, std::int64_t len) {
  for (std::int64_t at = 0, w = 0; at < len; at += 8, ++w) {
    const std::uint64_t v = payload_word(key, w);
    std::memcpy(p + at, &v, static_cast<std::size_t>(std::min<std::int64_t>(8, len - at)));
  }
}

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

std::uint64_t fnv1a(std::uint64_t h, const std::uint8_t* data, std::size_t len) {
  std::size_t k = 0;
  for (; k + 8 <= len; k += 8) {  // a word at a time, then the tail byte by byte
    std::uint64_t v = 0;
    std::memcpy(&v, data + k, 8);
    h = (h ^ v) * kFnvPrime;
  }
  for (; k < len; ++k) h = (h ^ data[k]) * kFnvPrime;
  return h;
}

// ---------------------------------------------------------------------------------------------
// Command line

struct Options {
  PatternParams pattern;
  int iterations = 10;
  int warmup = 0;
  int change_every = 0;
  int cycle = 0;  // with change_every: the patterns repeat after this many (0: never)
  bool monotonic = false;  // --clock monotonic: makespan on CLOCK_MONOTONIC
  std::string matrix_out;  // --matrix-out: rank 0 writes the first epoch's matrix here
  int matrix_only = 0;     // --matrix-only N: write an N-rank job's matrix, no exchange
  int late_us = 0;         // --late-us: the last rank arrives this late to every call
  int compute_us = 0;      // --compute-us: computation after each call (ialltoallv: before its wait)
  bool help = false;
  enum class Call { alltoallv, alltoall, neighbor, ialltoallv } call = Call::alltoallv;
};

const char* const kUsage =
    "usage: irregular_exchange [--pattern uniform|skewed|hotspot|neighbors|random|density|\n"
    "                                     transport|fft3d|fan]\n"
    "                          [--degree D] [--unit BYTES] [--iterations N] [--seed S]\n"
    "                          [--warmup W] [--change-every K] [--cycle C] [--nonuniformity L]\n"
    "                          [--clock wtime|monotonic] [--matrix-out PATH]\n"
    "                          [--matrix-only N] [--call alltoallv|alltoall|neighbor]\n"
    "                          [--late-us US] [--compute-us US] [--help]\n"
    "Repeats one irregular MPI_Alltoallv and verifies every received byte.\n"
    "  --pattern       communication pattern (default uniform)\n"
    "  --degree        messages per rank, about (default 4, clamped to the rank count)\n"
    "  --unit          message size unit in bytes (default 1024; transport: traffic per rank)\n"
    "  --iterations    timed iterations (default 10)\n"
    "  --seed          pattern seed (default 1)\n"
    "  --warmup        untimed iterations before the timed ones (default 0)\n"
    "  --change-every  new pattern every K iterations, warm-up included (default 0: never)\n"
    "  --cycle         with --change-every: C patterns in turn, then the first again (default 0:\n"
    "                  always a new one); --change-every 1 --cycle 2 alternates two patterns\n"
    "  --nonuniformity transport only: l in (0, 1], the traffic share of the (1-l)k small\n"
    "                  messages (default 0.5: uniform)\n"
    "  --clock         wtime (default): per call, the slowest rank's MPI_Wtime interval;\n"
    "                  monotonic: per call, the makespan on CLOCK_MONOTONIC (latest end minus\n"
    "                  earliest start over all ranks; one clock for every process of a host)\n"
    "  --matrix-out    rank 0 writes the first epoch's matrix: a line 'n N', then lines\n"
    "                  'src dst bytes' (commsched-analyze --matrix reads it)\n"
    "  --matrix-only N with --matrix-out: rank 0 writes the matrix an N-rank job would\n"
    "                  exchange and the program exits without communicating (for\n"
    "                  commsched-analyze --matrix at any size)\n"
    "  --call          alltoallv (default); alltoall: MPI_Alltoall of --unit bytes with every\n"
    "                  rank (the pattern options are ignored); neighbor: the pattern as\n"
    "                  MPI_Neighbor_alltoallv on a distributed graph of its non-zero messages\n"
    "                  (a new graph whenever the pattern changes); ialltoallv: the pattern as\n"
    "                  MPI_Ialltoallv, completed by MPI_Wait\n"
    "  --late-us       the last rank sleeps this many microseconds before every call, after\n"
    "                  the barrier that precedes it: load imbalance (default 0)\n"
    "  --compute-us    computation (a spin without MPI calls) of this many microseconds in\n"
    "                  every timed call: after a blocking call returns; between an\n"
    "                  ialltoallv's start and its wait, where the exchange may overlap it\n"
    "                  (default 0)\n"
    "Prints pattern/ranks/iterations/bytes_per_iter, errors, checksum (independent of timing),\n"
    "alltoallv_total_s (the per-call times summed over every call, warm-up included),\n"
    "time_per_iteration_s (median over the timed iterations of the per-call time above) and\n"
    "time_stats_s=min,p10,p25,median,p75,p90,max of the same per-call times.\n"
    "Exit status: 0 no errors, 1 data errors, 2 bad arguments.\n";

/// Empty string on success, else the message for the user.
std::string parse_args(int argc, char** argv, Options& o) {
  for (int a = 1; a < argc; ++a) {
    const std::string_view flag = argv[a];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (a + 1 >= argc) return "missing value after " + std::string(flag);
    const char* value = argv[++a];
    auto need = [&](std::int64_t lo, std::int64_t hi) -> std::optional<std::int64_t> {
      return parse_int(value, lo, hi);
    };
    std::optional<std::int64_t> v;
    if (flag == "--pattern") {
      auto k = parse_pattern(value);
      if (!k) return "unknown pattern '" + std::string(value) + "'";
      o.pattern.kind = *k;
    } else if (flag == "--degree") {
      if (!(v = need(1, INT_MAX))) return "--degree needs an integer >= 1";
      o.pattern.degree = static_cast<int>(*v);
    } else if (flag == "--unit") {
      if (!(v = need(1, INT_MAX))) return "--unit needs an integer >= 1";
      o.pattern.unit = *v;
    } else if (flag == "--iterations") {
      if (!(v = need(1, INT_MAX / 2))) return "--iterations needs an integer >= 1";
      o.iterations = static_cast<int>(*v);
    } else if (flag == "--seed") {
      if (!(v = need(0, INT64_MAX))) return "--seed needs an integer >= 0";
      o.pattern.seed = static_cast<std::uint64_t>(*v);
    } else if (flag == "--late-us") {
      if (!(v = need(0, 10000000))) return "--late-us needs an integer from 0 to 10000000";
      o.late_us = static_cast<int>(*v);
    } else if (flag == "--compute-us") {
      if (!(v = need(0, 10000000))) return "--compute-us needs an integer from 0 to 10000000";
      o.compute_us = static_cast<int>(*v);
    } else if (flag == "--warmup") {
      if (!(v = need(0, INT_MAX / 2))) return "--warmup needs an integer >= 0";
      o.warmup = static_cast<int>(*v);
    } else if (flag == "--cycle") {
      if (!(v = need(0, INT_MAX))) return "--cycle needs an integer >= 0";
      o.cycle = static_cast<int>(*v);
    } else if (flag == "--change-every") {
      if (!(v = need(0, INT_MAX))) return "--change-every needs an integer >= 0";
      o.change_every = static_cast<int>(*v);
    } else if (flag == "--nonuniformity") {
      char* end = nullptr;
      const double l = std::strtod(value, &end);
      if (end == value || *end != '\0' || !(l > 0.0 && l <= 1.0))
        return "--nonuniformity needs a number in (0, 1]";
      o.pattern.nonuniformity = l;
    } else if (flag == "--clock") {
      if (std::string_view(value) == "monotonic") o.monotonic = true;
      else if (std::string_view(value) == "wtime") o.monotonic = false;
      else return "--clock needs wtime or monotonic";
    } else if (flag == "--matrix-out") {
      o.matrix_out = value;
    } else if (flag == "--call") {
      const std::string_view c = value;
      if (c == "alltoallv") o.call = Options::Call::alltoallv;
      else if (c == "alltoall") o.call = Options::Call::alltoall;
      else if (c == "neighbor") o.call = Options::Call::neighbor;
      else if (c == "ialltoallv") o.call = Options::Call::ialltoallv;
      else return "--call needs alltoallv, alltoall, neighbor or ialltoallv";
    } else if (flag == "--matrix-only") {
      if (!(v = need(1, 1 << 20))) return "--matrix-only needs a rank count >= 1";
      o.matrix_only = static_cast<int>(*v);
    } else {
      return "unknown option " + std::string(flag);
    }
  }
  if (o.matrix_only > 0 && o.matrix_out.empty()) return "--matrix-only needs --matrix-out";
  return {};
}

// ---------------------------------------------------------------------------------------------

struct Exchange {  // one rank's arguments for one epoch
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
  std::int64_t send_total = 0, recv_total = 0;
};

/// Contiguous blocks in rank order; false if a total does not fit an MPI int count.
bool build_exchange(const Pattern& pattern, int n, int rank, Exchange& x) {
  std::vector<std::int64_t> row, col;
  pattern.row(rank, row);
  pattern.column(rank, col);
  x.sendcounts.assign(static_cast<std::size_t>(n), 0);
  x.sdispls.assign(static_cast<std::size_t>(n), 0);
  x.recvcounts.assign(static_cast<std::size_t>(n), 0);
  x.rdispls.assign(static_cast<std::size_t>(n), 0);
  x.send_total = x.recv_total = 0;
  for (int j = 0; j < n; ++j) {
    if (x.send_total + row[j] > INT_MAX || x.recv_total + col[j] > INT_MAX) return false;
    x.sendcounts[j] = static_cast<int>(row[j]);
    x.sdispls[j] = static_cast<int>(x.send_total);
    x.send_total += row[j];
    x.recvcounts[j] = static_cast<int>(col[j]);
    x.rdispls[j] = static_cast<int>(x.recv_total);
    x.recv_total += col[j];
  }
  return true;
}

/// --compute-us: computation that makes no MPI call.
void spin_us(int us) {
  if (us <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

/// --call alltoall: `unit` bytes to and from every rank, blocks in rank order.
void uniform_blocks(int n, std::int64_t unit, Exchange& x) {
  const int u = static_cast<int>(std::min<std::int64_t>(unit, INT_MAX / std::max(n, 1)));
  for (int j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    x.sendcounts[k] = x.recvcounts[k] = u;
    x.sdispls[k] = x.rdispls[k] = j * u;
  }
  x.send_total = x.recv_total = static_cast<std::int64_t>(n) * u;
}

/// --call neighbor: the exchange's non-zero messages as a distributed graph, with its counts
/// and displacements listed per neighbour.
struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
};

void make_graph(int n, const Exchange& x, Graph& g) {
  if (g.comm != MPI_COMM_NULL) MPI_Comm_free(&g.comm);
  g = Graph{};
  std::vector<int> sources, destinations;
  for (int j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    if (x.sendcounts[k] > 0) {
      destinations.push_back(j);
      g.sendcounts.push_back(x.sendcounts[k]);
      g.sdispls.push_back(x.sdispls[k]);
    }
    if (x.recvcounts[k] > 0) {
      sources.push_back(j);
      g.recvcounts.push_back(x.recvcounts[k]);
      g.rdispls.push_back(x.rdispls[k]);
    }
  }
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()),
                                 sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(destinations.size()), destinations.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g.comm);
}

/// Rank 0 writes 'n N', then every non-zero of the matrix as 'src dst bytes' (collective; rows
/// gathered): commsched-analyze's --matrix format.
void write_matrix(const Exchange& x, int n, int rank, const std::string& path) {
  std::vector<long long> mine;  // dst, bytes pairs
  for (int j = 0; j < n; ++j)
    if (x.sendcounts[j] > 0) {
      mine.push_back(j);
      mine.push_back(x.sendcounts[j]);
    }
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(rank == 0 ? n : 1)),
      displs(static_cast<std::size_t>(rank == 0 ? n : 1));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<long long> all(1);
  if (rank == 0) {
    long long total = 0;
    for (int r = 0; r < n; ++r) {
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    all.resize(static_cast<std::size_t>(std::max<long long>(1, total)));
  }
  mine.push_back(0);  // never a null send buffer
  MPI_Gatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), displs.data(),
              MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "irregular_exchange: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "n %d\n", n);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < counts[r]; k += 2)
      std::fprintf(f, "%d %lld %lld\n", r, all[displs[r] + k], all[displs[r] + k + 1]);
  std::fclose(f);
}

/// The matrix an n-rank job exchanges (first epoch), every row computed here: no MPI traffic.
bool write_whole_matrix(PatternParams p, int n, const std::string& path) {
  p.degree = std::min(p.degree, n);
  const Pattern pattern(p, n, 0);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "irregular_exchange: cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(f, "n %d\n", n);
  std::vector<std::int64_t> row;
  for (int i = 0; i < n; ++i) {
    pattern.row(i, row);
    for (int j = 0; j < n; ++j)
      if (row[static_cast<std::size_t>(j)] > 0)
        std::fprintf(f, "%d %d %lld\n", i, j, static_cast<long long>(row[static_cast<std::size_t>(j)]));
  }
  return std::fclose(f) == 0;
}

int run(int argc, char** argv) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  Options o;
  // argv is the same on every rank, so every rank takes the same branch here.
  if (std::string err = parse_args(argc, argv, o); !err.empty()) {
    if (rank == 0) std::fprintf(stderr, "irregular_exchange: %s\n%s", err.c_str(), kUsage);
    return 2;
  }
  if (o.help) {
    if (rank == 0) std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.matrix_only > 0) {
    if (rank == 0) return write_whole_matrix(o.pattern, o.matrix_only, o.matrix_out) ? 0 : 1;
    return 0;
  }
  o.pattern.degree = std::min(o.pattern.degree, n);

  const int total_iterations = o.warmup + o.iterations;
  std::vector<double> times;  // slowest rank's MPI_Alltoallv time, timed iterations only
  double all_calls_s = 0;     // the same over every call, warm-up included: the whole job's
  long long errors = 0;
  int error_lines = 0;
  std::int64_t timed_bytes_local = 0;
  std::uint64_t local_hash = kFnvOffset;

  Exchange x;
  Graph graph;  // --call neighbor
  std::vector<std::uint8_t> sendbuf, recvbuf, want;  // want: one message as it should arrive
  std::int64_t epoch = -1;
  for (int it = 0; it < total_iterations; ++it) {
    std::int64_t e = o.change_every > 0 ? it / o.change_every : 0;
    if (o.cycle > 0) e %= o.cycle;
    if (e != epoch) {
      epoch = e;
      const Pattern pattern(o.pattern, n, static_cast<std::uint64_t>(epoch));
      int fits = build_exchange(pattern, n, rank, x) ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (!fits) {
        if (rank == 0)
          std::fprintf(stderr,
                       "irregular_exchange: a rank's total exceeds INT_MAX bytes; lower --unit "
                       "or --degree\n");
        return 2;
      }
      if (o.call == Options::Call::alltoall) uniform_blocks(n, o.pattern.unit, x);
      if (o.call == Options::Call::neighbor) make_graph(n, x, graph);
      // Never a zero-length allocation, so no rank passes a null buffer.
      sendbuf.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, x.send_total)));
      recvbuf.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, x.recv_total)));
      if (epoch == 0 && !o.matrix_out.empty()) write_matrix(x, n, rank, o.matrix_out);
    }

    for (int j = 0; j < n; ++j) {
      const std::uint32_t key = message_key(rank, j, it);
      std::uint8_t* p = sendbuf.data() + x.sdispls[j];
      fill_payload(key, p, x.sendcounts[j]);
    }
    std::fill(recvbuf.begin(), recvbuf.end(), std::uint8_t{0});

    MPI_Barrier(MPI_COMM_WORLD);
    if (o.late_us > 0 && rank == n - 1)
      std::this_thread::sleep_for(std::chrono::microseconds(o.late_us));
    // The measured interval is the whole MPI_Alltoallv call, so when libcommsched is preloaded
    // it includes the library's per-call agreement (and its learning work): the honest cost.
    const double t0 = o.monotonic ? monotonic_now() : MPI_Wtime();
    if (o.call == Options::Call::alltoall) {
      MPI_Alltoall(sendbuf.data(), x.sendcounts[0], MPI_BYTE, recvbuf.data(), x.recvcounts[0],
                   MPI_BYTE, MPI_COMM_WORLD);
    } else if (o.call == Options::Call::neighbor) {
      MPI_Neighbor_alltoallv(sendbuf.data(), graph.sendcounts.data(), graph.sdispls.data(),
                             MPI_BYTE, recvbuf.data(), graph.recvcounts.data(),
                             graph.rdispls.data(), MPI_BYTE, graph.comm);
    } else if (o.call == Options::Call::ialltoallv) {
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Ialltoallv(sendbuf.data(), x.sendcounts.data(), x.sdispls.data(), MPI_BYTE,
                     recvbuf.data(), x.recvcounts.data(), x.rdispls.data(), MPI_BYTE,
                     MPI_COMM_WORLD, &req);
      spin_us(o.compute_us);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Alltoallv(sendbuf.data(), x.sendcounts.data(), x.sdispls.data(), MPI_BYTE,
                    recvbuf.data(), x.recvcounts.data(), x.rdispls.data(), MPI_BYTE,
                    MPI_COMM_WORLD);
    }
    if (o.call != Options::Call::ialltoallv) spin_us(o.compute_us);
    double dt = 0;
    if (o.monotonic) {  // makespan: latest end minus earliest start, one clock for all ranks
      double span[2] = {-t0, monotonic_now()};
      MPI_Allreduce(MPI_IN_PLACE, span, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      dt = span[1] + span[0];
    } else {
      dt = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    all_calls_s += dt;
    if (it >= o.warmup) {
      times.push_back(dt);
      timed_bytes_local += x.send_total;
    }

    for (int src = 0; src < n; ++src) {
      const std::uint32_t key = message_key(src, rank, it);
      const std::uint8_t* p = recvbuf.data() + x.rdispls[src];
      const auto len = static_cast<std::size_t>(x.recvcounts[src]);
      want.resize(std::max(want.size(), len));
      fill_payload(key, want.data(), x.recvcounts[src]);
      if (len == 0 || std::memcmp(p, want.data(), len) == 0) continue;
      for (std::size_t k = 0; k < len; ++k) {
        if (p[k] == want[k]) continue;
        ++errors;
        if (error_lines++ < kMaxErrorLines)
          std::fprintf(stderr,
                       "[irregular_exchange r%d] iteration %d: byte %zu from rank %d is 0x%02x, "
                       "expected 0x%02x\n",
                       rank, it, k, src, p[k], want[k]);
      }
    }
    local_hash = fnv1a(local_hash, recvbuf.data(), static_cast<std::size_t>(x.recv_total));
  }

  if (graph.comm != MPI_COMM_NULL) MPI_Comm_free(&graph.comm);
  long long global_errors = 0;
  MPI_Allreduce(&errors, &global_errors, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long timed_bytes = 0;
  const long long timed_bytes_ll = timed_bytes_local;
  MPI_Reduce(&timed_bytes_ll, &timed_bytes, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> hashes(rank == 0 ? static_cast<std::size_t>(n) : 1);
  MPI_Gather(&local_hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    std::uint64_t checksum = kFnvOffset;
    for (std::uint64_t h : hashes) {  // rank order, byte order fixed: independent of timing
      std::uint8_t le[8];
      for (int b = 0; b < 8; ++b) le[b] = static_cast<std::uint8_t>(h >> (8 * b));
      checksum = fnv1a(checksum, le, sizeof le);
    }
    std::printf("pattern=%s ranks=%d iterations=%d bytes_per_iter=%lld\n",
                kPatternNames[static_cast<int>(o.pattern.kind)].data(), n, o.iterations,
                timed_bytes / o.iterations);
    std::printf("errors=%lld\n", global_errors);
    std::printf("checksum=%016llx\n", static_cast<unsigned long long>(checksum));
    std::printf("alltoallv_total_s=%.9g\n", all_calls_s);
    commsched::app_util::print_times(times);
    std::fflush(stdout);
  }
  return global_errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
