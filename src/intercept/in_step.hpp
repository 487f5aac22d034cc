#pragma once
/// COMMSCHED_IN_STEP on the MPI side: a barrier before each blocking all-to-all where the job
/// runs faster with its ranks entering together, and the job-wide trial that finds out
/// (learn/in_step.hpp); after it, the phase trial, which asks the same of the patterns'
/// schedules: whether the job runs faster with every communicator phased at once. Each
/// communicator (each family of entry points on it) has a gate that runs once before every
/// intercepted call, on every rank of it; what the gate does depends only on its count of calls
/// and on values agreed over the communicator, so every rank does the same, and its collectives
/// never cross the application's.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>

#include "learn/in_step.hpp"
#include "settings/settings.hpp"

namespace commsched::intercept {

/// What this rank's gates share: the mode as applied, the job's clock, and the decisions, for
/// the report.
struct InStepJob {
  settings::InStep mode = settings::InStep::off;
  learn::InStepClock clock;
  double t0 = 0;  ///< PMPI_Wtime at setup, after a collective over MPI_COMM_WORLD
  std::int64_t synced = 0;       ///< communicators decided in step (or all, with `on`)
  std::int64_t unsynced = 0;     ///< communicators the trial left native
  std::int64_t short_calls = 0;  ///< communicators where a barrier would cost too much
  /// Communicators waiting for word of a retransmission timeout (InStepGate::watch): at the
  /// end, those whose ranks never heard of one.
  std::int64_t lossless = 0;
  double ratio = -1;             ///< the last decision's learn::in_step_ratio here
  /// The phase trial's (InStepGate): communicators whose pattern it gave its schedule, and
  /// those it left as they were; the last decision's phased time over native's here.
  std::int64_t phased = 0;
  std::int64_t unphased = 0;
  double phase_ratio = -1;
  int phase_rounds = 0;  ///< the rounds that decision took
  /// Its pool, as `pool` is the in-step trial's.
  std::array<double, 4> phase_pool{};
  /// What every communicator's trial measured on this rank (learn::InStepMeter::pour): each
  /// decision is made on the pools of the communicator's ranks.
  std::array<double, 4> pool{};
  /// core::tcp_timeouts at setup, read under `auto` only (-1: unknown, or not asked).
  long long timeouts = -1;
  std::string netstat;  ///< where the count is read (COMMSCHED_IN_STEP_NETSTAT)
  /// Whether this rank's node has seen a TCP retransmission timeout since setup, or a rank it
  /// shares a communicator with has heard so: each of the gates' agreements carries it (a MAX
  /// beside the clock), so it spreads through the job's communicators. Under `auto` a
  /// communicator runs the trial only once its ranks have heard it: in step wins back what an
  /// incast loses to those timeouts, and where there are none its trial can only cost.
  bool loss_seen = false;
  /// Whether a communicator of this rank's phase trial kept the schedules, or a rank it shares
  /// a communicator with has heard so: carried beside loss_seen, it lets the job's other
  /// communicators keep theirs on less evidence (learn::phase_verdict).
  bool phases_kept = false;
  double checked_at = -1;  ///< the job clock at the last read of the count
  /// `auto` and `trial` apply only under COMMSCHED_STRATEGY=auto, and nothing under
  /// MPI_THREAD_MULTIPLE.
  /// Where `speaks` (rank 0), says once when `auto` finds no count to read.
  void configure(const settings::Settings& cfg, bool strategy_auto, bool threads, double now,
                 bool speaks);
  /// loss_seen, as 1 or 0 for an agreement, reading the count again where `now` (the job
  /// clock) is at least kLossCheck after the last read.
  double loss_flag(double now);
  /// An agreement's MAX (or SUM) of loss_flag over a communicator, learned into loss_seen.
  void heard(double agreed);
  /// What a gate's agreement before a call carries: the job clock `now`, loss_flag and
  /// phases_kept as 1 or 0; and what the MAX of those over a communicator teaches this rank.
  std::array<double, 3> says(double now);
  void hear(const std::array<double, 3>& agreed);
  static constexpr double kLossCheck = 0.1;
};

class InStepGate {
 public:
  /// At the state's creation; `size` is the communicator's (an intercommunicator's gate stays
  /// off).
  void start(InStepJob& job, int size, bool intercomm);
  /// Before each intercepted blocking call on the communicator, whichever path it then takes.
  void before_call(InStepJob& job, MPI_Comm comm) {
    if (mode_ != Mode::off) step(job, comm);
  }

