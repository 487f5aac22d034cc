#include "intercept/in_step.hpp"

#include <array>
#include <string>

#include "core/log.hpp"
#include "core/netstat.hpp"

namespace commsched::intercept {

namespace {

// A trial's first decision on this rank, at info level: what it did and what it measured.
void say_decided(const char* key, const char* what, const char* measured, double ratio) {
  core::log_info_once(key, std::string("COMMSCHED_IN_STEP: the ") + what + " (" + measured +
                               ": " + std::to_string(ratio) +
                               " of native's time between calls; first decision only)");
}

}  // namespace

void InStepJob::configure(const settings::Settings& cfg, bool strategy_auto, bool threads,
                          double now, bool speaks) {
  mode = cfg.in_step;
  const bool trial = mode == settings::InStep::automatic || mode == settings::InStep::trial;
  if (threads || (trial && !strategy_auto)) mode = settings::InStep::off;
  clock.epoch_s = cfg.in_step_epoch;
  t0 = now;
  netstat = cfg.in_step_netstat;
  if (mode != settings::InStep::automatic) return;
  timeouts = core::tcp_timeouts(netstat);
  if (!speaks || timeouts >= 0) return;
  // Named by the user: worth a warning. The default on a system without it: a note.
  const std::string text = "COMMSCHED_IN_STEP_NETSTAT: no TCPTimeouts count in '" + netstat +
                           "' on rank 0's node; the in-step trial runs without waiting for "
                           "word of packet loss";
  if (netstat != settings::kInStepNetstatDefault)
    core::log_warn(text);
  else
    core::log_info(text);
}

double InStepJob::loss_flag(double now) {
  if (!loss_seen && timeouts >= 0 && now - checked_at >= kLossCheck) {
    checked_at = now;
    loss_seen = core::tcp_timeouts(netstat) > timeouts;
  }
  return loss_seen ? 1.0 : 0.0;
}

void InStepJob::heard(double agreed) {
  if (agreed > 0) loss_seen = true;
}

std::array<double, 3> InStepJob::says(double now) {
  return {now, loss_flag(now), phases_kept ? 1.0 : 0.0};
}

void InStepJob::hear(const std::array<double, 3>& agreed) {
  heard(agreed[1]);
  if (agreed[2] > 0) phases_kept = true;
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
    case Mode::kept:
      if (offered_) return start_phases(job, comm);
      [[fallthrough]];
    case Mode::on:
      if (PMPI_Barrier(comm) != MPI_SUCCESS) fail();
      return;
    case Mode::left:
      if (offered_) start_phases(job, comm);
      return;
    case Mode::phases:
      phases(job, comm);
      return;
    case Mode::gauge:
      gauge(job, comm);
      return;
    case Mode::watch:
      watch(job, comm);
      return;
    case Mode::trial:
      trial(job, comm);
      return;
    case Mode::off:
      return;
  }
}

// A collective of the gate failed on this rank (MPI's error handler on the communicator has had
// its say already): one warning; watching or in the trial, the gate stops here, in step it
// goes on.
void InStepGate::fail() {
  core::log_warn_once("in-step", "COMMSCHED_IN_STEP: a barrier or agreement failed; the calls "
                                 "on that communicator may stall (one warning only)");
  if (mode_ == Mode::trial || mode_ == Mode::watch || mode_ == Mode::phases) mode_ = Mode::off;
}

