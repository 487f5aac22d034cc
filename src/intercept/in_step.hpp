#pragma once
/// COMMSCHED_IN_STEP on the MPI side: a barrier before each blocking all-to-all where the job
/// runs faster with its ranks entering together, and the job-wide trial that finds out
/// (learn/in_step.hpp). Each communicator (each family of entry points on it) has a gate that
/// runs once before every intercepted call, on every rank of it; what the gate does depends
/// only on its count of calls and on values agreed over the communicator, so every rank does the
/// same, and its collectives never cross the application's.
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

  /// Calls timed before the gauge, after the first (connections, first touch).
  static constexpr int kGaugeCalls = 12;
  /// A communicator that waits for word of packet loss asks its ranks once per this many calls.
  static constexpr int kWatchCalls = 16;

 private:
  enum class Mode { off, gauge, watch, trial, on };
  void step(InStepJob& job, MPI_Comm comm);
  void gauge(InStepJob& job, MPI_Comm comm);
  void watch(InStepJob& job, MPI_Comm comm);
  void join_trial(const InStepJob& job);
  void trial(InStepJob& job, MPI_Comm comm);
  void fail();

  Mode mode_ = Mode::off;
  int calls_ = 0;  // before the gauge, then while watching
  double entries_[kGaugeCalls] = {};  // the job clock at the entries of calls 1 to kGaugeCalls
  int cycle_ = 1;                      // learn::in_step_cycle of those
  double period_ = 0;                  // the shortest mean time between them over ranks
  double gauge_s_ = 0;                 // this rank's time in the gauge's first allreduce
  // The job clock this rank sent with the last call and loss_flag, and their maximum over the
  // communicator: the epoch every rank runs the next call in, and whether any has seen loss.
  std::array<double, 2> mine_{}, agreed_{};
  double decide_at_ = 0;  // the job clock at which the trial ends, agreed as it began
  learn::InStepMeter meter_;
  MPI_Request request_ = MPI_REQUEST_NULL;  // agreed_ in flight, completed at the next call
};

}  // namespace commsched::intercept