  /// Completes the agreement still in flight, if any: before the communicator is freed, and
  /// before MPI_Finalize.
  void finish();

  /// Whether the gate asks, before each call, whether the phase trial may start.
  bool awaits_phases() const { return mode_ == Mode::kept || mode_ == Mode::left; }
  /// Where it does, before each call on every path: whether the pattern in force has a
  /// schedule the phase trial may try (agreed state, the same on every rank).
  void offer_phases(bool offered) { offered_ = offered; }
  /// Whether the phase trial is under way, and whether this call runs the schedule (set by
  /// before_call, alike on every rank).
  bool phase_trial() const { return mode_ == Mode::phases; }
  bool phased() const { return mode_ == Mode::phases && phased_; }
  /// Whether a call's path must ask the gate first: the phase trial is under way, or starts
  /// at the call if the offer stands.
  bool phases_pending() const {
    return mode_ == Mode::phases || (awaits_phases() && offered_);
  }
  /// The phase trial's verdict, handed over once: 1 the schedule won, -1 it did not, 0 none.
  int take_verdict() {
    const int v = verdict_;
    verdict_ = 0;
    return v;
  }
  /// The phase trial's epochs, in in-step epochs, the same on every communicator: long enough
  /// for calls a third of a second apart to fill a few (the busiest remaps of a 3-D FFT on a
  /// 64^3 mesh), short enough for a job of half a minute to see the verdict.
  static constexpr int kPhaseEpochScale = 4;

  /// Calls timed before the gauge, after the first (connections, first touch).
  static constexpr int kGaugeCalls = 12;
  /// A communicator that waits for word of packet loss asks its ranks once per this many calls.
  static constexpr int kWatchCalls = 16;

 private:
  // kept, left: the in-step trial decided (barrier or not), and the phase trial may follow.
  enum class Mode { off, gauge, watch, trial, on, kept, left, phases };
  void step(InStepJob& job, MPI_Comm comm);
  void gauge(InStepJob& job, MPI_Comm comm);
  void watch(InStepJob& job, MPI_Comm comm);
  void join_trial(const InStepJob& job);
  void trial(InStepJob& job, MPI_Comm comm);
  void send_clock(InStepJob& job, MPI_Comm comm, double now, bool blocking);
  double forecast();
  void start_phases(InStepJob& job, MPI_Comm comm);
  void phases(InStepJob& job, MPI_Comm comm);
  void fail();

  Mode mode_ = Mode::off;
  int calls_ = 0;  // before the gauge, then while watching
  double entries_[kGaugeCalls] = {};  // the job clock at the entries of calls 1 to kGaugeCalls
  int cycle_ = 1;                      // learn::in_step_cycle of those, the longest over ranks
  double period_ = 0;                  // the shortest mean time between them over ranks
  double gauge_s_ = 0;                 // this rank's time in the gauge's first allreduce
  // What this rank sent with the last call (InStepJob::says), and its maximum over the
  // communicator: the epoch every rank runs the next call in, whether any has seen loss, and
  // whether any has heard of schedules kept.
  std::array<double, 3> mine_{}, agreed_{};
  // In the trials: whether agreed_ holds a clock sent since the forecast last took one, and
  // the forecast of each call's entry, whose epoch says what the call runs.
  bool clock_pending_ = false;
  learn::EntryForecast forecast_;
  double decide_at_ = 0;  // the job clock at which the trial ends, agreed as it began
  learn::InStepMeter meter_;
  // The phase trial: offered (offer_phases), this call phased, the in-step trial's verdict,
  // the phase trial's own, its end and its meter.
  bool offered_ = false, phased_ = false, kept_ = false;
  int verdict_ = 0;
  double phase_decide_at_ = 0;
  int phase_round_ = 0;
  learn::InStepMeter phase_meter_;
  MPI_Request request_ = MPI_REQUEST_NULL;  // agreed_ in flight, completed at the next call
};

}  // namespace commsched::intercept
