// The MPI side of commsched: per-communicator state, the per-call agreement, gathering the
// learned matrix, planning and running plans over PMPI. Every collective this file issues is
// issued by all ranks of the communicator in the same order, whatever happens locally: local
// trouble becomes a vote, never a skipped collective (DESIGN.md "Agreement").
#include "intercept/intercept.hpp"

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <csignal>
#include <random>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/device_memory.hpp"
#include "core/log.hpp"
#include "core/plan.hpp"
#include "cost/machine.hpp"
#include "cost/simulate.hpp"
#include "exec/program.hpp"
#include "intercept/drs.hpp"
#include "intercept/exchange.hpp"
#include "intercept/in_step.hpp"
#include "intercept/nonblocking.hpp"
#include "intercept/p2p.hpp"
#include "intercept/pcontrol.hpp"
#include "intercept/pmpi_transport.hpp"
#include "intercept/report.hpp"
#include "learn/choose.hpp"
#include "learn/learner.hpp"
#include "learn/trial.hpp"
#include "learn/wisdom.hpp"
#include "plan/registry.hpp"
#include "settings/settings.hpp"
#include "trace/writer.hpp"

namespace commsched::intercept {
namespace {

// auto pays for learning and probes out of the same share of the job's time in all-to-all
// calls so far as its trial (COMMSCHED_TRIAL_BUDGET): a job of microsecond calls does not learn
// until it has spent enough in them for the learning to be a small part of it. Learning's cost is
// measured (the slowest rank's) once it has happened; this is the guess before.
constexpr double kFirstLearnCost = 1e-3;
// A first learning's cost in agreements: duplicate, one allgather (its check, the id and the
// node layout), the matrix (two), the predictions and the set-up flags, each moving more than
// an agreement's 88 bytes, and every rank's predictions and plans. Measured on the emulated
// cluster (16 ranks over TCP, shallow queues): 18-22 ms, 40-55 agreements' time.
constexpr double kLearnAgreements = 32;
// A learning starts only when it takes at most this share of the budget it draws on: the
// trial it starts has the rest. A job that can afford the learning but not a trial after it
// pays half its budget for nothing, not all of it.
constexpr double kLearnShare = 0.5;
// The longest a probe may wait for its budget: a pattern is learned at most this many calls
// after the job can afford it.
constexpr std::uint64_t kMaxBudgetGap = 4096;
// The share of auto's budget that probes get (see budget_gap).
constexpr double kProbeShare = 0.25;
// An undecided trial whose pattern has not been in force for more calls than this was left
// by its pattern (see budget_share); patterns that alternate come back sooner.
constexpr std::uint64_t kAbandonedAfter = 32;
// After its decision a trial runs the other side again every this many calls (learn::Trial's
// recheck_every), so a plan that drifts above native reverts.
constexpr int kRecheckEvery = 200;

// This thread's clock of all-to-all entries and its time inside them (learn::EntryClock):
// auto's trial times a call from its entry to the next one's, and its budget is a share of the
// time in every communicator's calls.
thread_local learn::EntryClock t_entries;
// Calls that only run MPI's own and count read the clock once in this many (see exchange);
// calls shorter than kShortCallS once in kClockEveryShort, as a clock read costs tens of
// nanoseconds (two of them are 1-2 % of a call under a microsecond, read one call in 8).
constexpr std::uint64_t kClockEvery = 8;
constexpr std::uint64_t kClockEveryShort = 64;
constexpr double kShortCallS = 20e-6;

// What every trial under way in this process has spent so far (learn::Trial::spent_seconds):
// sent with each agreement, so that the trials under way on every communicator share one
// budget. Each pattern's share enters through its TrialLedger and leaves once it decides.
std::atomic<double> g_trials_spent{0};

// A pattern's share of g_trials_spent, taken back when the pattern goes.
class TrialLedger {
 public:
  TrialLedger() = default;
  TrialLedger(const TrialLedger&) = delete;
  TrialLedger& operator=(const TrialLedger&) = delete;
  ~TrialLedger() { g_trials_spent.fetch_sub(share_); }
  /// After any change to `trial`: its spending while under way, nothing once decided.
  void charge(const learn::Trial& trial) {
    const double now = trial.decided() ? 0.0 : trial.spent_seconds();
    g_trials_spent.fetch_add(now - share_);
    share_ = now;
  }
  double share() const { return share_; }

 private:
  double share_ = 0;
};

// One strategy a pattern may run, compiled for this rank.
struct Candidate {
  std::string id;
  bool native = false;
  bool drs = false;  // scheduled at run time (drs.hpp), no program
  bool in_step = false;  // native_sync: MPI's own call after the agreement, every call
  double predicted_s = -1;
  std::size_t phases = 0;
  exec::RankProgram program;
  std::vector<std::uint8_t> staging;
};

// A learned pattern: the global matrix, its usable candidates (native always among them, the
// trial picks which runs), and its report entry.
struct Pattern {
  core::CommMatrix matrix;
  std::vector<Bytes> signature;  // this rank's send then receive bytes when it was learned
  std::uint64_t signature_hash = 0;  // learn::Learner::counts_hash of `signature`
  std::vector<Candidate> usable;
  std::vector<std::pair<std::string, std::string>> rejected;  // (id, why)
  learn::Trial trial{{}, 1, 0};
  TrialLedger ledger;  // trial's spending while under way, shared with the other trials
  bool pack_send_if_noncontig = false;  // some candidate reads this rank's messages as bytes
  bool pack_recv_if_noncontig = false;  // ... or writes its incoming messages as bytes
  PatternRecord record;
  std::int32_t trace_id = -1;  // handle in this rank's trace
  bool from_wisdom = false;    // the strategy came from COMMSCHED_WISDOM: no trial ran
  // The communicator's latest call with this pattern in force, stamped at the agreed calls,
  // the only ones that change the pattern in force (budget_share reads it once it has gone).
  std::uint64_t last_call = 0;

  // The schedule the phase trial tries (phase_candidate), with the trial's pair count it was
  // worked out at: it reads only the usable candidates and the trial's pairs, and pairs are
  // only added, each adding to the count. set_trial starts it afresh.
  mutable int phase_index = -1;
  mutable int phase_rounds = -1;

  const Candidate& running() const { return usable[trial.current()]; }
  void set_trial(learn::Trial t) {
    trial = std::move(t);
    phase_rounds = -1;
  }
  /// Time the job paid for this pattern outside its trial's calls (agreed), out of the budget
  /// the trials under way share.
  void spend(double seconds) {
    trial.add_spent(seconds);
    ledger.charge(trial);
  }
};

struct CommState {
  // What the lean path (run_lean) reads and writes on every call, together at the start.
  bool native_only = false;
  int rank = 0;
  int size = 1;
  const char* call = "MPI_Alltoallv";  // the entry point whose calls this state sees (Family)
  std::uint64_t calls = 0;       // intercepted calls on this communicator (drs seeds)
  // While learning, the call index of the next agreement (probe) and the gap to the one after.
  std::uint64_t next_probe = 0;
  std::uint64_t probe_gap = 1;
  std::int64_t unlearned_calls = 0;
  // Native calls of the current learning streak: they become the pattern's once it is learned.
  std::int64_t streak_calls = 0;
  double streak_seconds = 0;
  double streak_fastest_s = 0;  // this rank's, in the current streak (0: none yet)
  // What a call that only runs MPI's own adds unclocked: the shorter of the latest two clocked
  // times of such calls, so that a slow first call (connections, first touch) is not copied
  // to the calls after it. 0 until two were clocked.
  double per_call_s = 0;
  double last_clocked_s = -1;
  void note_clocked(double seconds) {
    if (last_clocked_s >= 0) per_call_s = std::min(seconds, last_clocked_s);
    last_clocked_s = seconds;
  }
  // The previous call's arguments when it voted between probes with predefined datatypes: a
  // call with the same counts and types has the same bytes, so it only adds their hash to the
  // learner's history. Any call that takes another path clears it.
  struct RepeatKey {
    bool valid = false;
    bool in_place = false;
    MPI_Datatype send_type = MPI_DATATYPE_NULL, recv_type = MPI_DATATYPE_NULL;
    // Receive counts, then send counts unless in place; held inline up to 8 ranks.
    boost::container::small_vector<int, 16> counts;
    std::uint64_t hash = 0;

    bool matches(bool place, const int* sendcounts, MPI_Datatype st, const int* recvcounts,
                 MPI_Datatype rt, std::size_t n) const {
      if (!valid || place != in_place || rt != recv_type || !recvcounts ||
          !same(recvcounts, counts.data(), n))
        return false;
      return place || (st == send_type && sendcounts && same(sendcounts, counts.data() + n, n));
    }
    // An inline loop: a few counts compare faster than a call to memcmp.
    static bool same(const int* a, const int* b, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return false;
      return true;
    }
    void set(bool place, const int* sendcounts, MPI_Datatype st, const int* recvcounts,
             MPI_Datatype rt, std::size_t n, std::uint64_t h) {
      valid = true;
      in_place = place;
      send_type = st;
      recv_type = rt;
      counts.assign(recvcounts, recvcounts + n);
      if (!place) counts.insert(counts.end(), sendcounts, sendcounts + n);
      hash = h;
    }
  } repeat;
  learn::Learner learner;
  InStepGate in_step;  // COMMSCHED_IN_STEP: a barrier before each call, where it pays
  std::uint64_t local_id = 0;    // key in Global::comms (never the handle: MPI reuses handles)
  MPI_Comm dup = MPI_COMM_NULL;  // private duplicate for all of the library's traffic
  core::Topology topology;       // node of every rank (detected, or faked by a setting)
  std::vector<std::unique_ptr<Pattern>> patterns;  // learned so far, by first appearance
  Pattern* current = nullptr;
  std::int64_t comm_root = 0, comm_serial = 0;
  // The slowest rank's fastest native call of a learning streak, agreed: what the cost model
  // is scaled to when no machine file describes this machine.
  double native_seen_s = 0;
  // auto's learning budget (see learning_affordable): this rank's last learning's and
  // agreement's durations, sent with the next agreement with its time in all-to-all calls so
  // far, on every communicator (t_entries). The time in calls is agreed as its maximum over
  // ranks; a learning or an agreement costs the job its shortest duration over ranks: the
  // others also waited for the last rank to arrive, as the native call would have made them.
  double learn_local_s = 0, agree_local_s = 0;
  double time_agreed_s = 0, learn_cost_s = 0, agree_cost_s = 0;  // learn_cost_s 0: unmeasured
  double probes_spent_s = 0;  // the agreed cost of this communicator's probes so far
  double probes_charged_s = 0;  // the part of it charged to a pattern's trial already
  // The previous call's pattern and local time: its maximum over ranks arrives with this
  // call's agreement and feeds the pattern's trial. The time is the call's own until the
  // next all-to-all's entry on the same thread is known (timed_entry, timed_clock).
  Pattern* timed_pattern = nullptr;
  double timed_seconds = 0;
  const learn::EntryClock* timed_clock = nullptr;  // the thread whose clock holds the call's entry
  std::uint64_t timed_entry = 0;            // the call's index on that clock
  // The agreement's duration on this rank when that call ran native (0 for a plan, which pays
  // it on every call).
  double timed_agreement = 0;
  std::vector<Bytes> send_bytes, recv_bytes;  // scratch, reused every call

