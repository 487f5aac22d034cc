#pragma once
/// Whether the library's non-blocking engine pays on one communicator (COMMSCHED_NONBLOCKING
/// auto): a trial that needs no agreement while it runs, and a verdict from sums every rank can
/// add up.
///
/// A start call must not block, so the calls cannot agree as the blocking all-to-all's do.
/// Instead the arm a call runs is a function of its index on the communicator alone, the same on
/// every rank: `kWarm` calls as MPI's own, then `kRounds` rounds of one call per arm (MPI's own,
/// `eager`, `shift`), each round in another of the six orders so that no arm always comes first,
/// then MPI's own again until a verdict takes effect.
///
/// What a call costs the job is measured as the time from its start to the next start on the
/// same communicator: the iteration it belongs to, computation, waits and other calls included,
/// which is what the user pays. An interval is not counted (`valid` false) when the engine's
/// exchange was still under way at the next start: calls started back to back before their
/// waits say nothing about an exchange's cost, and then MPI's own stays.
///
/// Every rank keeps its rounds; Totals add up across ranks (an allreduce of sums), and
/// verdict() on the sum is sequential: an engine arm replaces MPI's own only when its mean
/// log-ratio is at most log(1 - kMargin), below zero by one standard error, and it won more
/// rounds than it lost by two standard deviations of a fair coin (a sign test, robust to the
/// heavy tails of a network's intervals); MPI's own stays when every arm is, by two standard
/// errors, no kMargin faster, or after kMaxRounds; otherwise the rounds go on. The intervals of
/// one iteration are alike on every rank, so both tests count a round once however many ranks
/// saw it. An undecided trial costs little: its arms are within a few per cent of each other.
#include <array>
#include <cstdint>
#include <optional>

namespace commsched::learn {

class EngineTrial {
 public:
  enum Arm : int { native = 0, eager = 1, shift = 2 };
  static constexpr int kArms = 3;
  static constexpr std::uint32_t kWarm = 2;    ///< first calls, as MPI's own, not measured
  static constexpr std::uint32_t kRounds = 12;     ///< rounds before any verdict
  static constexpr std::uint32_t kMaxRounds = 96;  ///< then MPI's own, undecided or not
  static constexpr double kMargin = 0.03;  ///< how much faster an engine arm must be
  static constexpr std::uint32_t kEnd = kWarm + kMaxRounds * kArms;  ///< first index after it

  /// The arm call `index` runs in the trial; nullopt outside it (before kWarm, from kEnd on).
  /// Round r runs the six orders' (r mod 6)-th.
  static std::optional<Arm> arm(std::uint32_t index);

  /// The interval after call `index` (its start to the next start on the communicator).
  void observe(std::uint32_t index, double seconds, bool valid);

  /// What a rank contributes; element-wise sums over ranks are the job's.
  struct Totals {
    std::array<double, kArms> log_ratio{};  ///< per arm: sum over rounds of log(arm / native)
    std::array<double, kArms> log_sq{};     ///< per arm: the same, squared
    std::array<double, kArms> wins{};       ///< per arm: rounds it beat native in
    double rounds = 0;                      ///< complete rounds counted
    double broken = 0;                      ///< rounds with an interval not counted
    static constexpr int kValues = 3 * kArms + 2;
    std::array<double, kValues> pack() const;
    static Totals unpack(const double* v);

    /// An engine arm against native over the counted rounds of `ranks` ranks (rounds > 0).
    struct Measure {
      double mean_log;  ///< mean log-ratio arm / native
      double se;        ///< its standard error, a round counted once whatever the ranks
      double won;       ///< share of rounds the arm beat native in
      double sign_z;    ///< that share against a fair coin, in standard deviations
    };
    Measure measure(Arm a, int ranks) const;
  };
  const Totals& totals() const { return totals_; }
  /// Rounds seen, counted or broken.
  std::uint32_t rounds_seen() const { return rounds_seen_; }

  /// The arm the sums of `ranks` ranks choose, where the rank with fewest rounds has seen
  /// `fewest`; nullopt while the evidence is not yet enough either way.
  static std::optional<Arm> verdict(const Totals& sum, int ranks, std::uint32_t fewest);

 private:
  std::array<double, kArms> round_s_{};
  std::uint32_t round_seen_ = 0;  // arms of the current round observed
  bool round_valid_ = true;
  std::uint32_t rounds_seen_ = 0;
  Totals totals_;
};

const char* arm_name(EngineTrial::Arm a);

}  // namespace commsched::learn
