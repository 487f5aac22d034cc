#include "intercept/in_step.hpp"

#include <array>
#include <string>

#include "core/log.hpp"
#include "core/netstat.hpp"

namespace commsched::intercept {

void InStepJob::configure(const settings::Settings& cfg, bool strategy_auto, bool threads,
                          double now) {
  mode = cfg.in_step;
  const bool trial = mode == settings::InStep::automatic || mode == settings::InStep::trial;
  if (threads || (trial && !strategy_auto)) mode = settings::InStep::off;
  clock.epoch_s = cfg.in_step_epoch;
  t0 = now;
  if (mode == settings::InStep::automatic) timeouts = core::tcp_timeouts();
}

bool InStepJob::may_gain() const {
  if (timeouts < 0) return true;
  const long long later = core::tcp_timeouts();
  return later < 0 || later > timeouts;
}

void InStepGate::start(InStepJob& job, int size, bool intercomm) {
  if (intercomm || size < 2 || job.mode == settings::InStep::off) return;
  if (job.mode == settings::InStep::on) {
    mode_ = Mode::on;
    ++job.synced;
    return;
  }
  mode_ = Mode::gauge;
}

void InStepGate::step(InStepJob& job, MPI_Comm comm) {
  switch (mode_) {
    case Mode::on:
      if (PMPI_Barrier(comm) != MPI_SUCCESS) fail();
      return;
    case Mode::gauge:
      gauge(job, comm);
      return;
    case Mode::trial:
      trial(job, comm);
      return;
    case Mode::off:
      return;
  }
}

// A collective of the gate failed on this rank (MPI's error handler on the communicator has had
// its say already): one warning; in the trial, the gate stops here, in step it goes on.
void InStepGate::fail() {
  core::log_warn_once("in-step", "COMMSCHED_IN_STEP: a barrier or agreement failed; the calls "
                                 "on that communicator may stall (one warning only)");
  if (mode_ == Mode::trial) mode_ = Mode::off;
}

// Calls 1 to kGaugeCalls give this rank's time between calls and their cycle. At the next
// call the ranks agree on the shortest time and on the job clock, and each times that
// allreduce (blocking: Open MPI's first non-blocking collective on a communicator costs tens
// of microseconds more); calls closer than learn::in_step_may_join allows stay out there and
// then, which is where short calls end. For the others, at the call after, the ranks agree on
// the shortest such time (the rank that entered last waited for nobody: what a barrier
// costs), and the communicator joins the trial only where learn::in_step_joins and some rank's
// node has seen a retransmission timeout (InStepJob::may_gain).
void InStepGate::gauge(InStepJob& job, MPI_Comm comm) {
  const double t = PMPI_Wtime() - job.t0;
  const int call = calls_++;
  if (call >= 1 && call <= kGaugeCalls) entries_[call - 1] = t;
  if (call <= kGaugeCalls) return;
  if (call == kGaugeCalls + 1) {
    const double period = (entries_[kGaugeCalls - 1] - entries_[0]) / (kGaugeCalls - 1);
    cycle_ = learn::in_step_cycle(entries_, kGaugeCalls);
    const std::array<double, 2> in{-period, t};
    std::array<double, 2> out{};
    if (PMPI_Allreduce(in.data(), out.data(), 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
      mode_ = Mode::off;  // every rank's allreduce returned; none goes on with the trial
      return;
    }
    gauge_s_ = PMPI_Wtime() - job.t0 - t;
    period_ = -out[0];
    agreed_ = out[1];
    if (!learn::in_step_may_join(period_)) {  // agreed: every rank stays out alike
      mode_ = Mode::off;
      ++job.short_calls;
    }
    return;
  }
  const std::array<double, 2> in{-gauge_s_, job.may_gain() ? 1.0 : 0.0};
  std::array<double, 2> out{};
  if (PMPI_Allreduce(in.data(), out.data(), 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
    mode_ = Mode::off;
    return;
  }
  if (!learn::in_step_joins(period_, -out[0])) {
    mode_ = Mode::off;
    ++job.short_calls;
    return;
  }
  if (out[1] <= 0) {
    mode_ = Mode::off;
    ++job.lossless;
    return;
  }
  mode_ = Mode::trial;
  decide_at_ = learn::in_step_decide_at(agreed_, job.clock);
}

// One call of the trial: the time agreed at the previous call says whether this one runs in
// step (a blocking agreement, which is the barrier) or not (the agreement in flight until the
// next call, which waits only for every rank to have entered this one); after
// kInStepEpochs whole epochs, the ranks sum their meters and decide.
void InStepGate::trial(InStepJob& job, MPI_Comm comm) {
  if (request_ != MPI_REQUEST_NULL && PMPI_Wait(&request_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return fail();
  mine_ = PMPI_Wtime() - job.t0;
  const learn::InStepPhase phase = learn::in_step_phase(agreed_, decide_at_, job.clock);
  if (phase == learn::InStepPhase::decide) {
    meter_.close();
    const std::array<double, 4> in = meter_.totals();
    std::array<double, 4> out{};
    if (PMPI_Allreduce(in.data(), out.data(), 4, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS)
      return fail();
    job.ratio = learn::in_step_ratio(out);
    const bool wins = learn::in_step_wins(out);
    mode_ = wins ? Mode::on : Mode::off;
    ++(wins ? job.synced : job.unsynced);
    core::log_info_once("in-step-decided",
                        std::string("COMMSCHED_IN_STEP: the trial ") +
                            (wins ? "keeps calls in step" : "leaves calls native") +
                            " (in step: " + std::to_string(job.ratio) +
                            " of native's time between calls; first decision only)");
    return;
  }
  const bool sync = phase != learn::InStepPhase::native;
  if (phase != learn::InStepPhase::lead_in)
    meter_.note(job.clock.epoch(agreed_), sync, mine_, cycle_);
  const int rc = sync ? PMPI_Allreduce(&mine_, &agreed_, 1, MPI_DOUBLE, MPI_MAX, comm)
                      : PMPI_Iallreduce(&mine_, &agreed_, 1, MPI_DOUBLE, MPI_MAX, comm, &request_);
  if (rc != MPI_SUCCESS) fail();
}

void InStepGate::finish() {
  if (request_ != MPI_REQUEST_NULL) PMPI_Wait(&request_, MPI_STATUS_IGNORE);
  mode_ = Mode::off;
}

}  // namespace commsched::intercept