  // The first probe comes at the first call that can complete a learning streak.
  explicit CommState(int learn_calls)
      : next_probe(static_cast<std::uint64_t>(std::max(learn_calls, 1))), learner(learn_calls) {}
};

// Under MPI_THREAD_MULTIPLE threads may call on different communicators at once (MPI forbids
// two concurrent collectives on one communicator, so a CommState has one thread at a time).
// What they share lives here: `mu` guards the map, the records and the tracer for short local
// sections only, never across an MPI call that can block (a lock held across a collective on
// one communicator can deadlock against another thread's collective on another, across
// ranks); counters are atomic; the rest is written only at MPI_Init and MPI_Finalize, where
// one thread calls.
struct Global {
  // This process's one MPI thread's t_entries, up to MPI_THREAD_FUNNELED (set at setup, on
  // that thread): the lean path reaches it without a thread-local lookup.
  learn::EntryClock* main_entries = nullptr;
  std::mutex mu;
  std::atomic<bool> initialised{false};
  std::atomic<bool> active{false};  // false: pure pass-through
  settings::Settings cfg;
  // What every call asks of cfg.strategy, settled once it is final (settle_strategy): string
  // comparisons on each call cost more than the rest of a learned call's bookkeeping.
  bool strategy_native = false;  // COMMSCHED_STRATEGY=native, or forced to it
  bool trial_budgeted = false;   // auto with its trial: learning and probes within its budget
  std::vector<std::string> pool;  // what the ranks predict for cfg.strategy (prediction_pool)
  void settle_strategy() {
    strategy_native = cfg.strategy == "native";
    trial_budgeted = cfg.trial && cfg.strategy == "auto";
    pool = learn::prediction_pool(cfg.strategy, cfg.candidates);
  }
  std::vector<std::string> warnings;
  int world_rank = 0;
  std::atomic<std::int64_t> comms_seen{0};
  // Per-communicator state hangs off the communicator as an attribute (the standard's
  // "Caching"), so MPI_Comm_free and MPI_Comm_disconnect both release it through the delete
  // callback and a reused handle never finds stale state. This map owns the states, keyed by
  // CommState::local_id, for the report.
  // One keyval per family of entry points (Family): MPI_Alltoall keeps its own patterns and
  // trial, as its native call (MPI's regular all-to-all algorithms) is not MPI_Alltoallv's.
  int comm_keyval[kFamilies] = {MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID,
                               MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID};
  std::uint64_t next_local_id = 0;
  bool finalizing = false;  // MPI is deleting attributes at MPI_Finalize: no MPI calls
  boost::container::flat_map<std::uint64_t, std::unique_ptr<CommState>> comms;
  // The last state state_for found, so a job calling on one communicator pays no attribute
  // lookup per call. Used only below MPI_THREAD_MULTIPLE (one thread calls MPI at a time);
  // drop_state clears it, so a freed communicator's handle, reused, never finds stale state.
  struct LastState {
    MPI_Comm comm = MPI_COMM_NULL;
    Family family = Family::alltoallv;
    CommState* state = nullptr;
  } last_state;
  std::atomic<std::int64_t> device_calls{0};  // ran native because a buffer was device memory
  // Every call runs natively on every rank, counted (any thread), and the report says why
  // (all_native_reason, written before all_native): the ranks' settings differ, or the
  // library did not see MPI_Init_thread of an MPI_THREAD_MULTIPLE job.
  std::atomic<bool> all_native{false};
  const char* all_native_reason = "";
  std::atomic<std::int64_t> native_calls{0};
  int provided = MPI_THREAD_SINGLE;  // the thread level MPI_Init_thread gave
  std::vector<PatternRecord> retired;  // records of communicators already freed
  std::int64_t retired_unlearned = 0;
  std::atomic<std::int64_t> fallbacks{0};  // calls or patterns that fell back after a failure
  // COMMSCHED_FAULT: internal errors injected at one site, each a local failure that the
  // agreement must turn into a consistent fallback.
  std::string fault_site;
  double fault_probability = 0;
  std::mt19937_64 fault_rng;
  std::int64_t faults_injected = 0;  // with fault_rng, under mu
  trace::Writer tracer;  // COMMSCHED_TRACE: this rank's trace file; written under mu
  cost::Machine machine;  // COMMSCHED_MACHINE, or the built-in default
  std::uint64_t machine_hash = 0;  // of the model's canonical TOML: part of a wisdom key
  bool wisdom_on = false;  // COMMSCHED_WISDOM: rank 0 read it, every rank holds the same
  learn::Wisdom wisdom;
  InStepJob in_step;  // COMMSCHED_IN_STEP: this rank's share of the job-wide trial
};

int native_alltoallv(const Exchange& x) {
  return PMPI_Alltoallv(x.sendbuf, x.sendcounts, x.sdispls, x.sendtype, x.recvbuf, x.recvcounts,
                        x.rdispls, x.recvtype, x.comm);
}

// SIGUSR1 (COMMSCHED_TRACE_SIGNAL=1) only raises this flag; the next intercepted call flushes.
volatile std::sig_atomic_t trace_flush_requested = 0;
extern "C" void on_trace_signal(int) { trace_flush_requested = 1; }

[[gnu::always_inline]] inline Global& g() {
  static Global* s = new Global;  // never destroyed: the application may call MPI at exit
  return *s;
}

constexpr std::size_t kMaxPatternsPerComm = 64;
// Longest gap between two probes of a learning communicator: a pattern that settles after a
// stretch of changing counts is learned at most this many calls late.
constexpr std::uint64_t kMaxProbeGap = 32;
// A pattern running native agrees once per this many calls (see alltoallv); the cost model
// charges native that share of the agreement.
constexpr auto kNativeAgreeEvery = static_cast<std::uint64_t>(cost::kNativeAgreeEvery);
// Report records kept for patterns no longer cached or of freed communicators; past this,
// a communicator's further records fold into one "(older patterns)" record, so a job whose
// patterns never stop changing keeps bounded memory.
constexpr std::size_t kMaxRetiredRecords = 256;

// What runs natively under MPI_THREAD_MULTIPLE, and why (the log and the report say it).
constexpr const char* kThreadsBurstReason =
    "MPI_THREAD_MULTIPLE: Isend/Irecv bursts run natively (a burst is learned across "
    "communicators, which threads may use at once); collectives are learned as usual";
constexpr const char* kThreadsLateReason =
    "MPI_THREAD_MULTIPLE and MPI initialised where the library did not see it: every call ran "
    "natively (the settings could not be checked across ranks)";
constexpr const char* kSettingsDifferReason =
    "the COMMSCHED_* settings or the machine model differ between ranks: every call ran natively";

const char* thread_level_name(int provided) {
  switch (provided) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    default: return "multiple";
  }
}

// Whether COMMSCHED_BURSTS would watch Isend/Irecv bursts (p2p.cpp's enabled()).
bool bursts_requested(const settings::Settings& cfg) {
  return cfg.bursts != settings::BurstLevel::off && cfg.strategy != "native";
}

// True when COMMSCHED_FAULT injects a failure at `site` now.
bool fault(std::string_view site) {
  Global& s = g();
  if (s.fault_probability <= 0 || site != s.fault_site) return false;
  {
    std::lock_guard lock(s.mu);
    if (std::uniform_real_distribution<double>(0, 1)(s.fault_rng) >= s.fault_probability)
      return false;
    ++s.faults_injected;
  }
  core::log_warn_once("fault-" + s.fault_site,
                      "COMMSCHED_FAULT injected an internal error at '" + s.fault_site +
                          "'; the ranks fall back to native together (one warning per site)");
  return true;
}

double now() { return PMPI_Wtime(); }

void copy_name(char (&dst)[32], std::string_view s) {
  const std::size_t n = std::min(s.size(), sizeof dst - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}
void copy_note(char (&dst)[96], std::string_view s) {
  const std::size_t n = std::min(s.size(), sizeof dst - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

// Call with g().mu held.
void retire(PatternRecord r) {
  Global& s = g();
  if (s.retired.size() < kMaxRetiredRecords) {
    s.retired.push_back(r);
    return;
  }
  auto it = std::find_if(s.retired.begin(), s.retired.end(), [&](const PatternRecord& x) {
    return x.pattern < 0 && x.comm_root == r.comm_root && x.comm_serial == r.comm_serial;
  });
  if (it == s.retired.end()) {
    // Replace the oldest record of this communicator by the fold (or the oldest overall).
    it = std::find_if(s.retired.begin(), s.retired.end(), [&](const PatternRecord& x) {
      return x.comm_root == r.comm_root && x.comm_serial == r.comm_serial;
    });
    if (it == s.retired.end()) it = s.retired.begin();
    PatternRecord fold;
    fold.comm_root = r.comm_root;
    fold.comm_serial = r.comm_serial;
    fold.pattern = -1;
    fold.comm_size = r.comm_size;
    std::memcpy(fold.call, r.call, sizeof fold.call);
    copy_name(fold.strategy, "(older patterns)");
    *it = fold;
  }
  it->calls += r.calls;
  it->calls_optimised += r.calls_optimised;
  it->time_native_s += r.time_native_s;
  it->time_optimised_s += r.time_optimised_s;
  it->nonzeros = std::max(it->nonzeros, r.nonzeros);
  it->bytes += r.bytes;
}


// Every rank opens its own trace file; MPI_Init is collective, so the ranks agree here and a
// directory nobody can write gives one warning, from rank 0, not one per rank.
void open_trace(Global& s) {
  int size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string error;
  int ok = s.tracer.open(s.cfg.trace_dir, s.world_rank, size, s.cfg.trace_limit, error) ? 1 : 0;
  int all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all && s.world_rank == 0)
    core::log_warn("COMMSCHED_TRACE: " +
                   (ok ? std::string("some ranks cannot write their trace in '") +
                             s.cfg.trace_dir + "'; those ranks write none"
                       : error));
  if (!ok) return;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(host, &len);
  s.tracer.set_meta("host", std::string_view(host, static_cast<std::size_t>(len)));
  s.tracer.set_meta("strategy_setting", s.cfg.strategy);
  if (s.cfg.trace_signal) std::signal(SIGUSR1, on_trace_signal);
}

void trace_record(const CommState& cs, const Pattern* p, std::string_view strategy,
                  bool optimised, std::size_t phases, double t0, double dt) {
  Global& s = g();
  std::lock_guard lock(s.mu);
  if (trace_flush_requested) {
    trace_flush_requested = 0;
    s.tracer.flush();
  }
  trace::CallInfo c;
  c.comm = {cs.comm_root, cs.comm_serial};
  c.start_s = t0;
  c.duration_s = dt;
  c.pattern = p ? p->trace_id : -1;
  c.strategy = strategy;
  c.optimised = optimised;
  c.phases = static_cast<std::uint32_t>(phases);
  s.tracer.record_call(c);
}

// Every call asks; only a traced job pays more than the check.
inline void trace_call(const CommState& cs, const Pattern* p, std::string_view strategy,
                       bool optimised, std::size_t phases, double t0, double dt) {
  if (g().tracer.is_open()) [[unlikely]]
    trace_record(cs, p, strategy, optimised, phases, t0, dt);
}

int delete_comm_state(MPI_Comm, int, void* attribute, void*);

// COMMSCHED_WISDOM: rank 0 reads the file and every rank parses the same bytes it broadcasts,
// so verdicts agree even where the path is node-local. Collective over MPI_COMM_WORLD.
void load_wisdom(Global& s) {
  std::string text;
  if (s.world_rank == 0) {
    learn::Wisdom w;
    std::string error;
    if (!learn::Wisdom::load(s.cfg.wisdom_path, w, error))
      core::log_warn("COMMSCHED_WISDOM: " + error + "; ignored, the trial runs");
    text = w.serialize();
  }
  std::uint64_t size = text.size();
  PMPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(size));
  PMPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::string error;
  s.wisdom = learn::Wisdom::parse(text, error);
  s.wisdom_on = true;
}

// At MPI_Finalize, on rank 0: the verdicts this run's trials reached, merged into the file.
void save_wisdom(const Global& s, const std::vector<PatternRecord>& merged) {
  learn::Wisdom w;
  for (const PatternRecord& r : merged) {
    if (r.verdict != kVerdictMeasured) continue;
    double chosen = -1;
    for (std::int64_t c = 0; c < r.candidate_count && c < kMaxCandidateRecords; ++c)
      if (std::string_view(r.candidates[c].strategy) == r.strategy)
        chosen = r.candidates[c].measured_s;
    w.put({r.matrix_hash, static_cast<std::int32_t>(r.comm_size), r.layout_hash, s.machine_hash},
          {r.strategy, std::max(0.0, r.native_per_call_s), std::max(0.0, chosen),
           static_cast<std::uint64_t>(r.calls)});
  }
  nb_add_wisdom(w);
  if (w.empty()) return;
  if (std::string error; !learn::Wisdom::save(s.cfg.wisdom_path, w, error, s.cfg.wisdom_default))
    core::log_warn("COMMSCHED_WISDOM: " + error + "; this run's verdicts are not kept");
}

// Everything that changes what the ranks do together: the settings that steer collective
// decisions and the machine model (as its canonical TOML, or the reason it failed to load).
std::string collective_settings(const Global& s, const std::string& machine_text) {
  const settings::Settings& c = s.cfg;
  std::string t = std::to_string(s.active.load()) + '|' + c.strategy + '|' +
                  std::to_string(c.learn_calls) + '|' + std::to_string(static_cast<int>(c.rsnh_lambda)) +
                  '|' + std::to_string(c.rsnh_lambda_fixed) + '|' + std::to_string(c.lp_barrier) +
                  '|' + std::to_string(c.seed) + '|' + std::to_string(c.trial) + '|' +
                  std::to_string(c.trial_calls) + '|' + std::to_string(c.trial_seconds) + '|' +
                  std::to_string(c.trial_budget) + '|' +
                  std::to_string(c.max_staging) + '|' + std::to_string(!c.trace_dir.empty()) +
                  '|' + std::to_string(c.fake_nodes) + '|' + c.fault_site + '|' +
                  std::to_string(c.fault_probability) + '|' +
                  std::to_string(static_cast<int>(c.bursts)) + '|' +
                  std::to_string(static_cast<int>(c.nonblocking)) + '|' +
                  std::to_string(c.nonblocking_window) + '|' +
                  std::to_string(static_cast<int>(c.in_step)) + '|' +
                  std::to_string(c.in_step_epoch) + '|' +
                  std::to_string(!c.wisdom_path.empty()) + '|' + std::to_string(s.provided) + '|';
  for (const std::string& id : c.candidates) t += id + ',';
  return t + '|' + machine_text;
}

// Whether every rank of MPI_COMM_WORLD holds the same digest (MPI_Init is collective, so every
// rank is here). A machine file readable on some ranks only, or settings that differ between
// ranks, would otherwise send ranks down different collective paths.
bool same_everywhere(std::uint64_t d) {
  std::uint64_t in[2] = {d, ~d}, out[2] = {0, 0};
  if (PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    return false;
  return out[0] == ~out[1];  // max(d) == min(d)
}

// `saw_init`: called from the MPI_Init or MPI_Init_thread wrapper, where no other thread calls
// MPI yet, so the collectives over MPI_COMM_WORLD below cannot cross the application's.
void setup(int provided, bool saw_init) {
  Global& s = g();
  std::lock_guard lock(s.mu);
  if (s.initialised) return;
  s.initialised = true;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  try {
    s.cfg = settings::from_environment(s.warnings);
  } catch (...) {
    s.cfg = settings::Settings{};
    s.warnings.push_back("could not read the COMMSCHED_* settings; running native");
    s.cfg.strategy = "native";
  }
  s.settle_strategy();
  core::log_configure(s.cfg.log_level, s.world_rank, s.cfg.log_file);
  // Settings are the same on every rank: say what is wrong once, from rank 0.
  if (s.world_rank == 0)
    for (const std::string& w : s.warnings) core::log_warn(w);
  s.provided = provided;
  if (provided <= MPI_THREAD_FUNNELED) s.main_entries = &t_entries;
  if (s.cfg.enable && provided == MPI_THREAD_MULTIPLE && !saw_init) {
    // Set up lazily by whichever thread called first (the others see `active` false until
    // then): checking the settings across ranks needs collectives on MPI_COMM_WORLD that
    // another thread's may cross.
    s.all_native_reason = kThreadsLateReason;
    s.all_native = true;  // still counted, and reported at MPI_Finalize
    core::log_info(kThreadsLateReason);
    return;
  }
  s.active = s.cfg.enable;
  s.machine = cost::default_machine();
  std::string machine_text, machine_error;
  if (s.active) {  // a disabled library reads no file
    if (!cost::load_machine(s.cfg.machine, s.machine, machine_error)) {
      s.cfg.strategy = "native";
      s.settle_strategy();
      machine_text = "unloadable";
    } else {
      machine_text = cost::to_toml(s.machine);
    }
  }
  // One warning from rank 0 either way: the ranks disagree (and the file is named), or they
  // all failed to read the same file alike and run native.
  if (!same_everywhere(learn::text_hash(collective_settings(s, machine_text)))) {
    if (s.world_rank == 0)
      core::log_warn((machine_error.empty() ? "" : "COMMSCHED_MACHINE: " + machine_error + "; ") +
                     "the COMMSCHED_* settings or the machine model (COMMSCHED_MACHINE '" +
                     s.cfg.machine +
                     "') differ between ranks, e.g. a file readable on some nodes only; every "
                     "rank runs natively");
    s.active = false;
    s.all_native_reason = kSettingsDifferReason;  // agreed: every rank writes the report
    s.all_native = true;
  } else if (!machine_error.empty() && s.world_rank == 0) {
    core::log_warn("COMMSCHED_MACHINE: " + machine_error + "; running native");
  }
  // The job's clock starts as the collective above returns, about together on every rank.
  s.in_step.configure(s.cfg, s.cfg.strategy == "auto", provided == MPI_THREAD_MULTIPLE, now(),
                      s.world_rank == 0);
  s.fault_site = s.cfg.fault_site;
  s.fault_probability = s.cfg.fault_probability;
  // Ranks draw differently, so a fault hits some ranks and not others, as real ones do.
  s.fault_rng.seed(s.cfg.fault_seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s.world_rank + 1)));
  if (s.active && provided == MPI_THREAD_MULTIPLE) {
    p2p_threads_native();
    if (bursts_requested(s.cfg)) core::log_info(kThreadsBurstReason);
  }
  for (int& keyval : s.comm_keyval)
    if (s.active && PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm_state, &keyval,
                                            nullptr) != MPI_SUCCESS)
      keyval = MPI_KEYVAL_INVALID;  // state_for then runs every communicator natively
  if (s.active && !s.cfg.trace_dir.empty()) open_trace(s);
  s.machine_hash = learn::text_hash(cost::to_toml(s.machine));
  if (s.active && !s.cfg.wisdom_path.empty()) load_wisdom(s);
  if (s.active) {
    // One-time lookups that would otherwise fall on a short job's first calls.
    prime_type_table();
    core::look_up_device_runtimes();
    core::log_info("commsched active: strategy " + s.cfg.strategy + ", learn after " +
                   std::to_string(s.cfg.learn_calls) + " identical calls");
  }
}

