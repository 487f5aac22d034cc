#pragma once
/// The per-communicator pattern state machine (DESIGN.md "learn", "Agreement"). Pure: the MPI
/// side feeds it this rank's byte counts and the agreed (min-reduced) vote of all ranks, and
/// every rank, seeing the same agreed values, takes the same transitions.
///
/// While learning, a rank's vote is how often its current counts appeared among its last
/// kHistory calls, not only consecutively: patterns that alternate on one communicator (the
/// forward and backward transposes of an FFT) are learned too. Learning only triggers the
/// gather of this call's actual matrix, so a hash collision here costs a gather, never a stale
/// schedule.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace commsched::learn {

enum class Action {
  native,           ///< run this call natively
  learn_and_run,    ///< all ranks saw the same counts K times: gather, plan, then run the plan
  run_plan,         ///< every rank's counts equal the learned pattern: run its plan
};

class Learner {
 public:
  explicit Learner(int learn_calls) : learn_calls_(learn_calls < 1 ? 1 : learn_calls) {}

  /// This rank's vote for the current call, from its per-peer send and receive bytes. `can_run`
  /// is false when this rank could not run the learned plan this call (e.g. a message too large).
  std::int64_t vote(std::span<const Bytes> send, std::span<const Bytes> recv, bool can_run) {
    return vote(send, recv, counts_hash(send, recv), can_run);
  }
  /// The same, with `hash` = counts_hash(send, recv) already computed by the caller.
  std::int64_t vote(std::span<const Bytes> send, std::span<const Bytes> recv, std::uint64_t hash,
                    bool can_run);

  /// A hash of one call's counts: equal counts hash equally (unequal ones almost never do;
  /// users compare the counts themselves where exactness matters).
  static std::uint64_t counts_hash(std::span<const Bytes> send, std::span<const Bytes> recv);

  /// Applies the minimum of all ranks' votes.
  Action decide(std::int64_t agreed_min);

  /// After learn_and_run: whether every rank could build the plan (agreed). On failure the
  /// pattern stays learned but runs native until the counts change.
  void planned(bool all_ok);

  bool optimised() const { return state_ == State::optimised; }
  /// The same as vote() with the counts of the previous vote (the caller knows they are), in
  /// the learning state, without comparing them again: adds `h` to the history.
  void repeat(std::uint64_t h);
  /// Learned, but runs native (planning failed or the strategy is native).
  bool pinned_native() const { return state_ == State::pinned_native; }
  bool learning() const { return state_ == State::learning; }
  /// Every rank's counts matched one cached pattern (agreed by the MPI side): continue from it,
  /// running its plan (or natively, `pinned`) while the counts stay.
  void adopt(bool pinned) { state_ = pinned ? State::pinned_native : State::optimised; }

  static constexpr std::size_t kHistory = 16;
  /// The vote of a rank whose counts are the learned pattern's (above any learn count).
  static constexpr std::int64_t kMatch = std::int64_t{1} << 40;
  /// How often (capped at the learn count) this rank's current counts appeared recently.
  int streak() const { return streak_; }

 private:
  enum class State { learning, optimised, pinned_native };
  bool same_as_last(std::span<const Bytes> send, std::span<const Bytes> recv) const;

  int learn_calls_;
  State state_ = State::learning;
  int streak_ = 0;
  // Hashes of the last kHistory calls' counts, a ring: slot next_ is overwritten next, and
  // the first filled_ slots hold hashes.
  std::size_t next_ = 0, filled_ = 0;
  std::array<std::uint64_t, kHistory> history_{};
  std::vector<Bytes> last_;  // send bytes then receive bytes of the previous call
};

}  // namespace commsched::learn
