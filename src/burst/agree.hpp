#pragma once
/// Level `collective` without MPI: what the ranks must agree on before a burst may run as one
/// collective exchange, in a form one MPI_SUM reduction of a few 64-bit words checks, and the
/// layout of the packed exchange. The protocol itself (when votes are cast, who waits) lives in
/// src/intercept/p2p.cpp; DESIGN.md "Isend/Irecv bursts" explains why it cannot deadlock.
///
/// Fingerprints are sums modulo 2^64 of pseudo-random 64-bit keys: every rank adds its share,
/// and the total is zero exactly when the property holds, except with probability about 2^-64
/// per vote (a key collision), which is far below any hardware error rate.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "burst/burst.hpp"

namespace commsched::burst {

/// A 64-bit key of a few values (splitmix64 finalisers chained): distinct inputs give
/// independent-looking keys.
std::uint64_t key(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0, std::uint64_t d = 0,
                  std::uint64_t e = 0);

/// This rank's share of an equality test: the shares of all ranks sum to zero when every rank
/// passed the same `value` (value·(K(r) − K(r+1 mod n)) telescopes), and to a pseudo-random
/// non-zero word otherwise.
std::uint64_t equal_share(std::uint64_t value, int rank, int size);

/// A message's matching key: MPI matches the k-th send from `src` to `dst` with `tag` to the k-th
/// such receive. A rank adds the key for every send it posts on the communicator and subtracts
/// it for every receive: the ranks' running sums total zero when every pair has posted as many
/// sends as receives, i.e. nothing is in flight and the next burst's k-th message of each
/// (src, dst, tag) meets the k-th receive in both numbering systems.
std::uint64_t match_key(int src, int dst, int tag);

/// The content share of one burst on one communicator (`rank` the poster, peers ranks of the
/// same communicator): + key(src, dst, tag, ordinal, bytes) per send, − the same per receive.
/// Over all ranks it is zero when every send has a receive with the same size, ordinal and tag.
std::uint64_t content_share(std::span<const Post> posts, int rank);

/// The words of a promise vote, summed over the ranks. `follow`: the rank promises to make the
/// learned calls and run the learned burst next (so it will vote again before it can block);
/// `yes`: it also asks to run that burst as a collective exchange (implies follow).
/// `elapsed_us`: how long this rank's previous burst took (first post to completion), summed
/// over the ranks, so every rank learns the same mean.
enum Field : std::size_t { yes, follow, quit, same, aligned, content, elapsed_us, kFields };
using Vote = std::array<std::uint64_t, kFields>;

/// Every rank promised to follow: each will cast its next vote before it can block, so a rank
/// may wait for that next vote's result.
bool all_follow(const Vote& sum, int size);

enum class Verdict {
  go,        ///< every rank promised the same burst, consistent and aligned: run it collectively
  native,    ///< not every rank is ready: run this burst natively, vote again next time
  quit,      ///< a rank left the pattern or the ranks disagree: no more votes this run
};
Verdict verdict(const Vote& sum, int size);

/// Whether a burst every rank agreed on runs as a collective exchange or at level local: the
/// ranks feed it the same agreed samples (mean burst time over ranks) in the same order, so they
/// take the same decisions. It measures `samples` bursts each way, alternating, keeps the faster
/// by median, and measures the other way again every `recheck` agreed bursts, so a collective
/// exchange that costs more than it saves (its votes, packing, the Alltoallv path) is dropped.
/// With a `margin` the collective way wins only when its estimate is that fraction below local's
/// (level local uses the same trial for held bursts against native ones, "collective" = held).
/// The estimate of each way is the median of its samples, or with `fastest` the fastest one:
/// one rank's own burst times on a shared host are delayed at random, never hastened, so the
/// fastest shows what each way costs where the median shows how the neighbours ran.
class ModeTrial {
 public:
  ModeTrial(int samples, int recheck, double margin = 0, bool fastest = false)
      : samples_(samples < 1 ? 1 : samples), recheck_(recheck), margin_(margin),
        fastest_(fastest) {}
  /// The way the next agreed burst runs.
  [[nodiscard]] bool collective() const;
  /// An agreed burst ran (`collective` or local) and took `seconds` on average over the ranks.
  void sample(bool collective, double seconds);
  [[nodiscard]] bool decided() const { return decided_; }
  /// The way the last decision kept (meaningful once decided).
  [[nodiscard]] bool winner_collective() const { return winner_collective_; }

 private:
  [[nodiscard]] bool collective_faster() const;

  int samples_;
  int recheck_;
  double margin_;
  bool fastest_;
  bool decided_ = false;
  bool winner_collective_ = true;
  int since_decision_ = 0;
  std::vector<double> local_, collective_;
};

/// The intervening calls between two bursts (blocking collectives and the like) must repeat too:
/// a rank promises to follow its cycle, and the ranks compare their cycles in the vote.
class CycleLearner {
 public:
  explicit CycleLearner(int learn_calls) : learn_calls_(learn_calls < 1 ? 1 : learn_calls) {}
  /// The calls made between the previous burst and the one that starts now.
  void finish(const std::vector<std::uint64_t>& calls);
  [[nodiscard]] const std::vector<std::uint64_t>* expected() const {
    return repeats_ >= learn_calls_ ? &last_ : nullptr;
  }
  [[nodiscard]] std::uint64_t hash() const;
  void reset() { repeats_ = 0; last_.clear(); }

 private:
  int learn_calls_;
  int repeats_ = 0;
  std::vector<std::uint64_t> last_;
};

/// What an intercepted call is to the cycle: its id (the same for the C and Fortran spellings:
/// "Allreduce", "MPI_Allreduce", "pmpi_allreduce_", "mpi_allreduce_f08") and whether it may
/// appear in a cycle (a blocking collective: every rank of its communicator makes it at the
/// same place of the cycle, so it cannot wait on a rank that runs ahead into the next burst).
struct CallClass {
  std::uint64_t id = 0;
  bool in_cycle = false;
};
CallClass classify_call(std::string_view name);

/// Where each post's data sits in the packed exchange buffer of its kind: per peer, the posts to
/// (or from) that peer ordered by (tag, ordinal), the same order on both sides of a message.
struct Layout {
  std::vector<int> counts;           ///< bytes per peer
  std::vector<int> displs;           ///< byte offset per peer
  std::vector<std::size_t> offset;   ///< per post of the kind (in post order): its byte offset
  std::vector<std::size_t> index;    ///< per post of the kind (in post order): index in `posts`
  std::uint64_t total = 0;
  bool fits = true;                  ///< false when a count or offset exceeds int
};
Layout layout(std::span<const Post> posts, Kind kind, int size);

}  // namespace commsched::burst