// This rank's node: its processor name (the host's name, as MPI's shared-memory domains go)
// hashed. Local.
std::uint64_t node_key() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  if (PMPI_Get_processor_name(name, &len) != MPI_SUCCESS || len < 0) len = 0;
  return learn::text_hash(std::string_view(name, static_cast<std::size_t>(len)));
}

void ensure_setup() {
  if (g().initialised.load(std::memory_order_acquire)) [[likely]]
    return;
  int init = 0, fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (!init || fin) return;
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  setup(provided, false);
}

// Clusters from the machine file's layout: host-name patterns need every node's host name.
void detect_clusters(CommState& cs, const cost::Machine& machine) {
  const int nodes = cs.topology.nodes(cs.size);
  std::vector<std::string> hosts(static_cast<std::size_t>(nodes));
  const bool by_host = std::any_of(machine.clusters.begin(), machine.clusters.end(),
                                   [](const cost::ClusterSpec& c) { return !c.hosts.empty(); });
  if (by_host) {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    std::vector<char> all(static_cast<std::size_t>(cs.size) * MPI_MAX_PROCESSOR_NAME);
    PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                   MPI_CHAR, cs.dup);
    for (int r = cs.size - 1; r >= 0; --r)
      hosts[static_cast<std::size_t>(cs.topology.node(r))] =
          std::string(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  }
  if (machine.clusters.empty() && machine.cluster_split <= 1) return;
  cs.topology = cost::make_topology(machine, cs.topology.node_of, hosts);
}

void fill_record(Pattern& p);
bool make_private(CommState& cs, MPI_Comm comm);

// Retires a communicator's state: its patterns go to the report, its duplicate is freed (not
// while MPI_Finalize deletes attributes: MPI tears everything down then).
void drop_state(CommState* cs) {
  Global& s = g();
  std::unique_ptr<CommState> owned;
  {
    std::lock_guard lock(s.mu);
    auto it = s.comms.find(cs->local_id);
    if (it == s.comms.end()) return;
    for (const auto& p : cs->patterns) {
      fill_record(*p);
      retire(p->record);
    }
    s.retired_unlearned += cs->unlearned_calls + cs->streak_calls;
    owned = std::move(it->second);
    s.comms.erase(it);
    if (s.last_state.state == cs) s.last_state = {};
  }
  if (s.finalizing) return;
  owned->in_step.finish();
  if (owned->dup != MPI_COMM_NULL) PMPI_Comm_free(&owned->dup);
}

// MPI calls this when the application frees or disconnects a communicator that has our state.
int delete_comm_state(MPI_Comm, int, void* attribute, void*) {
  try {
    drop_state(static_cast<CommState*>(attribute));
  } catch (...) {
  }
  return MPI_SUCCESS;
}

// First Alltoallv on `comm`: the state, attached as the communicator's attribute. Local only:
// the private duplicate, the communicator's agreed id and its node layout wait for the first
// learning (make_private), so a job whose calls never repeat, or a short one, never pays them.
CommState* state_for(MPI_Comm comm, Family family) {
  Global& s = g();
  const bool one_thread = s.provided != MPI_THREAD_MULTIPLE;
  if (one_thread && s.last_state.state && s.last_state.comm == comm &&
      s.last_state.family == family)
    return s.last_state.state;
  const int keyval = s.comm_keyval[static_cast<int>(family)];
  void* found = nullptr;
  int flag = 0;
  if (keyval != MPI_KEYVAL_INVALID &&
      PMPI_Comm_get_attr(comm, keyval, &found, &flag) == MPI_SUCCESS && flag && found) {
    if (one_thread) s.last_state = {comm, family, static_cast<CommState*>(found)};
    return static_cast<CommState*>(found);
  }
  auto st = std::make_unique<CommState>(s.cfg.learn_calls);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) {
    st->native_only = true;
    core::log_info_once("intercomm", "intercommunicators run natively (one notice only)");
  } else if (keyval == MPI_KEYVAL_INVALID) {
    st->native_only = true;
    core::log_warn_once("keyval", "cannot attach state to communicators; calls run natively");
  } else {
    PMPI_Comm_rank(comm, &st->rank);
    PMPI_Comm_size(comm, &st->size);
  }
  st->in_step.start(s.in_step, st->size, st->native_only);
  CommState* raw = st.get();
  if (keyval != MPI_KEYVAL_INVALID && PMPI_Comm_set_attr(comm, keyval, raw) != MPI_SUCCESS) {
    // Nowhere to keep it: this call runs natively with a state nobody finds again. Every rank
    // of the communicator fails alike (the same MPI), so all of them run natively.
    core::log_warn_once("set_attr", "cannot attach state to a communicator; it runs natively");
    // native_only short-circuits; one per thread, as calls still count on it.
    static thread_local CommState orphan(1);
    orphan.native_only = true;
    return &orphan;
  }
  {
    std::lock_guard lock(s.mu);
    raw->local_id = ++s.next_local_id;
    s.comms.emplace(raw->local_id, std::move(st));
  }
  // A trace names the communicator of every call, learned or not: set up at once. Whether a
  // trace was asked for is agreed (the settings digest); whether this rank could open its file
  // is not, so that decides nothing collective.
  if (!s.cfg.trace_dir.empty() && !raw->native_only) make_private(*raw, comm);
  return raw;
}

// Collective on `comm` (every rank reaches it at the same call, from agreed state): the private
// duplicate for all of the library's traffic, an id every member agrees on for the report and
// the trace, and the node layout. False, on every rank alike, when the duplicate failed
// anywhere: the communicator then runs natively.
bool make_private(CommState& cs, MPI_Comm comm) {
  if (cs.dup != MPI_COMM_NULL) return true;
  if (cs.native_only) return false;
  Global& s = g();
  const bool ok = PMPI_Comm_dup(comm, &cs.dup) == MPI_SUCCESS;
  if (!ok) cs.dup = MPI_COMM_NULL;
  const std::int64_t serial = s.comms_seen.fetch_add(1) + 1;
  // One allgather on the application's communicator: whether any rank failed, the id every
  // member agrees on (its rank 0's world rank and serial) and every rank's node.
  constexpr std::size_t kEach = 4;
  const std::int64_t in[kEach] = {ok ? 0 : 1, s.world_rank, serial,
                                  static_cast<std::int64_t>(node_key())};
  std::vector<std::int64_t> all(kEach * static_cast<std::size_t>(cs.size), 1);
  bool all_ok = PMPI_Allgather(in, kEach, MPI_INT64_T, all.data(), kEach, MPI_INT64_T, comm) ==
                MPI_SUCCESS;
  for (std::size_t r = 0; all_ok && r < static_cast<std::size_t>(cs.size); ++r)
    all_ok = all[kEach * r] == 0;
  if (!all_ok) {
    if (cs.dup != MPI_COMM_NULL) PMPI_Comm_free(&cs.dup);
    cs.dup = MPI_COMM_NULL;
    cs.native_only = true;
    core::log_warn_once("dup", "cannot duplicate a communicator; its calls run natively");
    return false;
  }
  // The library's own calls return their errors; a failure becomes a vote, and an error the
  // application must see is raised on its communicator (alltoallv), never ours.
  PMPI_Comm_set_errhandler(cs.dup, MPI_ERRORS_RETURN);
  cs.comm_root = all[1];
  cs.comm_serial = all[2];
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(cs.size));
  for (std::size_t r = 0; r < keys.size(); ++r)
    keys[r] = static_cast<std::uint64_t>(all[kEach * r + 3]);
  cs.topology.node_of = core::node_layout(keys, s.cfg.fake_nodes);
  detect_clusters(cs, s.machine);
  return true;
}