// Calls 1 to kGaugeCalls give this rank's time between calls and their cycle. At the next
// call the ranks agree on the shortest time and on the job clock, and each times that
// allreduce (blocking: Open MPI's first non-blocking collective on a communicator costs tens
// of microseconds more); calls closer than learn::in_step_may_join allows stay out there and
// then, which is where short calls end. For the others, at the call after, the ranks agree on
// the shortest such time (the rank that entered last waited for nobody: what a barrier
// costs), and where learn::in_step_joins the communicator joins the trial, at once where its
// ranks have heard of packet loss or cannot tell, or else once they do (watch).
void InStepGate::gauge(InStepJob& job, MPI_Comm comm) {
  const double t = PMPI_Wtime() - job.t0;
  const int call = calls_++;
  if (call >= 1 && call <= kGaugeCalls) entries_[call - 1] = t;
  if (call <= kGaugeCalls) return;
  if (call == kGaugeCalls + 1) {
    const double period = (entries_[kGaugeCalls - 1] - entries_[0]) / (kGaugeCalls - 1);
    // What this rank has heard of loss, without reading the count: most communicators stop
    // here (calls too close), and a read of /proc/net/netstat costs tens of microseconds. The
    // cycle is agreed too (the longest any rank found): the trials forecast each call's entry
    // by it, and ranks whose few entries told them different cycles ran different epochs and
    // met in different collectives.
    const int cycle = learn::in_step_cycle(entries_, kGaugeCalls);
    const std::array<double, 4> in{-period, t, job.loss_seen ? 1.0 : 0.0,
                                   static_cast<double>(cycle)};
    std::array<double, 4> out{};
    if (PMPI_Allreduce(in.data(), out.data(), 4, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
      mode_ = Mode::off;  // every rank's allreduce returned; none goes on with the trial
      return;
    }
    gauge_s_ = PMPI_Wtime() - job.t0 - t;
    period_ = -out[0];
    agreed_[0] = out[1];
    job.heard(out[2]);
    cycle_ = static_cast<int>(out[3]);
    if (!learn::in_step_may_join(period_)) {  // agreed: every rank stays out alike
      mode_ = Mode::off;
      ++job.short_calls;
    }
    return;
  }
  // The barrier's cost, word of loss, and whether any rank cannot tell: MAX, so every rank
  // goes on alike.
  const std::array<double, 3> in{-gauge_s_, job.loss_flag(t), job.timeouts < 0 ? 1.0 : 0.0};
  std::array<double, 3> out{};
  if (PMPI_Allreduce(in.data(), out.data(), 3, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
    mode_ = Mode::off;
    return;
  }
  job.heard(out[1]);
  if (!learn::in_step_joins(period_, -out[0])) {
    mode_ = Mode::off;
    ++job.short_calls;
    return;
  }
  if (out[1] <= 0 && out[2] <= 0) {  // no rank has heard of loss, and every rank can tell
    mode_ = Mode::watch;
    calls_ = 0;
    ++job.lossless;  // until word of loss comes
    return;
  }
  join_trial(job);
}

// The trial starts at this call, on every rank, with the clock agreed at the last agreement.
void InStepGate::join_trial(const InStepJob& job) {
  mode_ = Mode::trial;
  decide_at_ = learn::in_step_decide_at(agreed_[0], job.clock);
  forecast_.reset();  // agreed_ is a call or more old here: the lead-in's first call uses it
  clock_pending_ = false;
}

// Where this call's entry falls on the job clock, as every rank of the communicator forecasts
// it alike (learn::EntryForecast) from the clocks agreed at the calls before it.
double InStepGate::forecast() {
  if (clock_pending_) forecast_.add(agreed_[0]);
  clock_pending_ = false;
  return forecast_.empty() ? agreed_[0] : forecast_.next(cycle_, period_);
}

// A communicator that could join the trial while no rank of it has heard of packet loss: once
// per kWatchCalls calls its ranks agree on the clock and on whether any has heard since (a
// non-blocking allreduce, completed at the next call), and where one has, the trial starts
// there, with the clock agreed. Where none ever does, that is all the job pays: one small
// collective per kWatchCalls calls at least 20 ms apart.
void InStepGate::watch(InStepJob& job, MPI_Comm comm) {
  if (request_ != MPI_REQUEST_NULL) {
    if (PMPI_Wait(&request_, MPI_STATUS_IGNORE) != MPI_SUCCESS) return fail();
    job.hear(agreed_);
    if (agreed_[1] > 0) {
      --job.lossless;
      join_trial(job);
      trial(job, comm);
      return;
    }
  }
  if (++calls_ % kWatchCalls != 0) return;
  const double now = PMPI_Wtime() - job.t0;
  mine_ = job.says(now);
  if (PMPI_Iallreduce(mine_.data(), agreed_.data(), 3, MPI_DOUBLE, MPI_MAX, comm, &request_) !=
      MPI_SUCCESS)
    fail();
}

// One call of the trial: the clocks agreed at the calls before, carried forward to this call's
// entry (forecast), say whether it runs in step (a blocking agreement, which is the barrier)
// or not (the agreement in flight until the next call, which waits only for every rank to
// have entered this one); after kInStepEpochs whole epochs, the ranks sum their pools (every
// communicator's meters on each) and whether they have seen loss, and decide
// (learn::in_step_keeps).
void InStepGate::trial(InStepJob& job, MPI_Comm comm) {
  if (request_ != MPI_REQUEST_NULL && PMPI_Wait(&request_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return fail();
  const double now = PMPI_Wtime() - job.t0;
  job.hear(agreed_);
  const double at = forecast();
  const learn::InStepPhase phase = learn::in_step_phase(at, decide_at_, job.clock);
  if (phase == learn::InStepPhase::decide) {
    meter_.close();
    meter_.pour(job.pool, period_);
    // The pools and how many ranks have seen loss: sums, so every rank decides alike. A
    // communicator runs the trial only where its ranks heard of loss (all of them then say so)
    // or some rank cannot tell: no loss is `unknown` here, never `none`.
    const std::array<double, 5> in{job.pool[0], job.pool[1], job.pool[2], job.pool[3],
                                   job.loss_flag(now)};
    std::array<double, 5> out{};
    if (PMPI_Allreduce(in.data(), out.data(), 5, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS)
      return fail();
    const std::array<double, 4> pooled{out[0], out[1], out[2], out[3]};
    job.heard(out[4]);
    const learn::InStepLoss loss =
        out[4] > 0 ? learn::InStepLoss::seen : learn::InStepLoss::unknown;
    job.ratio = learn::in_step_ratio(pooled);
    const bool keeps = learn::in_step_keeps(pooled, loss);
    kept_ = keeps;
    mode_ = keeps ? Mode::kept : Mode::left;
    ++(keeps ? job.synced : job.unsynced);
    say_decided("in-step-decided",
                keeps ? "trial keeps calls in step" : "trial leaves calls native", "in step",
                job.ratio);
    return;
  }
  const bool sync = phase != learn::InStepPhase::native;
  if (phase != learn::InStepPhase::lead_in) {
    meter_.note(job.clock.epoch(at), sync, now, cycle_);
    meter_.pour(job.pool, period_);
  }
  send_clock(job, comm, now, sync);
}

// This rank's clock and word of loss for the next call's agreement: blocking (the barrier), or
// in flight until the next call, which waits only for every rank to have entered this one.
void InStepGate::send_clock(InStepJob& job, MPI_Comm comm, double now, bool blocking) {
  mine_ = job.says(now);
  const int rc =
      blocking ? PMPI_Allreduce(mine_.data(), agreed_.data(), 3, MPI_DOUBLE, MPI_MAX, comm)
               : PMPI_Iallreduce(mine_.data(), agreed_.data(), 3, MPI_DOUBLE, MPI_MAX, comm,
                                 &request_);
  if (rc != MPI_SUCCESS) return fail();
  clock_pending_ = true;
}

// The phase trial. Phasing a job's exchanges (lp_shift's or lp_xor's rounds instead of MPI's
// all-at-once) gains, like entering together, on the whole job at once: a pattern's own trial
// phases one communicator's calls while the job's others run unphased, where they still
// overflow the receivers' queues, and finds little (LAMMPS on a 64^3 mesh on shallow queues:
// 16 per-communicator trials decided native or nothing, while the job with every communicator
// phased ran 1.12 times faster). So after the in-step trial, on every communicator whose
// pattern in force has a schedule to try, a second job-wide trial alternates epochs
// (kPhaseEpochScale in-step epochs each) where every such communicator runs its schedule with
// epochs where all run native, and decides on the pool of every communicator's pace, as the
// in-step trial does; the intercept layer runs what phased() says and, on a win, keeps the
// schedule for the pattern (take_verdict). It starts at a call with a blocking agreement of
// the clock, so every rank starts its epochs alike.
void InStepGate::start_phases(InStepJob& job, MPI_Comm comm) {
  const double now = PMPI_Wtime() - job.t0;
  mine_ = job.says(now);
  if (PMPI_Allreduce(mine_.data(), agreed_.data(), 3, MPI_DOUBLE, MPI_MAX, comm) !=
      MPI_SUCCESS) {
    // Every rank's allreduce returned: none starts the trial, the barrier stays where kept.
    mode_ = kept_ ? Mode::on : Mode::off;
    return;
  }
  job.hear(agreed_);
  // The pool times the job with every communicator in the trial phased against none; one that
  // joins changes what "phased" means on this rank, so it starts afresh. LAMMPS on a 64^3 mesh:
  // its once-a-step communicators joined 10 s after the busier ones, whose first round had
  // measured them phased beside communicators that were not (1.07 of native's time), and the
  // pool still held that where the whole job phased ran its steps about 1.1 times faster.
  job.phase_pool = {};
  const learn::InStepClock clock{job.clock.epoch_s * kPhaseEpochScale};
  phase_decide_at_ = learn::in_step_decide_at(agreed_[0], clock);
  forecast_.reset();
  forecast_.add(agreed_[0]);  // this call's entry, just agreed
  clock_pending_ = false;
  mode_ = Mode::phases;
  phased_ = true;  // the lead-in runs the schedule, as the in-step trial's runs in step
}

// One call of the phase trial: the forecast of its entry, as in the in-step trial, says
// whether it runs the schedule; the agreement is blocking where the communicator is kept in
// step (it is the barrier), else in flight until the next call. After kInStepEpochs whole
// epochs the ranks sum their pools and decide (learn::phase_verdict): the schedule stays where
// it was at least learn::kInStepMargin faster, or faster at all where a rank has heard that
// another communicator kept its schedule (the agreements carry that word through the job, as
// they carry word of loss), and where one round cannot tell, another round follows.
void InStepGate::phases(InStepJob& job, MPI_Comm comm) {
  if (request_ != MPI_REQUEST_NULL && PMPI_Wait(&request_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return fail();
  const double now = PMPI_Wtime() - job.t0;
  job.hear(agreed_);
  const learn::InStepClock clock{job.clock.epoch_s * kPhaseEpochScale};
  const double at = forecast();
  learn::InStepPhase phase = learn::in_step_phase(at, phase_decide_at_, clock);
  if (phase == learn::InStepPhase::decide) {
    phase_meter_.close();
    phase_meter_.pour(job.phase_pool, period_);
    // The pools, and how many ranks have heard of schedules kept: sums, so every rank decides
    // alike.
    const std::array<double, 5> in{job.phase_pool[0], job.phase_pool[1], job.phase_pool[2],
                                   job.phase_pool[3], job.phases_kept ? 1.0 : 0.0};
    std::array<double, 5> out{};
    if (PMPI_Allreduce(in.data(), out.data(), 5, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS)
      return fail();
    const std::array<double, 4> pooled{out[0], out[1], out[2], out[3]};
    const bool heard_kept = out[4] > 0;
    job.phase_ratio = learn::in_step_ratio(pooled);
    job.phase_rounds = ++phase_round_;
    const learn::PhaseVerdict verdict = learn::phase_verdict(pooled, phase_round_, heard_kept);
    if (verdict != learn::PhaseVerdict::again) {
      const bool wins = verdict == learn::PhaseVerdict::keep;
      if (wins) job.phases_kept = true;
      verdict_ = wins ? 1 : -1;
      ++(wins ? job.phased : job.unphased);
      // A schedule agrees before every call, which has the ranks in step already.
      mode_ = kept_ && !wins ? Mode::on : Mode::off;
      say_decided("phases-decided",
                  wins ? "phase trial keeps the schedules"
                       : "phase trial leaves the patterns' own trials",
                  "phased", job.phase_ratio);
      return;
    }
    // Another round: kInStepEpochs more epochs on the same plan, from the one this call runs
    // in; the pools go on summing every round.
    say_decided("phases-again", "phase trial runs another round: one cannot tell", "phased",
                job.phase_ratio);
    phase_decide_at_ = learn::in_step_decide_at(at, clock) - clock.epoch_s;
    phase = learn::in_step_phase(at, phase_decide_at_, clock);
  }
  phased_ = phase != learn::InStepPhase::native;
  if (phase != learn::InStepPhase::lead_in) {
    phase_meter_.note(clock.epoch(at), phased_, now, cycle_);
    phase_meter_.pour(job.phase_pool, period_);
  }
  send_clock(job, comm, now, kept_);
}

void InStepGate::finish() {
  if (request_ != MPI_REQUEST_NULL) PMPI_Wait(&request_, MPI_STATUS_IGNORE);
  mode_ = Mode::off;
}

}  // namespace commsched::intercept
