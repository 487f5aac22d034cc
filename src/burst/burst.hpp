#pragma once
/// Isend/Irecv bursts without MPI: what a burst looks like (its signature), when it has repeated
/// often enough to be substituted, and the order in which its deferred sends are released.
///
/// A burst is the requests a rank posts between two moments at which none of its requests is
/// outstanding. The MPI glue (src/intercept/p2p.cpp) records each post as a Post and asks this
/// module what to do; everything here is plain data and is unit-tested in one process.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace commsched::burst {

enum class Kind : std::uint8_t { send, recv };

/// One request posted by the application.
struct Post {
  Kind kind = Kind::send;
  std::uint32_t comm = 0;    ///< the library's number for the communicator
  int peer = 0;              ///< rank in that communicator
  int tag = 0;
  std::uint64_t bytes = 0;   ///< count × type size
  int distance = 0;          ///< core::send_order(own rank, peer, size): the shift order's key

  friend bool operator==(const Post&, const Post&) = default;
};

/// The posts of one burst in the order the application made them.
using Signature = std::vector<Post>;

std::uint64_t signature_hash(std::span<const Post> posts);

/// Counts how often the same burst repeated back to back. After `learn_calls` identical clean
/// bursts, the next one is expected to repeat it and may be substituted; a burst that differs
/// resets the count, so a pattern that stops repeating leaves no stale schedule behind.
class Learner {
 public:
  explicit Learner(int learn_calls) : learn_calls_(learn_calls < 1 ? 1 : learn_calls) {}

  /// A burst ended. `clean` is false when something in it (a wildcard receive, a cancel, a
  /// persistent or synchronous send ...) forbids substituting it.
  void finish(const Signature& posts, bool clean);

  /// The signature the next burst should repeat, or nullptr while nothing is learned.
  [[nodiscard]] const Signature* expected() const {
    return repeats_ >= learn_calls_ ? &last_ : nullptr;
  }
  [[nodiscard]] int repeats() const { return repeats_; }
  /// Hash of the last clean burst (0 after an unclean one).
  [[nodiscard]] std::uint64_t last_hash() const { return last_hash_; }

 private:
  int learn_calls_;
  int repeats_ = 0;
  Signature last_;
  std::uint64_t last_hash_ = 0;
};

/// The order in which a burst's deferred sends are released: by ring distance from the sender
/// (the shift order of paper 000 §5.1: if every rank sends to rank+1 first, then rank+2, ..., no
/// two ranks target one receiver at the same step of a dense exchange). The sort is stable, so
/// sends to one peer on one communicator keep the order the application posted them in: MPI's
/// non-overtaking rule for each (peer, tag, communicator) holds. Returns indices into `sends`.
std::vector<std::size_t> release_order(std::span<const Post> sends);

/// Fewest distinct destinations for which holding a burst's sends may pay: with one or two, the
/// shift order cannot spread the senders over the receivers, and holding only delays the sends.
inline constexpr std::size_t kHoldMinPeers = 3;

/// Whether holding a learned burst's sends and releasing them in shift order can help at all:
/// the sends of `posts` go to at least kHoldMinPeers distinct (communicator, peer) pairs and the
/// shift order differs from the order the application posted them in. Any other burst is left
/// to MPI untouched (a measurement then decides among the bursts this allows).
bool hold_can_help(std::span<const Post> posts);

/// True when releasing `sends` in `order` keeps, for every (communicator, peer, tag), the
/// relative order of the posts (the property MPI's matching relies on).
bool keeps_matching_order(std::span<const Post> sends, std::span<const std::size_t> order);

}  // namespace commsched::burst