// Gathers every rank's row of non-zeros: each rank receives O(non-zeros), never n^2.
bool gather_matrix(CommState& cs, core::CommMatrix& out) {
  std::vector<std::uint64_t> mine;
  for (int j = 0; j < cs.size; ++j)
    if (cs.send_bytes[static_cast<std::size_t>(j)] != 0) {
      mine.push_back(static_cast<std::uint64_t>(j));
      mine.push_back(cs.send_bytes[static_cast<std::size_t>(j)]);
    }
  const int my_count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(cs.size)), displs(counts.size());
  PMPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, cs.dup);
  long long total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += counts[i];
  }
  std::vector<std::uint64_t> all(static_cast<std::size_t>(total));
  PMPI_Allgatherv(mine.data(), my_count, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
                  MPI_UINT64_T, cs.dup);
  out = core::CommMatrix(cs.size);
  for (int i = 0; i < cs.size; ++i) {
    std::vector<core::Entry> row;
    const auto first = static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]);
    for (int k = 0; k < counts[static_cast<std::size_t>(i)]; k += 2)
      row.push_back({static_cast<Rank>(all[first + static_cast<std::size_t>(k)]),
                     all[first + static_cast<std::size_t>(k) + 1]});
    if (!out.set_row(i, std::move(row))) return false;
  }
  return !fault("gather");
}

plan::Options plan_options(const settings::Settings& cfg, const cost::Machine& machine,
                           const core::Topology& topo) {
  plan::Options o;
  o.pair_time = cost::pair_time(machine, topo);
  o.seed = cfg.seed;
  o.lambda_rule = cfg.rsnh_lambda;
  o.lambda_fixed = cfg.rsnh_lambda_fixed;
  o.barrier_between_phases = cfg.lp_barrier;
  o.topology = &topo;
  return o;
}

bool runs_trial();

void fill_record(Pattern& p) {
  PatternRecord& r = p.record;
  if (p.usable.empty() || p.trial.candidates().empty()) {
    copy_name(r.strategy, "native");
    r.phases = 0;
  } else if (!p.trial.decided()) {
    // Nothing chosen yet: say so, never name a candidate that has not won.
    copy_name(r.strategy, "undecided");
    r.phases = 0;
    copy_note(r.note, "trial undecided: " + std::to_string(p.trial.candidates().size()) +
                          " candidates, " + std::to_string(p.trial.rounds()) +
                          " pairs against native measured; native so far");
  } else {
    const Candidate& w = p.usable[p.trial.winner()];
    copy_name(r.strategy, w.id);
    r.phases = static_cast<std::int64_t>(w.phases);
  }
  r.candidate_count = 0;
  auto add = [&r](std::string_view id, double predicted, double measured, std::string_view why) {
    if (r.candidate_count >= kMaxCandidateRecords) return;
    CandidateRecord& c = r.candidates[r.candidate_count++];
    const std::size_t n = std::min(id.size(), sizeof c.strategy - 1);
    std::memcpy(c.strategy, id.data(), n);
    c.strategy[n] = '\0';
    c.predicted_s = predicted;
    c.measured_s = measured;
    const std::size_t m = std::min(why.size(), sizeof c.rejected - 1);
    std::memcpy(c.rejected, why.data(), m);
    c.rejected[m] = '\0';
  };
  for (const learn::TrialCandidate& c : p.trial.candidates())
    add(c.id, c.predicted_s, c.measured_s, "");
  r.matrix_hash = p.matrix.hash();
  r.verdict = p.from_wisdom ? kVerdictFromWisdom
              : runs_trial() && p.trial.decided() && p.trial.candidates().size() > 1
                  ? kVerdictMeasured
                  : kVerdictNone;
  if (p.from_wisdom)
    copy_note(r.note, "from COMMSCHED_WISDOM: no trial");
  // Native's time per call: the lower of the trial's measurement and the mean of the calls that
  // ran native (those pay no agreement), so the net gain the report derives from it is never
  // flattered.
  r.native_per_call_s = -1;
  for (const learn::TrialCandidate& c : p.trial.candidates())
    if (c.id == "native" && c.measured_s >= 0) r.native_per_call_s = c.measured_s;
  if (r.calls > r.calls_optimised) {
    const double mean = r.time_native_s / static_cast<double>(r.calls - r.calls_optimised);
    if (r.native_per_call_s < 0 || mean < r.native_per_call_s) r.native_per_call_s = mean;
  }
  for (const auto& [id, why] : p.rejected) add(id, -1, -1, why);
}

// The cost model's time per call of a candidate on `m` as this library runs it: a plan after
// the per-call agreement, native agreeing one call in kNativeAgreeEvery.
learn::Predictor predictor(const CommState& cs, const core::CommMatrix& m) {
  const cost::Machine& machine = g().machine;
  // O(n log n) over the ranks: once per matrix, not once per strategy predicted.
  const double agree = cost::agreement_time(cs.size, machine, cs.topology);
  return [&cs, &m, &machine, agree](const core::Plan* plan) {
    return cost::predict_call(plan, m, machine, cs.topology, agree);
  };
}

// Whether a learned pattern's candidates are measured before one is kept: auto's trial.
bool runs_trial() { return g().trial_budgeted; }

// Plans a freshly gathered matrix on this rank (every rank computes the same candidates from
// the agreed predictions) and compiles each for this rank. `ok[i]` is this rank's verdict on
// candidate i; ok.back() on the pattern as a whole (its receive counts agree with the
// senders').
Pattern* learn_pattern(CommState& cs, core::CommMatrix&& m, std::vector<int>& ok,
                       const std::vector<learn::Prediction>& agreed) {
  Global& s = g();
  // A pattern seen before on this communicator keeps its plans, trial and report entry.
  for (auto& p : cs.patterns)
    if (p->matrix == m) {
      ok.assign(p->usable.size() + 1, 1);
      return p.get();
    }
  if (cs.patterns.size() >= kMaxPatternsPerComm) {
    fill_record(*cs.patterns.front());
    {
      std::lock_guard lock(s.mu);
      retire(cs.patterns.front()->record);
    }
    if (cs.timed_pattern == cs.patterns.front().get()) cs.timed_pattern = nullptr;
    cs.patterns.erase(cs.patterns.begin());
  }
  auto p = std::make_unique<Pattern>();
  p->matrix = std::move(m);
  p->last_call = cs.calls;
  p->signature = cs.send_bytes;
  p->signature.insert(p->signature.end(), cs.recv_bytes.begin(), cs.recv_bytes.end());
  p->signature_hash = learn::Learner::counts_hash(cs.send_bytes, cs.recv_bytes);
  PatternRecord& r = p->record;
  r.comm_root = cs.comm_root;
  r.comm_serial = cs.comm_serial;
  copy_name(r.call, cs.call);
  r.pattern = static_cast<std::int64_t>(cs.patterns.size());
  r.comm_size = cs.size;
  r.nonzeros = static_cast<std::int64_t>(p->matrix.nonzeros());
  r.bytes = static_cast<std::int64_t>(p->matrix.total_bytes());

  const bool plan_failed = fault("plan");
  r.lower_bound_s = cost::lower_bound(p->matrix, s.machine, cs.topology);
  const plan::Options options = plan_options(s.cfg, s.machine, cs.topology);
  // auto's trial runs more candidates where its calls are predicted to be cheap.
  std::size_t keep = learn::kTrialKeep;
  if (runs_trial()) {
    const auto in_step = std::find(s.pool.begin(), s.pool.end(), learn::kInStep) - s.pool.begin();
    keep = learn::trial_width(agreed, s.cfg.trial_calls, s.cfg.trial_seconds,
                              static_cast<std::size_t>(in_step));
  }
  std::vector<learn::CandidatePlan> plans = learn::plan_agreed(
      p->matrix, s.cfg.strategy, s.cfg.candidates, agreed, options, keep, s.cfg.max_staging);
  ok.clear();
  for (learn::CandidatePlan& cp : plans) {
    if (!cp.rejected.empty()) {
      p->rejected.emplace_back(cp.id, cp.rejected);
      continue;
    }
    Candidate c;
    c.id = cp.id;
    c.predicted_s = cp.predicted_s;
    c.native = cp.id == "native";
    c.drs = cp.id == "drs";
    c.in_step = cp.id == learn::kInStep;
    int fits = 1;
    // drs sends whole messages with the user's datatypes; native_sync is MPI's own call.
    if (!c.native && !c.drs && !c.in_step) {
      c.program = exec::compile(cp.plan, p->matrix, cs.rank);
      c.phases = cp.plan.phases.size();
      for (const exec::Step& st : c.program.steps) {  // MPI counts are ints
        for (const exec::Op& op : st.sends) fits = fits && op.bytes <= INT_MAX;
        for (const exec::Op& op : st.recvs) fits = fits && op.bytes <= INT_MAX;
      }
      // Staging is allocated once per pattern and reused by every call.
      try {
        c.staging.resize(c.program.staging_bytes);
      } catch (const std::bad_alloc&) {
        fits = 0;
      }
      if (fault("staging")) fits = 0;
      p->pack_send_if_noncontig = p->pack_send_if_noncontig || c.program.reads_send_bytes;
      p->pack_recv_if_noncontig = p->pack_recv_if_noncontig || c.program.writes_recv_bytes;
    }
    ok.push_back(fits && !plan_failed);
    p->usable.push_back(std::move(c));
  }
  // This rank's receive counts must be the matrix column, or the user's counts disagree
  // across ranks (native MPI reports that, so leave it to native).
  int consistent = 1;
  for (int j = 0; j < cs.size; ++j)
    if (p->matrix.at(j, cs.rank) != cs.recv_bytes[static_cast<std::size_t>(j)]) consistent = 0;
  ok.push_back(consistent && !plan_failed);
  if (!consistent) copy_note(r.note, "receive counts disagree with the senders' counts");
  cs.patterns.push_back(std::move(p));
  return cs.patterns.back().get();
}

// The ranks share the cost model's work. Rank r plans and predicts the entries of index r,
// r + n, ... of the pool (auto's, or the strategy the user named) and native, and one
// MIN-reduction gives every rank every prediction, so each rank then plans only the chosen
// candidates (learn_pattern). Every rank calls this on every learning call, whatever happened
// locally (no matrix, a pattern already known, a failure): it then contributes no prediction,
// and the candidates' agreement that follows catches any disagreement.
std::vector<learn::Prediction> share_predictions(CommState& cs, const core::CommMatrix* m) {
  Global& s = g();
  const std::vector<std::string>& pool = s.pool;
  std::vector<learn::Prediction> mine(pool.size() + 1);
  const bool known = m && std::any_of(cs.patterns.begin(), cs.patterns.end(),
                                      [&](const auto& p) { return p->matrix == *m; });
  if (m && !known) {
    try {
      const learn::Predictor predict = predictor(cs, *m);
      mine = learn::predict_share(*m, pool, plan_options(s.cfg, s.machine, cs.topology), predict,
                                  s.cfg.max_staging, static_cast<std::size_t>(cs.rank),
                                  static_cast<std::size_t>(cs.size));
    } catch (...) {
      mine.assign(pool.size() + 1, learn::Prediction{});
    }
  }
  std::vector<double> in = learn::pack_predictions(mine), out(in.size());
  if (PMPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_MIN,
                     cs.dup) != MPI_SUCCESS)
    return std::vector<learn::Prediction>(pool.size() + 1);  // nothing agreed: no predictions
  std::vector<learn::Prediction> agreed = learn::unpack_predictions(out);
  for (std::size_t i = 0; i < agreed.size(); ++i)  // this rank's own reasons keep their text
    if (agreed[i].rejected == mine[i].rejected) agreed[i].why = mine[i].why;
  return agreed;
}

// What a learning costs here: the last one's, agreed; before any, a guess from the agreement's
// cost, kLearnAgreements of them (where one takes a millisecond, as over TCP, a learning costs
// far more than kFirstLearnCost).
double learn_cost(const CommState& cs) {
  if (cs.learn_cost_s > 0) return cs.learn_cost_s;
  return std::max(kFirstLearnCost, kLearnAgreements * cs.agree_cost_s);
}

// The budget a learning needs before it starts: its cost, and as much again for the trial.
double learn_price(const CommState& cs) { return learn_cost(cs) / kLearnShare; }

// auto's budget share on this communicator (COMMSCHED_TRIAL_BUDGET), less where its trials
// were left undecided by patterns that went away (learn::Trial::share_after): a pattern that
// drifts every few dozen calls would otherwise have each new pattern learned and tried, and
// the whole budget spent on trials that never reach a verdict. Alike on every rank: the
// patterns, their trials and the calls they were in force are.
double budget_share(const CommState& cs) {
  int decided = 0, abandoned = 0;
  for (const auto& p : cs.patterns) {
    if (p->usable.size() < 2 || p->from_wisdom) continue;  // no trial to count
    if (p->trial.decided())
      ++decided;
    else if (p.get() != cs.current && cs.calls - p->last_call > kAbandonedAfter)
      ++abandoned;
  }
  return learn::Trial::share_after(g().cfg.trial_budget, decided, abandoned);
}

// COMMSCHED_TRIAL_BUDGET=1: the whole job's time, which no learning or probe waits for.
bool unbudgeted() { return g().cfg.trial_budget >= 1; }

// auto's learning budget: whether the job's time in all-to-all calls so far (agreed) pays for
// a learning (learn_price) within the trial's share of it. Forced strategies,
// COMMSCHED_TRIAL=0 and a budget of 1 learn at once.
bool learning_affordable(const CommState& cs) {
  if (!runs_trial() || unbudgeted()) return true;
  return cs.time_agreed_s * budget_share(cs) >= learn_price(cs);
}

// The calls until the budget pays for the next probe (deferred: for the learning too), at the
// agreed time per call so far; 0 when it already does, outside auto or with a budget of 1.
// Probes while nothing repeats are the whole cost of a job whose counts never settle, so
// together they get a quarter of the budget (kProbeShare), counted from the first; a deferred
// learning waits for its price (learn_price), once.
std::uint64_t budget_gap(const CommState& cs, bool deferred) {
  if (!runs_trial() || unbudgeted() || cs.calls == 0 || cs.time_agreed_s <= 0) return 0;
  const double per_call = cs.time_agreed_s / static_cast<double>(cs.calls);
  const double need =
      deferred ? (cs.agree_cost_s + learn_price(cs)) / budget_share(cs) - cs.time_agreed_s
               : (cs.probes_spent_s + cs.agree_cost_s) / (g().cfg.trial_budget * kProbeShare) -
                     cs.time_agreed_s;
  if (need <= 0) return 0;
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(need / per_call)),
                                 kMaxBudgetGap);
}

// A native call of the current learning streak: its count, time and fastest call (clocked
// calls only: an unclocked one's time is an earlier call's).
void note_streak_call(CommState& cs, double seconds, bool clocked) {
  ++cs.streak_calls;
  cs.streak_seconds += seconds;
  if (clocked && (cs.streak_fastest_s <= 0 || seconds < cs.streak_fastest_s))
    cs.streak_fastest_s = seconds;
}

// Without a machine file the built-in model knows nothing of this machine: it may predict
// 85 us for calls that take 50 ms, and then tries too many candidates. It is scaled by one
// factor, fitted so that it predicts native as this job's own native calls took (agreed, so
// every rank scales alike); the order of the predictions does not change. Returns the factor
// (1 when a machine file is set or nothing was measured).
double self_calibrate(const CommState& cs, std::vector<learn::Prediction>& predictions) {
  if (!g().cfg.machine.empty() || predictions.empty() || cs.native_seen_s <= 0) return 1;
  const double native = predictions.back().predicted_s;
  if (!(native > 0) || native >= learn::Prediction::kNone) return 1;
  const double scale = cs.native_seen_s / native;
  for (learn::Prediction& p : predictions)
    if (p.predicted_s < learn::Prediction::kNone) p.predicted_s *= scale;
  return scale;
}

// Keeps the candidates every rank can run (native always) and starts the trial.
void settle_candidates(Pattern& p, const std::vector<int>& all_ok, bool trial, int trial_calls,
                       std::uint64_t seed, std::uint64_t calls_before, const learn::Verdict* known) {
  std::vector<Candidate> keep;
  for (std::size_t i = 0; i < p.usable.size(); ++i) {
    if (all_ok[i] || p.usable[i].native) {
      keep.push_back(std::move(p.usable[i]));
    } else {
      p.rejected.emplace_back(p.usable[i].id, "could not be set up on every rank");
      ++g().fallbacks;
    }
  }
  p.usable = std::move(keep);
  if (p.usable.empty()) {  // native is always planned; stay safe anyway
    Candidate native;
    native.id = "native";
    native.native = true;
    p.usable.push_back(std::move(native));
  }
  std::vector<learn::TrialCandidate> tc;
  for (const Candidate& c : p.usable) tc.push_back({c.id, c.predicted_s, -1});
  // After the decision, the other side is re-measured every 200 calls. The seed and the calls
  // before are the same on every rank, so the trial's draws and budget are too.
  // A verdict from an earlier run of this job (COMMSCHED_WISDOM) settles it without a trial,
  // when that strategy could be set up again here.
  std::size_t from_wisdom = tc.size();
  for (std::size_t i = 0; known && trial && i < tc.size(); ++i)
    if (tc[i].id == known->strategy) from_wisdom = i;
  p.from_wisdom = from_wisdom < tc.size();
  const std::uint64_t trial_seed = seed ^ p.matrix.hash();
  p.set_trial(p.from_wisdom ? learn::Trial::decided_for(std::move(tc), from_wisdom)
              : trial       ? learn::Trial(std::move(tc), trial_calls, kRecheckEvery, trial_seed)
                            : learn::Trial::decided_for(std::move(tc), 0));
  p.trial.add_calls_before(calls_before);
}

// Packs every outgoing (or, for receives, sizes every incoming) message of `side` at byte
// offsets, for in-place sends and for split messages of non-contiguous types.
bool pack_side(Side& side, int n, const std::vector<Bytes>& bytes, MPI_Comm comm, bool fill) {
  side.packed = true;
  side.packed_offset.assign(static_cast<std::size_t>(n), 0);
  std::size_t total = 0;
  for (int j = 0; j < n; ++j) {
    side.packed_offset[static_cast<std::size_t>(j)] = total;
    total += bytes[static_cast<std::size_t>(j)];
  }
  side.packed_bytes.resize(total);
  if (!fill) return true;
  for (int j = 0; j < n; ++j) {
    const auto u = static_cast<std::size_t>(j);
    if (bytes[u] == 0) continue;
    int pos = 0;
    if (PMPI_Pack(side.base + side.displs[u] * side.extent, side.counts[u], side.type,
                  side.packed_bytes.data() + side.packed_offset[u], static_cast<int>(bytes[u]), &pos,
                  comm) != MPI_SUCCESS ||
        static_cast<Bytes>(pos) != bytes[u])
      return false;
  }
  return true;
}

bool unpack_side(Side& side, int n, const std::vector<Bytes>& bytes, MPI_Comm comm) {
  for (int j = 0; j < n; ++j) {
    const auto u = static_cast<std::size_t>(j);
    if (bytes[u] == 0) continue;
    int pos = 0;
    if (PMPI_Unpack(side.packed_bytes.data() + side.packed_offset[u], static_cast<int>(bytes[u]),
                    &pos, side.base + side.displs[u] * side.extent, side.counts[u], side.type,
                    comm) != MPI_SUCCESS)
      return false;
  }
  return true;
}

// Readies this call's buffers for the pattern's candidates: in-place sends and split messages
// of non-contiguous datatypes go through packed copies (native candidates ignore them).
bool prepare(CommState& cs, const Pattern& p, bool in_place, Side& send, Side& recv) {
  const bool plans = std::any_of(p.usable.begin(), p.usable.end(),
                                 [](const Candidate& c) { return !c.native; });
  if (plans && (fault("send") || fault("recv"))) return false;
  if (in_place || (p.pack_send_if_noncontig && !send.contiguous))
    if (!pack_side(send, cs.size, cs.send_bytes, cs.dup, true)) return false;
  if (p.pack_recv_if_noncontig && !recv.contiguous)
    if (!pack_side(recv, cs.size, cs.recv_bytes, cs.dup, false)) return false;
  return true;
}

// Whether MPI must reject these arguments (a negative count, MPI_DATATYPE_NULL where data
// moves): the call then goes to the native MPI_Alltoallv untouched, so the application gets
// MPI's own error code through its own error handler, and the library queries nothing about
// them (a type query on MPI_DATATYPE_NULL would raise the error under a fatal handler).
bool rejected_by_mpi(int n, bool in_place, const int* sendcounts, MPI_Datatype sendtype,
                     const int* recvcounts, MPI_Datatype recvtype) {
  if (recvtype == MPI_DATATYPE_NULL || (!in_place && sendtype == MPI_DATATYPE_NULL)) return true;
  if (!recvcounts || (!in_place && !sendcounts)) return true;
  for (int j = 0; j < n; ++j)
    if (recvcounts[j] < 0 || (!in_place && sendcounts[j] < 0)) return true;
  return false;
}

// The native call on a path that reads the clock only at the call's entry into the library
// (`entry`) and here: `seconds` is the time from entry, so what the library added before the
// call counts too (as a plan's time does), and `end` is the clock at the call's return.
int run_native_from(const Exchange& x, double entry, double& seconds, double& end) {
  const int rc = x.native(x);
  end = now();
  seconds = end - entry;
  return rc;
}

}  // namespace

std::vector<int> node_of_ranks(MPI_Comm comm, int size, int fake) {
  const std::uint64_t mine = node_key();
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(size), 0);
  if (PMPI_Allgather(&mine, 1, MPI_UINT64_T, keys.data(), 1, MPI_UINT64_T, comm) != MPI_SUCCESS)
    keys.assign(keys.size(), 0);  // alike on every rank: one node
  return core::node_layout(keys, fake);
}

WisdomContext wisdom_context() {
  const Global& s = g();
  return {s.wisdom_on ? &s.wisdom : nullptr, s.machine_hash};
}

const settings::Settings* active_settings() {
  ensure_setup();
  return g().active ? &g().cfg : nullptr;
}

bool library_active() { return g().active; }

int init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    after_init(provided);
  }
  return rc;
}

int init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) after_init(*provided);
  return rc;
}

void after_init(int provided) {
  try {
    setup(provided, true);
    p2p_init();  // every rank is here: the communicators of level collective
    // The engine's state is not shared between threads.
    if (provided != MPI_THREAD_MULTIPLE) nb_setup_world();
  } catch (...) {
  }
}

void forget_comm(MPI_Comm comm) {
  // The communicator's own state goes with its attribute (delete_comm_state); held burst sends
  // on it must leave before it does.
  try {
    if (g().active) {
      nb_forget_comm(comm);
      p2p_forget_comm(comm);
    }
  } catch (...) {
  }
}

int comm_free(MPI_Comm* comm) {
  if (comm) forget_comm(*comm);
  return PMPI_Comm_free(comm);
}

int comm_disconnect(MPI_Comm* comm) {
  if (comm) forget_comm(*comm);
  return PMPI_Comm_disconnect(comm);
}

void before_finalize() {
  try {
    Global& s = g();
    if (!s.initialised || (!s.active && !s.all_native)) return;
    nb_finish();  // collective: its exchanges complete on every rank
    ReportHeader h;
    h.thread_level = thread_level_name(s.provided);
    if (s.all_native) {  // nothing learned or substituted: say what ran native and why
      h.native_reason = s.all_native_reason;
      h.unlearned_calls = s.native_calls.load();
      PMPI_Comm_size(MPI_COMM_WORLD, &h.ranks);
      h.strategy_setting = s.cfg.strategy;
      h.warnings = s.warnings;
      write_report(MPI_COMM_WORLD, {}, h, s.cfg.report_path,
                   s.cfg.log_level >= core::LogLevel::warn);
      s.all_native = false;
      return;
    }
    h.bursts = p2p_finish(h.burst_level, h.burst_posts_native);  // collective: every rank
    if (s.provided == MPI_THREAD_MULTIPLE && bursts_requested(s.cfg))
      h.burst_native_reason = kThreadsBurstReason;
    std::vector<PatternRecord> recs;
    {
      // MPI_Finalize is called once every thread's calls have returned; the lock is for form.
      std::lock_guard lock(s.mu);
      recs = s.retired;
      h.unlearned_calls = s.retired_unlearned;
      for (const auto& [id, cs] : s.comms) {
        cs->in_step.finish();  // every rank of it started the agreement in flight
        for (const auto& p : cs->patterns) {
          fill_record(*p);
          recs.push_back(p->record);
        }
        h.unlearned_calls += cs->unlearned_calls + cs->streak_calls;
      }
    }
    PMPI_Comm_size(MPI_COMM_WORLD, &h.ranks);
    h.strategy_setting = s.cfg.strategy;
    h.warnings = s.warnings;
    h.faults_injected = s.faults_injected;
    h.fallbacks = s.fallbacks;
    h.device_calls = s.device_calls;
    h.paused_calls = paused_calls();
    h.in_step = settings::in_step_name(s.in_step.mode);
    h.in_step_synced = s.in_step.synced;
    h.in_step_unsynced = s.in_step.unsynced;
    h.in_step_short = s.in_step.short_calls;
    h.in_step_lossless = s.in_step.lossless;
    h.in_step_ratio = s.in_step.ratio;
    h.phases_kept = s.in_step.phased;
    h.phases_left = s.in_step.unphased;
    h.phase_ratio = s.in_step.phase_ratio;
    h.phase_rounds = s.in_step.phase_rounds;
    const std::vector<PatternRecord> merged = write_report(
        MPI_COMM_WORLD, recs, h, s.cfg.report_path, s.cfg.log_level >= core::LogLevel::warn);
    if (s.wisdom_on && s.world_rank == 0) save_wisdom(s, merged);
    s.finalizing = true;  // MPI_Finalize deletes the attributes that still hold our states
    if (s.tracer.is_open() && !s.tracer.close(now()))
      core::log_warn("COMMSCHED_TRACE: " + s.tracer.last_error());
    s.active = false;  // nothing after finalize
  } catch (...) {
  }
}

int finalize() {
  before_finalize();
  return PMPI_Finalize();
}

namespace {

// The learning streak's native calls, time and fastest call start again from none.
void clear_streak(CommState& cs) {
  cs.streak_calls = 0;
  cs.streak_seconds = 0;
  cs.streak_fastest_s = 0;
}

// A call that starts a learning streak (its counts seen once in the recent history) closes the
// previous streak, which never became a pattern: its calls count as unlearned.
void close_unlearned_streak(CommState& cs) {
  if (!cs.learner.learning() || cs.learner.streak() != 1) return;
  cs.unlearned_calls += cs.streak_calls;
  clear_streak(cs);
}

// Whether a call that only runs MPI's own and counts may leave the clock alone: the
// communicator has a recent time per call, this is not its one clocked call in kClockEvery
// (kClockEveryShort for short calls), no trial's measurement waits for this entry, and no
// trace wants each call's time.
bool clock_may_rest(const Global& s, const CommState& cs,
                    const learn::EntryClock& entries = t_entries) {
  static_assert(std::has_single_bit(kClockEvery) && std::has_single_bit(kClockEveryShort));
  const std::uint64_t mask = (cs.per_call_s < kShortCallS ? kClockEveryShort : kClockEvery) - 1;
  return cs.per_call_s > 0 && ((cs.calls + 1) & mask) != 0 && !entries.next_wanted &&
         !s.tracer.is_open();
}

// Whether the next call of `p`, the pattern in force on `cs`, runs MPI's own without an
// agreement: its trial chose native (or nothing else could run), and the call is not the one in
// kNativeAgreeEvery that agrees, which notices new counts.
bool pinned_native_call(const CommState& cs, const Pattern& p) {
  return p.trial.decided() && p.running().native && (cs.calls + 1) % kNativeAgreeEvery != 0;
}

// The schedule the phase trial (InStepGate) tries for `p`, among its usable candidates that
// are schedules (learn::is_phase_schedule, learn::phase_schedule); -1 where it has none. The
// plans are the communicator's and its trial's pairs are agreed, so every rank picks alike.
// Worked out again only when the trial has paired since (Pattern::phase_rounds): the phase
// trial asks on each of its calls.
int phase_candidate(const Pattern& p) {
  if (p.phase_rounds == p.trial.rounds()) return p.phase_index;
  std::vector<bool> schedule(p.usable.size());
  for (std::size_t i = 0; i < p.usable.size(); ++i)
    schedule[i] = learn::is_phase_schedule(p.usable[i].id, p.usable[i].phases);
  p.phase_index = learn::phase_schedule(p.trial, schedule);
  p.phase_rounds = p.trial.rounds();
  return p.phase_index;
}

// Whether the phase trial may try `p`: it has a schedule, and its own trial has not chosen
// one already. Agreed state, alike on every rank.
bool phases_apply(const Pattern& p) {
  return phase_candidate(p) >= 0 && (!p.trial.decided() || p.running().native);
}

// Whether the pattern in force on `cs` is one the phase trial may try.
bool phases_offered(const CommState& cs) {
  return cs.current && !cs.learner.learning() && phases_apply(*cs.current);
}

// The phase trial's verdict, at the call that reached it: where the schedule won, it is the
// pattern's for good (its own trial ends there); otherwise the pattern's trial goes on where
// it was.
void take_phase_verdict(CommState& cs) {
  const int verdict = cs.in_step.take_verdict();
  Pattern* p = cs.current;
  if (verdict <= 0 || !p || cs.learner.learning() || !phases_apply(*p)) return;
  const auto c = static_cast<std::size_t>(phase_candidate(*p));
  p->set_trial(learn::Trial::decided_for(p->trial.candidates(), c));
  p->ledger.charge(p->trial);
}

// The lean path, the common calls of a job: MPI's own call that only counts, on the previous
// call's communicator (one calling thread), on a call whose clock rests (kClockEvery). Three
// kinds take it: a communicator that runs native for good (COMMSCHED_STRATEGY=native, or
// native_only); a pattern in force that runs native, between its agreements
// (kNativeAgreeEvery); and a learning communicator between probes, with the previous call's
// counts and predefined types, whose counts' hash goes into the learner's history. Each does
// what the general path (exchange_general) does with such a call, and only that: MPI's own
// call, the count and the communicator's recent time per call. Everything is checked here, in
// a small frame of its own: set up, active, not paused (MPI_Pcontrol). False: the general
// path runs the call.
bool run_lean(const Exchange& x, int& rc) {
  Global& s = g();
  if (!s.initialised.load(std::memory_order_acquire) || !s.active || x.comm == MPI_COMM_NULL ||
      paused())
    return false;
  const auto& last = s.last_state;
  if (s.provided == MPI_THREAD_MULTIPLE || !last.state || last.comm != x.comm ||
      last.family != x.family)
    return false;
  CommState& cs = *last.state;
  learn::EntryClock& entries = s.main_entries ? *s.main_entries : t_entries;
  if (!clock_may_rest(s, cs, entries)) return false;
  // Every path asks alike, so ranks on different paths see the same offer.
  if (cs.in_step.awaits_phases()) cs.in_step.offer_phases(phases_offered(cs));
  enum class Kind { native, pinned, learning } kind;
  Pattern* const p = cs.current;
  if (cs.native_only || s.strategy_native) {
    kind = Kind::native;
  } else if (cs.learner.learning()) {
    if (!x.describable || cs.calls + 1 >= cs.next_probe ||
        !cs.repeat.matches(x.sendbuf == MPI_IN_PLACE, x.sendcounts, x.sendtype, x.recvcounts,
                           x.recvtype, static_cast<std::size_t>(cs.size)))
      return false;
    kind = Kind::learning;
  } else if (p && pinned_native_call(cs, *p) && !cs.in_step.phases_pending()) {
    kind = Kind::pinned;
  } else {
    return false;
  }
  flush_point(x.name + 4);  // without "MPI_"
  cs.in_step.before_call(s.in_step, x.comm);
  take_phase_verdict(cs);
  cs.call = x.name;
  const double seconds = cs.per_call_s;
  switch (kind) {
    case Kind::native:
      rc = x.native(x);
      ++cs.unlearned_calls;
      break;
    case Kind::pinned:
      ++cs.calls;
      rc = x.native(x);
      ++p->record.calls;
      p->record.time_native_s += seconds;
      break;
    case Kind::learning:
      ++cs.calls;
      cs.learner.repeat(cs.repeat.hash);
      close_unlearned_streak(cs);
      rc = x.native(x);
      note_streak_call(cs, seconds, false);
      break;
  }
  if (s.trial_budgeted) entries.in_calls_s += seconds;
  return true;
}

// Which cached pattern, if any, this call's bytes (cs.send_bytes, cs.recv_bytes) are on this
// rank: the hash skips the others, the exact comparison decides. -1: none.
int cached_pattern(const CommState& cs, std::uint64_t counts_hash) {
  const std::size_t n = cs.send_bytes.size();
  for (std::size_t i = 0; i < cs.patterns.size(); ++i) {
    const std::vector<Bytes>& sig = cs.patterns[i]->signature;
    if (cs.patterns[i]->signature_hash == counts_hash && !cs.patterns[i]->usable.empty() &&
        sig.size() == 2 * n &&
        std::equal(cs.send_bytes.begin(), cs.send_bytes.end(), sig.begin()) &&
        std::equal(cs.recv_bytes.begin(), cs.recv_bytes.end(),
                   sig.begin() + static_cast<std::ptrdiff_t>(n)))
      return static_cast<int>(i);
  }
  return -1;
}

// The call's agreement, one small allreduce, and what it settles on every rank alike: the
// budget's inputs and the previous call's measurement for its pattern's trial. `agreed`: the
// smallest vote; `hit`: the cached pattern every rank is on, -1 if none. Returns MPI's code.
int agree(CommState& cs, MPI_Comm comm, std::int64_t vote, int match, std::int64_t& agreed,
          int& hit) {
  // One small agreement per call, MAX-reduced: minus the vote, the previous call's time on
  // this rank and minus its agreement's duration when it ran native (their maximum and
  // minimum over ranks feed auto's trial), and the cached pattern index with its negation
  // (equal maximum and minimum: every rank is on the same cached pattern), and this rank's
  // fastest native call of its learning streak (their maximum calibrates the cost model; the
  // fastest, as a streak's first call pays first-touch costs).
  // Then the budget's inputs: this rank's time in all-to-all calls so far (the job's, on every
  // communicator), minus its last learning's and last agreement's durations (their minimum
  // over ranks is what they cost). Last, the previous call's own time (the trial weighs it to
  // the next all-to-all's entry, its budget counts the call alone), and what the trials under
  // way in this process have spent (one budget).
  const double agree_t0 = now();
  double weighed_local = cs.timed_seconds;
  if (cs.timed_pattern && cs.timed_clock == &t_entries) {
    const double from = t_entries.entry(cs.timed_entry), to = t_entries.entry(cs.timed_entry + 1);
    if (from >= 0 && to >= from) weighed_local = std::max(cs.timed_seconds, to - from);
  }
  double agree_in[11] = {-static_cast<double>(vote), weighed_local, static_cast<double>(match),
                         -static_cast<double>(match), -cs.timed_agreement, cs.streak_fastest_s,
                         t_entries.in_calls_s, -cs.learn_local_s, -cs.agree_local_s,
                         cs.timed_seconds, g_trials_spent.load()};
  double agree_out[11] = {0, 0, -1, 1, 0, 0, 0, 0, 0, 0, 0};
  // Until the communicator first learns it has no private duplicate: the agreement then runs
  // on the application's communicator, where every rank makes it at the same point of the
  // same collective call, so it cannot cross the application's own collectives.
  int rc = PMPI_Allreduce(agree_in, agree_out, 11, MPI_DOUBLE, MPI_MAX,
                          cs.dup != MPI_COMM_NULL ? cs.dup : comm);
  cs.agree_local_s = now() - agree_t0;
  cs.learn_local_s = 0;
  if (rc == MPI_SUCCESS) {
    if (agree_out[5] > 0) cs.native_seen_s = agree_out[5];
    cs.time_agreed_s = agree_out[6];
    const double learned_s = -agree_out[7], agreed_s = -agree_out[8];  // shortest over ranks
    if (learned_s > 0) {
      cs.learn_cost_s = learned_s;
      // The learning just paid comes out of its pattern's trial budget (agreed, every rank).
      if (cs.current && !cs.current->trial.decided()) cs.current->spend(learned_s);
    }
    if (agreed_s > 0) cs.agree_cost_s = agreed_s;
  }
  agreed = rc == MPI_SUCCESS ? static_cast<std::int64_t>(-agree_out[0]) : 0;
  hit = rc == MPI_SUCCESS && agree_out[2] == -agree_out[3] ? static_cast<int>(agree_out[2]) : -1;
  static_assert(learn::Learner::kMatch < (std::int64_t{1} << 53), "votes travel as doubles");
  if (cs.timed_pattern && rc == MPI_SUCCESS) {
    learn::Trial& trial = cs.timed_pattern->trial;
    const bool was_decided = trial.decided();
    const double weighed =
        learn::Trial::call_seconds(agree_out[1], -agree_out[4], kNativeAgreeEvery);
    trial.set_job_time(cs.time_agreed_s);
    trial.set_budget_share(budget_share(cs));
    // Every rank's total holds this trial's spending alike; the rest is the other trials'.
    trial.set_others_spent(agree_out[10] - cs.timed_pattern->ledger.share());
    // Native's agreement is the trial's cost, the call's own time the budget's base.
    trial.measured(weighed, agree_out[1] - weighed,
                   learn::Trial::call_seconds(agree_out[9], -agree_out[4], kNativeAgreeEvery));
    cs.timed_pattern->ledger.charge(trial);
    if (!was_decided && trial.decided()) {
      const learn::TrialCandidate& w = trial.candidates()[trial.winner()];
      core::log_info("trial decided after " + std::to_string(trial.rounds()) +
                     " pairs: strategy " + w.id + " (" + std::to_string(w.measured_s) +
                     " s per call); its extra time against native " +
                     std::to_string(trial.extra_seconds()) + " s");
    }
  }
  cs.timed_pattern = nullptr;
  cs.timed_clock = nullptr;
  cs.timed_seconds = 0;
  cs.timed_agreement = 0;
  return rc;
}

// Every rank is on the same cached pattern: it becomes the pattern in force, with no gather
// (patterns that alternate), and takes the streak's native calls. Returns what this call runs.
learn::Action adopt_cached(CommState& cs, Pattern& cached) {
  const bool pinned = cached.usable.size() == 1 && cached.usable.front().native;
  cs.current = &cached;
  cs.learner.adopt(pinned);
  if (cs.streak_calls > 0) {
    cached.record.calls += cs.streak_calls;
    cached.record.time_native_s += cs.streak_seconds;
    clear_streak(cs);
  }
  return pinned ? learn::Action::native : learn::Action::run_plan;
}

// Learns the pattern every rank has repeated: gathers the matrix, predicts and plans the
// candidates (the same on every rank), agrees that every rank planned them and whether this
// call can run one, and settles the trial. Collective over the private duplicate. Returns
// run_plan when every rank can run the chosen plan now, else native.
learn::Action learn_here(CommState& cs, bool can_run, bool in_place, Side& send, Side& recv,
                         double learn_t0) {
  Global& s = g();
  core::CommMatrix m;
  Pattern* p = nullptr;
  std::vector<int> ok;
  const bool gathered = gather_matrix(cs, m);
  std::vector<learn::Prediction> predictions =
      share_predictions(cs, gathered ? &m : nullptr);
  const double scale = self_calibrate(cs, predictions);
  if (gathered) {
    try {
      p = learn_pattern(cs, std::move(m), ok, predictions);
      if (p->trial.candidates().empty() && scale != 1) {  // a new pattern: its bound too
        p->record.model_scale = scale;
        if (p->record.lower_bound_s > 0) p->record.lower_bound_s *= scale;
      }
      // Whether this call can run a plan now: a passing failure leaves the pattern learned.
      ok.push_back(can_run && prepare(cs, *p, in_place, send, recv) ? 1 : 0);
    } catch (const std::bad_alloc&) {
      p = nullptr;
    }
  }
  // Every rank planned the same candidates, so the flags line up. One MIN-reduction of the
  // flags' count, its negation and the flags, padded to a length every rank knows (at most one
  // candidate per pool entry and native, then two flags); a rank that failed sends zeros.
  const std::size_t most = s.pool.size() + 3;
  int count = p && ok.size() <= most ? static_cast<int>(ok.size()) : 0;
  std::vector<int> flags(most + 2, 0), all(flags.size(), 0);
  flags[0] = count;
  flags[1] = -count;
  std::copy_n(ok.begin(), count, flags.begin() + 2);
  if (PMPI_Allreduce(flags.data(), all.data(), static_cast<int>(flags.size()), MPI_INT, MPI_MIN,
                     cs.dup) != MPI_SUCCESS)
    all.assign(flags.size(), 0);
  const int min_count = all[0], max_count = -all[1];
  bool all_ok = min_count > 0 && min_count == max_count;
  all.erase(all.begin(), all.begin() + 2);
  all.resize(static_cast<std::size_t>(std::max(max_count, 2)), 0);
  all_ok = all_ok && all[all.size() - 2] == 1;
  const bool run_now = all_ok && all.back() == 1;
  if (!run_now) ++s.fallbacks;
  if (all_ok && p->trial.candidates().empty()) {
    all.resize(all.size() - 2);
    p->record.layout_hash = learn::layout_hash(cs.topology.node_of);
    const learn::Verdict* known =
        s.wisdom_on ? s.wisdom.find({p->matrix.hash(), cs.size, p->record.layout_hash,
                                     s.machine_hash})
                    : nullptr;
    settle_candidates(*p, all, runs_trial(), s.cfg.trial_calls, s.cfg.seed,
                      cs.calls > 0 ? cs.calls - 1 : 0, known);
    const double share = budget_share(cs);
    p->trial.set_budget_share(share);
    if (runs_trial() && share < s.cfg.trial_budget) {
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.3g %%", 100 * share);
      core::log_info_once("share-" + std::to_string(cs.comm_serial),
                          "trials left undecided on communicator #" +
                              std::to_string(cs.comm_serial) +
                              " as their patterns went away: its next trials get " + percent +
                              " of the job's time (one notice)");
    }
    // The probes that found it, too (agreed): learning, probes and trial share one budget.
    p->spend(cs.probes_spent_s - cs.probes_charged_s);
    cs.probes_charged_s = cs.probes_spent_s;
    if (s.tracer.is_open()) {
      std::lock_guard lock(s.mu);
      p->trace_id = s.tracer.add_pattern(
          {{cs.comm_root, cs.comm_serial}, cs.size, cs.rank, p->record.pattern,
           p->matrix.nonzeros(), p->matrix.total_bytes(), p->matrix.hash(), p->running().id,
           static_cast<std::uint32_t>(p->running().phases), p->matrix.row(cs.rank)});
    }
    core::log_info_once(
        "learned-" + std::to_string(cs.comm_serial) + "-" + std::to_string(p->record.pattern),
        "learned a " + std::to_string(cs.size) + "-rank pattern (" +
            std::to_string(p->matrix.nonzeros()) + " messages, " +
            std::to_string(p->matrix.total_bytes()) + " bytes): " +
            (p->trial.decided() ? "strategy " + p->running().id
                                : "trying " + std::to_string(p->usable.size()) +
                                      " candidates, first " + p->running().id));
  }
  if (!all_ok && p && p->trial.candidates().empty()) {
    // Not learned everywhere: forget it on every rank that planned it, so the pattern
    // caches of all ranks stay identical.
    cs.patterns.pop_back();
    p = nullptr;
  }
  cs.current = all_ok ? p : nullptr;
  // A pattern whose only choice is native needs no plan state: pin it.
  const bool plans = all_ok && p->usable.size() > 1;
  cs.learner.planned(plans || (all_ok && !p->usable.front().native));
  if (p) {
    p->record.calls += cs.streak_calls;
    p->record.time_native_s += cs.streak_seconds;
    p->record.learning_s += cs.streak_seconds;
  }
  clear_streak(cs);
  cs.learn_local_s = now() - learn_t0;  // the next agreement makes it the known cost
  return run_now ? learn::Action::run_plan : learn::Action::native;
}

// The call just run on this thread is the one the next agreement reports to `p`'s trial: its
// own time, its agreement's duration where native skips it once chosen, and where its entry
// sits on this thread's clock, so that the agreement can weigh it to the next call's entry.
void time_call(CommState& cs, Pattern& p, double seconds, double agreement) {
  cs.timed_pattern = &p;
  cs.timed_seconds = seconds;
  cs.timed_agreement = agreement;
  cs.timed_clock = &t_entries;
  cs.timed_entry = t_entries.calls - 1;
  t_entries.next_wanted = true;
}

// Runs the pattern in force as every rank agreed: its chosen plan on the private duplicate
// (or native, pinned), timed from `t0` for the trial, recorded.
int run_pattern(CommState& cs, Pattern& p, const Exchange& x, Side& send, Side& recv,
                double t0) {
  Global& s = g();
  int rc = MPI_SUCCESS;
  // In the phase trial the gate says what runs, the same on every rank: the schedule it tries
  // or native; the pattern's own trial measures nothing meanwhile.
  const int phase = cs.in_step.phase_trial() && phases_apply(p) ? phase_candidate(p) : -1;
  std::size_t index = p.trial.current();
  if (phase >= 0) {
    index = static_cast<std::size_t>(phase);
    copy_name(p.record.phase_schedule, p.usable[index].id);
    if (!cs.in_step.phased())
      for (std::size_t i = 0; i < p.usable.size(); ++i)
        if (p.usable[i].native) index = i;
  }
  const Candidate& c = p.usable[index];
  double agreement = 0;  // native: this rank's agreement, most of which it will not pay
  if (c.native || c.in_step) {  // native_sync: the agreement just made has every rank in it
    if (c.native) agreement = now() - t0;
    rc = x.native(x);
  } else if (c.drs) {
    rc = drs_alltoallv(send, recv, cs.dup, cs.rank, cs.size, cs.calls, s.cfg.seed + cs.calls);
  } else {
    PmpiTransport t(cs.dup, cs.rank, send, recv, const_cast<std::uint8_t*>(c.staging.data()));
    exec::run(c.program, t);
    rc = t.error();
    if (rc == MPI_SUCCESS && recv.packed && !unpack_side(recv, cs.size, cs.recv_bytes, cs.dup))
      rc = MPI_ERR_INTERN;
  }
  // The schedule ran on the private duplicate, which returns its errors: raise one on the
  // application's communicator, through the handler it chose, as the native call would (MPI's
  // own call has raised its error already).
  if (rc != MPI_SUCCESS && !c.native && !c.in_step) PMPI_Comm_call_errhandler(x.comm, rc);
  const double dt = now() - t0;
  trace_call(cs, &p, c.id, !c.native, c.phases, t0, dt);
  ++p.record.calls;
  if (!p.trial.decided()) p.record.trial_s += dt;
  if (c.native) {
    p.record.time_native_s += dt;
  } else {
    ++p.record.calls_optimised;
    p.record.time_optimised_s += dt;
  }
  // The trial compares what each candidate costs per call once chosen, both timed from
  // entry: a plan pays the agreement every call, native one call in kNativeAgreeEvery
  // (Trial::call_seconds takes the rest off at the next agreement).
  if (phase < 0) time_call(cs, p, dt, agreement);
  return rc;
}

// The shared steps of every entry point that the lean path does not take: describe, match a
// cached pattern, agree, learn and plan, run, record.
[[gnu::noinline]] int exchange_general(const Exchange& x) {
  const void* sendbuf = x.sendbuf;
  const int* sendcounts = x.sendcounts;
  const int* sdispls = x.sdispls;
  MPI_Datatype sendtype = x.sendtype;
  void* recvbuf = x.recvbuf;
  const int* recvcounts = x.recvcounts;
  const int* rdispls = x.rdispls;
  MPI_Datatype recvtype = x.recvtype;
  MPI_Comm comm = x.comm;
  ensure_setup();
  Global& s = g();
  if (!s.active || comm == MPI_COMM_NULL) {
    if (s.all_native) s.native_calls.fetch_add(1, std::memory_order_relaxed);
    return x.native(x);
  }
  flush_point(x.name + 4);  // without "MPI_"
  // MPI_Pcontrol(0) on this rank: every path below runs this call native; where the ranks
  // agree, this rank votes "cannot run" and lets no pattern be learned.
  const bool paused = note_paused_call();
  double seconds = 0;
  const bool budgeted = s.trial_budgeted;  // runs_trial(), without a second g() per call
  // Every call's time on this thread, whichever way it leaves: the budget's base, used only
  // under auto's trial. A clocked call reads the clock at its start and at the native call's
  // return (add_time.end); an unclocked one adds its communicator's recent time per call.
  struct AddTime {
    learn::EntryClock* clock = nullptr;
    bool clocked = false;
    double t0 = 0;
    double end = 0;
    double unclocked_s = 0;
    ~AddTime() {
      if (clock) clock->in_calls_s += clocked ? (end > 0 ? end : now()) - t0 : unclocked_s;
    }
  } add_time;
  double entry = 0;
  auto start_clock = [&] {
    entry = now();
    add_time.clocked = true;
    add_time.t0 = entry;
    if (budgeted) {
      t_entries.enter(entry);
      t_entries.next_wanted = false;
      add_time.clock = &t_entries;
    }
  };
  try {
    CommState* csp = state_for(comm, x.family);
    CommState& cs = *csp;
    cs.call = x.name;
    if (cs.in_step.awaits_phases()) cs.in_step.offer_phases(phases_offered(cs));
    cs.in_step.before_call(s.in_step, comm);
    take_phase_verdict(cs);
    // Most calls of a job run MPI's own and only count: their time per call matters to the
    // budget and the report, not each call's. Those paths read the clock on one call in
    // kClockEvery (always on the call after a trial's measured one, whose span ends at the
    // next entry); the others add the communicator's latest clocked time. Every other path
    // reads the clock here.
    if (!clock_may_rest(s, cs)) start_clock();
    // MPI's own call on a path that only counts it: `seconds` is its time.
    auto run_counted = [&]() {
      if (!add_time.clocked) {
        const int rc = x.native(x);
        seconds = cs.per_call_s;
        if (budgeted) {
          add_time.clock = &t_entries;
          add_time.unclocked_s = seconds;
        }
        return rc;
      }
      const int rc = run_native_from(x, entry, seconds, add_time.end);
      cs.note_clocked(seconds);
      return rc;
    };
    if (cs.native_only || s.strategy_native) {
      const int rc = run_counted();
      trace_call(cs, nullptr, "native", false, 0, entry, seconds);
      ++cs.unlearned_calls;
      return rc;
    }
    // Native calls that need no agreement, because native is right for any counts and every
    // rank knows from agreed state that this call runs native:
    // - the pattern in force runs native (auto's trial chose it, or nothing else could run): the
    //   ranks agree only every kNativeAgreeEvery-th call, which notices new counts;
    // - auto's trial waits for its budget to refill: native calls it does not measure (a
    //   measurement still pending from the previous call is dropped, on every rank alike);
    // - auto's trial measures native next: its time travels with the next call's agreement,
    //   which that call makes anyway (it runs a candidate, or finds the counts changed), so a
    //   measured pair costs one agreement, not two; the pending measurement (timed_pattern)
    //   sends the next call through the agreement.
    // - the phase trial runs native in this epoch: every rank knows it from the gate; the
    //   pattern's own trial waits, and measures nothing meanwhile.
    if (Pattern* p = cs.current; p && !cs.learner.learning()) {
      const bool decided = p->trial.decided();
      const bool phase_trial = cs.in_step.phase_trial() && phases_apply(*p);
      if (phase_trial) cs.timed_pattern = nullptr;  // on every rank alike
      const bool frozen = phase_trial && !cs.in_step.phased();
      const bool pinned = !phase_trial && pinned_native_call(cs, *p);
      const bool owed = !phase_trial && !decided && p->trial.native_calls_owed() > 0;
      const bool measured =
          !phase_trial && !decided && !owed && p->running().native && !cs.timed_pattern;
      if (pinned || owed || measured || frozen) {
        ++cs.calls;
        if (measured && !add_time.clocked) start_clock();
        const int rc = run_counted();
        trace_call(cs, p, "native", false, 0, entry, seconds);
        ++p->record.calls;
        p->record.time_native_s += seconds;
        if (!decided) p->record.trial_s += seconds;
        if (owed) {
          p->trial.unmeasured_native_call();
          cs.timed_pattern = nullptr;
        } else if (measured) {
          time_call(cs, *p, seconds, 0);  // no agreement to discount: native's own time
        }
        return rc;
      }
    }
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const auto n = static_cast<std::size_t>(cs.size);
    // While learning, the ranks agree only at probe calls, whose indices every rank computes
    // from the call counter and agreed results alone; between probes a call runs natively with
    // no collective, so counts that never repeat cost no agreement per call. What such a call
    // owes the learner is its counts' hash in the history.
    auto learning_native = [&]() {
      close_unlearned_streak(cs);
      const int rc = run_counted();
      trace_call(cs, nullptr, "native", false, 0, entry, seconds);
      note_streak_call(cs, seconds, add_time.clocked);
      return rc;
    };
    const bool between_probes = cs.learner.learning() && cs.calls + 1 < cs.next_probe;
    if (between_probes && !paused && x.describable &&
        cs.repeat.matches(in_place, sendcounts, sendtype, recvcounts, recvtype, n)) {
      ++cs.calls;
      cs.learner.repeat(cs.repeat.hash);
      return learning_native();
    }
    cs.repeat.valid = false;
    if (rejected_by_mpi(cs.size, in_place, sendcounts, sendtype, recvcounts, recvtype)) {
      ++cs.unlearned_calls;
      return x.native(x);
    }
    Side send, recv;
    recv.base = static_cast<char*>(recvbuf);
    recv.counts = recvcounts;
    recv.displs = rdispls;
    recv.type = recvtype;
    if (in_place) {
      send = recv;  // in place: outgoing data sits in the receive buffer, same counts and type
    } else {
      send.base = static_cast<char*>(const_cast<void*>(sendbuf));
      send.counts = sendcounts;
      send.displs = sdispls;
      send.type = sendtype;
    }
    ++cs.calls;
    // The types' sizes give the per-peer bytes; whether the call can run a schedule (its
    // vote) is asked only where the ranks agree, below.
    const bool described = x.describable && !paused && describe_type(send) && describe_type(recv);
    cs.send_bytes.resize(n);
    cs.recv_bytes.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      cs.send_bytes[j] = static_cast<Bytes>(std::max(send.counts[j], 0)) *
                         static_cast<Bytes>(std::max(send.type_size, 0));
      cs.recv_bytes[j] = static_cast<Bytes>(std::max(recv.counts[j], 0)) *
                         static_cast<Bytes>(std::max(recv.type_size, 0));
    }
    // Which cached pattern, if any, this call's counts are on this rank: the hash (computed once,
    // the learner reuses it) skips the others, the exact comparison decides. Local preparation
    // for it happens before the agreement, so a failure here is a vote, never a rank backing out
    // of a schedule the others run.
    const std::uint64_t counts_hash = learn::Learner::counts_hash(cs.send_bytes, cs.recv_bytes);
    if (between_probes) {
      cs.learner.vote(cs.send_bytes, cs.recv_bytes, counts_hash, false);
      if (described && send.predefined && recv.predefined)
        cs.repeat.set(in_place, sendcounts, sendtype, recvcounts, recvtype, n, counts_hash);
      return learning_native();
    }
    if (!add_time.clocked) start_clock();  // the paths below agree, learn or run a plan
    // GPU buffers (a CUDA- or ROCm-aware MPI): the executor copies bytes on the CPU, so such
    // a call votes "cannot run" and every rank runs it natively.
    const bool device = (!in_place && core::is_device_memory(sendbuf)) ||
                        core::is_device_memory(recvbuf);
    if (device) {
      ++s.device_calls;
      core::log_info_once("device-memory",
                          std::string(x.name) + " on GPU memory runs natively (one notice only)");
    }
    bool can_run = !paused && !device && described;
    int match = cached_pattern(cs, counts_hash);
    if (can_run && match >= 0)
      can_run = prepare(cs, *cs.patterns[static_cast<std::size_t>(match)], in_place, send, recv);
    if (!can_run) match = -1;
    const double t0 = now();
    if (!can_run && !paused && cs.learner.optimised()) ++s.fallbacks;
    // The vote: the learning streak, or "my counts are the learned ones and I can run".
    std::int64_t vote = cs.learner.vote(cs.send_bytes, cs.recv_bytes, counts_hash, can_run);
    if (paused) vote = 0;
    close_unlearned_streak(cs);
    std::int64_t agreed = 0;
    int hit = -1;
    if (cs.current) cs.current->last_call = cs.calls;  // in force up to this call at least
    int rc = agree(cs, comm, vote, match, agreed, hit);
    const bool was_learning = cs.learner.learning();
    if (was_learning && rc == MPI_SUCCESS) cs.probes_spent_s += cs.agree_cost_s;  // agreed
    // A new pattern every rank has repeated, but the job cannot pay for learning it yet: stay
    // native and probe again once it can (every rank computes the same from agreed values).
    const bool repeated = agreed >= s.cfg.learn_calls && agreed < learn::Learner::kMatch;
    const bool deferred = repeated && hit < 0 && !learning_affordable(cs);
    if (deferred) agreed = s.cfg.learn_calls - 1;
    learn::Action action = cs.learner.decide(agreed);
    if (cs.learner.learning()) cs.current = nullptr;
    // The next probe: the very next call when counts just left a pattern (it may be a cached
    // one), then ever further apart while nothing repeats, at most kMaxProbeGap calls; under
    // auto, never sooner than the budget pays for the probe (or, deferred, for the learning).
    cs.probe_gap = !was_learning ? 1 : std::min<std::uint64_t>(2 * cs.probe_gap, kMaxProbeGap);
    cs.next_probe = cs.calls + std::max(cs.probe_gap, budget_gap(cs, deferred));
    // The first learning sets up the communicator's private side (all ranks learn together).
    const double learn_t0 = now();
    if (hit < 0 && action == learn::Action::learn_and_run && !make_private(cs, comm))
      action = learn::Action::native;  // and native_only from now on, on every rank alike
    if (hit >= 0) {
      action = adopt_cached(cs, *cs.patterns[static_cast<std::size_t>(hit)]);
    } else if (action == learn::Action::learn_and_run) {
      action = learn_here(cs, can_run, in_place, send, recv, learn_t0);
    }
    Pattern* p = cs.current;
    if (p && (action == learn::Action::run_plan ||
              (action == learn::Action::native && cs.learner.pinned_native())))
      return run_pattern(cs, *p, x, send, recv, t0);
    double dt = 0;
    rc = run_native_from(x, t0, dt, add_time.end);
    trace_call(cs, cs.learner.learning() ? nullptr : p, "native", false, 0, t0, dt);
    if (cs.learner.learning()) {
      note_streak_call(cs, dt, true);
    } else if (p) {  // learned, but this call could not run a plan on every rank
      ++p->record.calls;
      p->record.time_native_s += dt;
    } else {
      ++cs.unlearned_calls;
    }
    return rc;
  } catch (...) {
    // Local steps that can throw (allocation) sit before the agreement or inside the planning
    // that the second agreement covers; reaching here means memory ran out elsewhere.
    core::log_warn_once("exception", std::string("internal error in ") + x.name +
                                          "; this call runs natively");
    return x.native(x);
  }
}

}  // namespace

int exchange(const Exchange& x) {
  if (int rc = MPI_SUCCESS; run_lean(x, rc)) return rc;
  return exchange_general(x);
}

bool pass_through() {
  ensure_setup();
  Global& s = g();
  if (s.active) return false;
  if (s.all_native) s.native_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
              void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
              MPI_Comm comm) {
  return exchange({sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, Family::alltoallv, "MPI_Alltoallv", native_alltoallv});
}

}  // namespace commsched::intercept
