// Isend/Irecv bursts over PMPI: tracking which requests are outstanding, learning each burst's
// signature (src/burst), deferring a learned burst's sends behind generalized requests and
// releasing them in shift order. Rules that keep the application safe:
//  * a deferred send is never held across any MPI call the library sees: every wrapper other
//    than a matching post releases all deferred sends first (p2p_flush);
//  * receives are never deferred, and sends to one peer keep their order (burst::release_order);
//  * anything unusual in a burst (wildcard receive, persistent, synchronous, ready or buffered
//    send, cancel, request free) makes that burst native and resets learning;
//  * requests the library did not create are passed to MPI unchanged;
//  * a held post keeps its own duplicate of a derived datatype (the application may free its
//    handle right after the call, as MPI allows), freed once the real operation is posted;
//  * arguments MPI may reject are never held nor queried: they go to MPI as passed, so the
//    application gets MPI's own error through its own error handler.
// Level local holds only bursts that can gain (burst::hold_can_help) and that a trial against
// native finds faster; every other burst passes straight to MPI at the cost of a counter
// ("native stretches" below).
// Level collective adds a vote per burst among MPI_COMM_WORLD's ranks (see "Level collective"
// below).
#include "intercept/p2p.hpp"

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "burst/agree.hpp"
#include "burst/burst.hpp"
#include "core/log.hpp"
#include "core/plan.hpp"
#include "intercept/intercept.hpp"
#include "intercept/nonblocking.hpp"
#include "intercept/pcontrol.hpp"
#include "settings/settings.hpp"

namespace commsched::intercept {
namespace {

// A deferred post (a send; at level collective also a receive). The application holds `greq`, a
// generalized request; once released, `real` is the request MPI runs, and completion calls act
// on it in the application's place. When the burst ran as a collective exchange, the data has
// moved already: `greq` is complete and `real` is `greq` itself, whose status query_fn fills.
struct Shadow {
  MPI_Request greq = MPI_REQUEST_NULL;
  MPI_Request real = MPI_REQUEST_NULL;
  int release_error = MPI_SUCCESS;
  bool by_collective = false;  // completed by the collective exchange (MPI frees greq)
  std::size_t post_index = 0;  // position in the burst's signature
  void* rbuf = nullptr;        // receives
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool owns_type = false;      // `type` is the library's duplicate (freed once posted)
  int dest = 0;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  burst::Post post;
};

struct CommInfo {
  std::uint32_t id = 0;
  int rank = 0;
  int size = 1;
};

struct PatternStats {
  std::uint64_t hash = 0;
  std::int64_t posts = 0;
  std::int64_t bytes = 0;
  std::int64_t seen = 0;
  std::int64_t substituted = 0;
  std::int64_t fallbacks = 0;
  std::int64_t collective = 0;
};

constexpr std::size_t kMaxPatterns = 16;      // report slots per rank; later ones fold into the last
constexpr std::size_t kMaxBurstPosts = 4096;  // a longer burst is not learned (bounded memory)

// Native stretches (level local, COMMSCHED_BURST_HOLD=auto): where holding cannot help (or lost
// its trial), the next posts pass straight to MPI with nothing tracked, then learning starts
// afresh. The stretch doubles each time up to the cap, so a burst that never pays costs a
// counter per post, and a pattern that changes is seen again within the cap.
constexpr std::uint64_t kFirstNativeStretch = 256;       // posts
constexpr std::uint64_t kMaxNativeStretch = 1u << 20;    // posts
constexpr int kUnlearnedBeforeNative = 16;  // bursts in a row that repeat nothing
// Calls into a burst that can no longer be learned (a wildcard receive, a cancel, ...) before a
// native stretch: a polling loop over receives that are always reposted (HPCC's RandomAccess
// polls MPI_Testany a million times in one such burst) then pays a counter, not the watch.
constexpr int kBrokenCallsBeforeNative = 256;
constexpr int kHoldTrialSamples = 8;        // held and native bursts each, alternating
constexpr int kHoldTrialRecheck = 256;      // held bursts between re-measurements of native
constexpr double kHoldMargin = 0.03;        // held's fastest burst must beat native's by this

// --- level collective -------------------------------------------------------------------------
// Bursts on MPI_COMM_WORLD, or on one communicator that a wrapped constructor called by every
// rank of MPI_COMM_WORLD (or of a communicator congruent to it) made — a duplicate, each rank's
// part of a split, a Cartesian or graph communicator, ...: State::numbered — may run as one
// collective exchange over MPI_COMM_WORLD's ranks (the Alltoallv path, so every strategy and
// `auto` apply) once every rank votes for it. Where the ranks' parts differ (a split), each
// rank's burst is on its own part, and the exchange numbers every peer by its rank in
// MPI_COMM_WORLD (world_peer).
// The rules that keep a job safe:
//  * Each rank casts one vote (a nonblocking MPI_Iallreduce on a private duplicate of
//    MPI_COMM_WORLD) per burst, at the first MPI call it makes after its previous burst ended,
//    before that call can block.
//  * "follow" promises the calls before the next burst (the cycle: blocking collectives only)
//    and the burst itself repeat the learned ones; "yes" follows and asks for the exchange. A
//    rank that broke a promise casts "quit" first (see leave_collective), so after a vote in
//    which every rank promised to follow, every rank casts its next vote before it can block:
//    only then may a rank wait for that next vote's result, and only a rank that knows its
//    previous vote's result was all-follow votes yes (it waits at the burst's last post).
//  * The sum of the votes checks that every rank said yes, that the ranks' cycles and counts of
//    collective calls are equal, that no message is in flight between any pair (so the k-th
//    message of each (source, destination, tag) pairs the same way), and that every send of the
//    burst has a receive of the same size (burst/agree.hpp), all on the same communicator (its
//    serial is in the equality check). Then each rank packs its sends and
//    commits (a second reduction: a rank whose packing failed, or which broke its promise in
//    between, commits "no" and every rank releases the burst natively).
//  * Quit (a broken promise, any call that may wait for one rank in particular, a wildcard, a
//    cancel, 64 votes without a collective burst, Finalize) ends the level for the run on every
//    rank. At finalize every rank casts as many votes as the most active one, so every vote
//    completes.
struct Promise {
  burst::Vote in{};
  burst::Vote out{};
  MPI_Request req = MPI_REQUEST_NULL;
  bool prev_collective = false;  // the burst whose time this vote carries ran collectively
};
struct Word {  // one word reduced in the background (a failed commit)
  std::uint64_t in = 0;
  std::uint64_t out = 0;
  MPI_Request req = MPI_REQUEST_NULL;
};

constexpr std::uint64_t kMaxWaitingVotes = 64;  // votes without a go before a rank quits

struct Collective {
  bool on = false;                   // level collective and its communicators exist
  MPI_Comm votes = MPI_COMM_NULL;    // one vote per burst
  MPI_Comm commits = MPI_COMM_NULL;  // one commit per burst whose promise passed
  MPI_Comm exchange = MPI_COMM_NULL; // the collective exchanges (Alltoallv path)
  int rank = 0;
  int size = 1;
  bool stopped = false;              // cast or read a quit: no more votes
  // The cycle: calls between the previous burst and the next.
  std::vector<std::uint64_t> cycle_now;
  std::unique_ptr<burst::CycleLearner> cycles;
  std::uint64_t collective_calls = 0;  // in-cycle calls so far
  std::uint64_t instances = 0;         // bursts ended so far
  std::uint64_t calls_at_end = 0;      // collective_calls when the last burst ended
  // Running match-key sums of this rank's posts, one per communicator that may hold a
  // collective burst (by its serial, see State::numbered).
  boost::container::flat_map<std::uint32_t, std::uint64_t> align;
  std::uint32_t promise_serial = 0;    // the communicator of the burst promised (can_promise)
  // Votes.
  std::deque<std::unique_ptr<Promise>> promises;  // cast, result not read yet
  bool last_all_follow = false;                   // the last result read was all-follow
  std::vector<std::unique_ptr<Word>> loose;       // failed commits completing in the background
  std::uint64_t cast = 0;                         // promises cast
  std::uint64_t since_go = 0;                     // promises cast since the last go
  bool cast_for_next = false;  // the vote on the burst in progress (or next) is cast
  bool promised = false;       // ... it was follow or yes, and the burst has not ended
  bool voted_yes = false;      // ... it was yes, and the burst has not been settled
  std::size_t cycle_pos = 0;   // cycle calls followed since the promise
  // Collective or local for agreed bursts (COMMSCHED_TRIAL): the time of each rank's previous
  // burst travels with its next vote.
  bool use_trial = true;
  burst::ModeTrial trial{4, 256};
  std::uint64_t last_elapsed_us = 0;
  bool last_collective = false;
  // Reused buffers of the exchange.
  std::vector<char> sendbuf, recvbuf;
};

// Posts left in the current native stretch. Outside State, constant-initialised, because every
// entry point reads it first: no initialisation guard and no call on the path that must cost
// nothing.
std::uint64_t native_posts_left = 0;

struct State {
  bool checked = false;
  bool enabled = false;
  settings::BurstLevel level = settings::BurstLevel::off;
  std::uint32_t next_comm_id = 1;
  std::uint32_t world_id = 0;  // MPI_COMM_WORLD's number (level collective), 0 before p2p_init
  // Level collective: the communicators a burst may run collectively on, MPI_COMM_WORLD and those
  // a wrapped constructor made in a call of every rank (p2p_new_comm), by number (comm_info):
  // their serial, MPI_COMM_WORLD 0, then 1, 2, ... in the order they were made, which every rank
  // sees alike; and, where not congruent to MPI_COMM_WORLD (each rank's part of a split, ...),
  // their ranks as MPI_COMM_WORLD's (empty: the same numbering).
  struct Numbered {
    std::uint32_t serial = 0;
    std::vector<int> world_ranks;
  };
  boost::container::flat_map<std::uint32_t, Numbered> numbered;
  std::uint32_t next_serial = 1;
  boost::container::flat_map<MPI_Comm, CommInfo> comms;

  std::unordered_map<MPI_Request, std::unique_ptr<Shadow>> shadows;  // by greq
  std::vector<Shadow*> deferred;                                     // not yet released
  // Tracked requests and how many of them share the handle: MPICH hands out one handle for
  // every send that completed at once, so a handle can stand for several requests.
  std::unordered_map<MPI_Request, int> outstanding;
  std::unordered_map<MPI_Request, burst::Post> persistent;           // made by *_init

  burst::Signature current;  // posts of the burst in progress
  bool broken = false;       // the burst in progress may not be learned or substituted
  int broken_calls = 0;      // ... and the calls made in it since
  bool substituting = false; // the burst in progress follows `expected`
  bool fell_back = false;    // ... and met a difference or a flush before its last post
  std::size_t position = 0;  // posts of the burst in progress matched so far
  std::unique_ptr<burst::Learner> learner;
  std::vector<PatternStats> patterns;
  int tag_ub = 32767;  // MPI_TAG_UB (32767 is the least MPI guarantees)
  MPI_Comm ask = MPI_COMM_NULL;  // the library's MPI_COMM_SELF (errors return): accepted_type

  // Level local's choice per learned signature (COMMSCHED_BURST_HOLD).
  bool always_hold = false;          // =always: every learned burst is held (tests)
  bool hold = false;                 // the burst in progress holds its sends
  std::uint64_t decided_hash = 0;    // the learned signature hold_allowed is about (0: none)
  bool hold_allowed = false;         // burst::hold_can_help(that signature)
  burst::ModeTrial hold_trial{kHoldTrialSamples, kHoldTrialRecheck, kHoldMargin, true};  // held
  int unlearned = 0;                         // bursts in a row with nothing learned
  std::uint64_t native_stretch = kFirstNativeStretch;  // the next stretch's length
  std::uint64_t stretched_posts = 0;  // the lengths of the stretches started (the report)

  bool collective_pending = false;  // the burst in progress defers receives too (voted yes)
  bool collective_done = false;     // ... and ran as a collective exchange
  bool executing = false;           // inside the exchange: the library's own calls
  double burst_start = 0;           // MPI_Wtime at the burst's first post
  Collective col;
};

State& st() {
  static State* s = new State;  // never destroyed: the application may call MPI at exit
  return *s;
}

// True when bursts are handled at all (library active, a level other than off).
bool enabled() {
  State& s = st();
  if (!s.checked) {
    const settings::Settings* cfg = active_settings();
    if (!cfg) return false;  // before MPI_Init or inactive: nothing to do, check again later
    s.checked = true;
    s.level = cfg->bursts;
    // Level collective needs p2p_init's communicators (made at MPI_Init); without them, local.
    if (s.level == settings::BurstLevel::collective && !s.col.on) {
      int rank = 0;
      PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0)
        core::log_warn("COMMSCHED_BURSTS=collective: the library did not see MPI_Init, so it has "
                       "no communicators of its own; bursts run at level local");
      s.level = settings::BurstLevel::local;
    }
    s.enabled = cfg->bursts != settings::BurstLevel::off && cfg->strategy != "native";
    s.always_hold = cfg->burst_hold_always;
    int* ub = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found) == MPI_SUCCESS && found && ub)
      s.tag_ub = *ub;
    s.learner = std::make_unique<burst::Learner>(cfg->learn_calls);
    s.col.cycles = std::make_unique<burst::CycleLearner>(cfg->learn_calls);
  }
  return s.enabled && library_active();
}

CommInfo comm_info(MPI_Comm comm) {
  State& s = st();
  auto it = s.comms.find(comm);
  if (it != s.comms.end()) return it->second;
  CommInfo c;
  c.id = s.next_comm_id++;
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) PMPI_Comm_remote_size(comm, &c.size);  // peers are ranks of the remote group
  s.comms.emplace(comm, c);
  return c;
}

// Level collective: `peer` of a communicator as a rank of MPI_COMM_WORLD, the collective
// exchange's numbering (-1 if it has none; a wildcard or MPI_PROC_NULL unchanged), from its
// ranks' map (State::Numbered) or its number `comm`.
int world_peer(const std::vector<int>& world_ranks, int peer) {
  if (world_ranks.empty() || peer < 0) return peer;  // congruent: the same numbering
  return static_cast<std::size_t>(peer) < world_ranks.size() ? world_ranks[peer] : -1;
}
int world_peer(std::uint32_t comm, int peer) {
  const State& s = st();
  const auto it = s.numbered.find(comm);
  return it == s.numbered.end() ? peer : world_peer(it->second.world_ranks, peer);
}

// The posts of a burst with every peer numbered by world_peer.
burst::Signature in_world(const burst::Signature& posts) {
  burst::Signature out = posts;
  for (burst::Post& p : out) p.peer = world_peer(p.comm, p.peer);
  return out;
}

burst::Post make_post(burst::Kind kind, int count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm) {
  burst::Post p;
  p.kind = kind;
  const CommInfo c = comm_info(comm);
  p.comm = c.id;
  p.peer = peer;
  p.tag = tag;
  int size = 0;
  // MPI_DATATYPE_NULL only reaches here from a *_init MPI accepted (count 0): never ask MPI
  // about it, whose error handler for datatypes may be fatal.
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) size = 0;
  p.bytes = static_cast<std::uint64_t>(count < 0 ? 0 : count) * static_cast<std::uint64_t>(size);
  p.distance = c.size > 0 && peer >= 0 ? core::send_order(c.rank, peer, c.size) : 0;
  return p;
}

// Whether MPI accepts a post's arguments, checked without asking MPI about them: a negative
// count, MPI_DATATYPE_NULL, a rank or tag out of range (wildcards allowed for receives) go to
// MPI as passed, so the application gets MPI's own error code through its own error handler.
bool valid_post(int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, bool recv) {
  if (count < 0 || type == MPI_DATATYPE_NULL) return false;
  const int size = comm_info(comm).size;
  const bool peer_ok = peer >= 0 ? peer < size : recv && peer == MPI_ANY_SOURCE;
  const bool tag_ok = tag >= 0 ? tag <= st().tag_ub : recv && tag == MPI_ANY_TAG;
  return peer_ok && tag_ok;
}

// Whether MPI accepts a derived `type` for a post now (it must be committed, which no MPI call
// reports): asked with a persistent request to MPI_PROC_NULL on the library's own copy of
// MPI_COMM_SELF, whose errors return, so the application's error handler never hears of it.
bool accepted_type(MPI_Datatype type, bool recv) {
  State& s = st();
  if (s.ask == MPI_COMM_NULL) {
    if (PMPI_Comm_dup(MPI_COMM_SELF, &s.ask) != MPI_SUCCESS) return false;
    PMPI_Comm_set_errhandler(s.ask, MPI_ERRORS_RETURN);
  }
  char unused = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = recv ? PMPI_Recv_init(&unused, 1, type, MPI_PROC_NULL, 0, s.ask, &r)
                      : PMPI_Send_init(&unused, 1, type, MPI_PROC_NULL, 0, s.ask, &r);
  if (r != MPI_REQUEST_NULL) PMPI_Request_free(&r);
  return rc == MPI_SUCCESS;
}

// A held post's datatype: a derived type is duplicated, since the application may free its
// handle as soon as the call returns; MPI_DATATYPE_NULL if MPI would reject the type or could
// not duplicate it (then the post is not held, and MPI's own call reports any error).
MPI_Datatype held_type(MPI_Datatype type, bool recv, bool& owned) {
  owned = false;
  int ints = 0, addrs = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  if (PMPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) != MPI_SUCCESS)
    return MPI_DATATYPE_NULL;
  if (combiner == MPI_COMBINER_NAMED) return type;  // predefined: never freed
  if (!accepted_type(type, recv)) return MPI_DATATYPE_NULL;
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (PMPI_Type_dup(type, &dup) != MPI_SUCCESS) return MPI_DATATYPE_NULL;
  owned = true;
  return dup;
}

// The real operation is posted (or the data moved): a pending operation keeps the type alive,
// so the duplicate can go.
void drop_type(Shadow& sh) {
  if (sh.owns_type) PMPI_Type_free(&sh.type);
  sh.owns_type = false;
}

PatternStats& stats_for(std::uint64_t hash) {
  State& s = st();
  for (PatternStats& p : s.patterns)
    if (p.hash == hash) return p;
  if (s.patterns.size() < kMaxPatterns) {
    s.patterns.push_back(PatternStats{hash});
    return s.patterns.back();
  }
  return s.patterns.back();  // folded: counts still add up
}

// --- generalized requests -------------------------------------------------------------------
// Completion calls never hand a shadow's greq to MPI (they act on `real`), so these are reached
// only by calls the library does not wrap; they keep such calls well-defined.
int query_fn(void* extra, MPI_Status* status) {
  auto* sh = static_cast<Shadow*>(extra);
  const bool received = sh && sh->by_collective && sh->post.kind == burst::Kind::recv;
  // A receive the collective exchange filled reports what the native receive would have.
  status->MPI_SOURCE = received ? sh->dest : MPI_ANY_SOURCE;
  status->MPI_TAG = received ? sh->tag : MPI_ANY_TAG;
  status->MPI_ERROR = sh ? sh->release_error : MPI_SUCCESS;
  PMPI_Status_set_elements(status, MPI_BYTE, received ? static_cast<int>(sh->post.bytes) : 0);
  PMPI_Status_set_cancelled(status, 0);
  return MPI_SUCCESS;
}
int free_fn(void*) { return MPI_SUCCESS; }  // the library owns the Shadow
int cancel_fn(void*, int) { return MPI_SUCCESS; }

// Releases every deferred post natively: receives first (in post order), then sends in shift
// order.
void release_deferred() {
  State& s = st();
  if (s.deferred.empty()) return;
  std::vector<Shadow*> sends;
  std::vector<burst::Post> posts;
  for (Shadow* sh : s.deferred) {
    if (sh->post.kind == burst::Kind::recv) {
      sh->release_error =
          PMPI_Irecv(sh->rbuf, sh->count, sh->type, sh->dest, sh->tag, sh->comm, &sh->real);
      if (sh->release_error != MPI_SUCCESS) sh->real = MPI_REQUEST_NULL;
      drop_type(*sh);
      continue;
    }
    sends.push_back(sh);
    posts.push_back(sh->post);
  }
  for (std::size_t i : burst::release_order(posts)) {
    Shadow& sh = *sends[i];
    sh.release_error = PMPI_Isend(sh.buf, sh.count, sh.type, sh.dest, sh.tag, sh.comm, &sh.real);
    if (sh.release_error != MPI_SUCCESS) sh.real = MPI_REQUEST_NULL;
    drop_type(sh);
  }
  s.deferred.clear();
}

// --- level collective: votes ------------------------------------------------------------------

bool collective_active() {
  const Collective& c = st().col;
  return c.on && !c.stopped;
}

// Reads one result (the oldest outstanding vote).
burst::Verdict take_result(Promise& p) {
  Collective& c = st().col;
  const burst::Verdict v = burst::verdict(p.out, c.size);
  if (v == burst::Verdict::quit) c.stopped = true;
  if (v == burst::Verdict::go) c.since_go = 0;
  const bool all_follow = burst::all_follow(p.out, c.size);
  // Every rank ran the learned burst this vote reports on (the previous vote was all-follow and
  // nobody quit since): its mean time is a sample of the way it ran.
  if (c.use_trial && c.last_all_follow && all_follow)
    c.trial.sample(p.prev_collective,
                   static_cast<double>(p.out[burst::elapsed_us]) * 1e-6 / c.size);
  c.last_all_follow = all_follow;
  return v;
}

// Reads every result that has arrived, oldest first; a quit stops the votes.
void read_results() {
  Collective& c = st().col;
  while (!c.promises.empty()) {
    Promise& p = *c.promises.front();
    int done = 0;
    PMPI_Test(&p.req, &done, MPI_STATUS_IGNORE);
    if (!done) return;
    take_result(p);
    c.promises.pop_front();
  }
}

enum class Ballot { no, follow, yes, quit };

// Casts the vote on the next burst (the caller checked what a follow or yes promises).
void cast_vote(Ballot b) {
  State& s = st();
  Collective& c = s.col;
  auto p = std::make_unique<Promise>();
  p->in[burst::elapsed_us] = c.last_elapsed_us;
  p->prev_collective = c.last_collective;
  if (b == Ballot::quit) p->in[burst::quit] = 1;
  if (b == Ballot::follow || b == Ballot::yes) p->in[burst::follow] = 1;
  if (b == Ballot::yes) {
    const burst::Signature& expected = *s.learner->expected();
    p->in[burst::yes] = 1;
    p->in[burst::same] = burst::equal_share(
        burst::key(c.cycles->hash(), c.instances, c.calls_at_end, c.promise_serial), c.rank,
        c.size);
    p->in[burst::aligned] = c.align[c.promise_serial];
    p->in[burst::content] = burst::content_share(in_world(expected), c.rank);
  }
  c.cast_for_next = true;
  c.promised = b == Ballot::follow || b == Ballot::yes;
  c.voted_yes = b == Ballot::yes;
  c.cycle_pos = 0;
  if (b == Ballot::quit) c.stopped = true;
  if (PMPI_Iallreduce(p->in.data(), p->out.data(), static_cast<int>(burst::kFields),
                      MPI_UINT64_T, MPI_SUM, c.votes, &p->req) != MPI_SUCCESS) {
    c.stopped = true;  // errors are fatal by default; with a handler set, stop voting at least
    c.promised = c.voted_yes = false;
    return;
  }
  c.promises.push_back(std::move(p));
  ++c.cast;
  ++c.since_go;
}

// Waits for the only vote outstanding (a yes is cast with no older result unread, and a rank
// waits for its previous vote only when that one is all it has outstanding); returns its result.
burst::Verdict await_only() {
  Collective& c = st().col;
  if (c.promises.size() != 1) return burst::Verdict::native;
  Promise& p = *c.promises.front();
  PMPI_Wait(&p.req, MPI_STATUS_IGNORE);
  const burst::Verdict v = take_result(p);
  c.promises.pop_front();
  return v;
}

// Contributes this rank's verdict on a burst whose vote passed. ok: wait for every rank's and
// return whether all can run it; !ok: contribute in the background (the others release it).
bool commit(bool ok) {
  Collective& c = st().col;
  auto w = std::make_unique<Word>();
  w->in = ok ? 1 : 0;
  if (PMPI_Iallreduce(&w->in, &w->out, 1, MPI_UINT64_T, MPI_SUM, c.commits, &w->req) !=
      MPI_SUCCESS)
    return false;
  if (!ok) {
    c.loose.push_back(std::move(w));
    return false;
  }
  PMPI_Wait(&w->req, MPI_STATUS_IGNORE);
  return w->out == static_cast<std::uint64_t>(c.size);
}

// This rank will not keep its promise (or may not make one again): settle the burst it voted
// yes on and cast quit, before the call that broke it can block.
void leave_collective() {
  Collective& c = st().col;
  if (!collective_active()) return;
  if (c.voted_yes) {
    c.voted_yes = false;
    if (await_only() == burst::Verdict::go) commit(false);
  }
  c.promised = false;
  if (!c.stopped) cast_vote(Ballot::quit);
  c.stopped = true;
}

// Whether this rank can promise the learned burst now, `first` being the first call after the
// previous burst (an in-cycle call's id, or 0 for the burst's first post `post`).
bool can_promise(std::uint64_t first, const burst::Post* post) {
  State& s = st();
  Collective& c = s.col;
  const burst::Signature* expected = s.learner->expected();
  const std::vector<std::uint64_t>* cycle = c.cycles->expected();
  if (!expected || !cycle || expected->empty()) return false;
  // One communicator with a serial: its ranks are ranks of the exchange (world_peer).
  const std::uint32_t comm = expected->front().comm;
  const auto numbered = s.numbered.find(comm);
  if (numbered == s.numbered.end()) return false;
  for (const burst::Post& p : *expected) {
    const int peer = world_peer(p.comm, p.peer);
    if (p.comm != comm || peer < 0 || peer >= c.size) return false;
  }
  c.promise_serial = numbered->second.serial;
  if (post) return cycle->empty() && (*expected)[0] == *post;
  return !cycle->empty() && (*cycle)[0] == first;
}

// The first MPI call after a burst ended (an intervening call `call_id`, or the next burst's
// first post): reads what has arrived and casts the vote on the next burst.
void vote_for_next(std::uint64_t call_id, const burst::Post* post) {
  Collective& c = st().col;
  if (!collective_active() || c.cast_for_next) return;
  read_results();
  if (c.stopped) return;
  // Quit when nothing can come of voting: a message that cannot be counted, 64 votes without a
  // collective burst, or a trial that found the collective exchange slower than level local
  // (the votes themselves cost a reduction per burst; without them local runs at full speed).
  if (c.since_go >= kMaxWaitingVotes ||
      (c.use_trial && c.trial.decided() && !c.trial.collective())) {
    cast_vote(Ballot::quit);
    return;
  }
  const bool promise = can_promise(call_id, post);
  // The previous vote's result is needed for a yes. Waiting for it is safe when the result
  // before it was all-follow: every rank then casts that vote before it can block.
  // (Not needed while the trial keeps agreed bursts local: then this rank votes follow anyway.)
  const bool want_yes = !c.use_trial || c.trial.collective();
  if (promise && want_yes && c.promises.size() == 1 && c.last_all_follow) {
    await_only();
    if (c.stopped) return;
  }
  // Every rank that can vote yes has read the same results, so the trial says the same to all.
  const bool yes = promise && c.promises.empty() && c.last_all_follow && want_yes &&
                   (!c.use_trial || c.trial.collective());
  cast_vote(yes ? Ballot::yes : promise ? Ballot::follow : Ballot::no);
  if (c.promised && !post) c.cycle_pos = 1;
}

// Whether the learned burst that starts now holds its sends: always (COMMSCHED_BURST_HOLD=
// always), else only if burst::hold_can_help allows it and then as the trial against native
// says (it alternates while measuring).
bool decide_hold() {
  State& s = st();
  if (s.always_hold) return true;
  const std::uint64_t h = s.learner->last_hash();
  if (h != s.decided_hash) {
    s.decided_hash = h;
    s.hold_allowed = burst::hold_can_help(*s.learner->expected());
    s.hold_trial = burst::ModeTrial{kHoldTrialSamples, kHoldTrialRecheck, kHoldMargin, true};
  }
  return s.hold_allowed && s.hold_trial.collective();
}

// Level local, COMMSCHED_BURST_HOLD=auto, nothing held or outstanding in a shadow: the next posts
// pass straight to MPI untracked (see kFirstNativeStretch); what is tracked now is forgotten,
// as the completion calls of the stretch will not report it.
void start_native_stretch() {
  State& s = st();
  if (s.always_hold || collective_active() || !s.shadows.empty() || !s.deferred.empty()) return;
  native_posts_left = s.native_stretch;
  s.stretched_posts += s.native_stretch;
  s.native_stretch = std::min(s.native_stretch * 2, kMaxNativeStretch);
  s.outstanding.clear();
  s.current.clear();
  s.broken = s.substituting = s.fell_back = s.hold = false;
  s.broken_calls = 0;
  s.position = 0;
  s.unlearned = 0;
}

// A burst ran as learned (`held` or not) in `seconds`: the trial's sample, and where holding
// cannot help or lost, a native stretch (after one, a lost trial is run again).
void judge_hold(bool complete, double seconds) {
  State& s = st();
  if (s.always_hold || collective_active()) return;
  if (!s.learner->expected()) {
    if (++s.unlearned >= kUnlearnedBeforeNative) start_native_stretch();
    return;
  }
  s.unlearned = 0;
  if (s.learner->last_hash() != s.decided_hash) return;  // decided when the next burst starts
  if (!s.hold_allowed) {
    start_native_stretch();
    return;
  }
  if (complete) s.hold_trial.sample(s.hold, seconds);
  if (s.hold_trial.decided() && !s.hold_trial.winner_collective()) {
    s.decided_hash = 0;  // measure again after the stretch
    start_native_stretch();
  }
}

// A burst ends when none of its requests is outstanding any more.
void end_burst_if_idle() {
  State& s = st();
  if (!s.outstanding.empty() || s.current.empty()) return;
  const bool clean = !s.broken && s.current.size() <= kMaxBurstPosts;
  s.learner->finish(s.current, clean);  // hashes the burst once; the statistics reuse it
  if (clean) {
    PatternStats& ps = stats_for(s.learner->last_hash());
    ++ps.seen;
    ps.posts = std::max<std::int64_t>(ps.posts, static_cast<std::int64_t>(s.current.size()));
    std::int64_t bytes = 0;
    for (const burst::Post& p : s.current)
      if (p.kind == burst::Kind::send) bytes += static_cast<std::int64_t>(p.bytes);
    ps.bytes = bytes;
    if (s.substituting && s.position == s.current.size() && !s.fell_back &&
        (s.hold || s.collective_done))
      ++ps.substituted;
    if (s.substituting && s.fell_back) ++ps.fallbacks;
    if (s.collective_done) ++ps.collective;
  }
  const bool complete = clean && s.substituting && s.position == s.current.size() && !s.fell_back &&
                        !s.collective_done;
  s.current.clear();
  s.broken = false;
  s.broken_calls = 0;
  s.substituting = false;
  s.fell_back = false;
  s.position = 0;
  judge_hold(complete, PMPI_Wtime() - s.burst_start);
  s.hold = false;
  Collective& c = s.col;
  c.last_collective = s.collective_done;
  s.collective_pending = false;
  s.collective_done = false;
  if (!collective_active()) return;
  c.last_elapsed_us = static_cast<std::uint64_t>(std::max(0.0, PMPI_Wtime() - s.burst_start) * 1e6);
  ++c.instances;
  c.calls_at_end = c.collective_calls;
  c.cast_for_next = false;
  if (c.voted_yes) leave_collective();  // voted yes, yet the burst ended unsettled
  c.promised = false;                   // a follower kept its promise
}

// Something the learned burst did not contain: release what is deferred, run the rest native.
void abandon_substitution() {
  State& s = st();
  if (s.collective_pending) {
    // Voted yes and deferred receives too: before anything can block, settle it and quit.
    s.collective_pending = false;
    leave_collective();
  }
  release_deferred();
  if (s.substituting) s.fell_back = true;
  s.substituting = false;
}

// A call between bursts (the cycle), or any call while a burst is in progress.
void note_call(const char* name) {
  State& s = st();
  Collective& c = s.col;
  // Nothing to learn once the level is off: every later call returns here.
  if (!collective_active() || !name || !enabled()) return;  // enabled() also makes the learners
  const burst::CallClass cc = burst::classify_call(name);
  if (!s.outstanding.empty() || !s.current.empty()) {
    // Inside a burst: completion calls belong to it; a collective breaks a promise; anything
    // else (a blocking send or receive, a probe, a cancel, ...) cannot be counted: quit.
    if (!cc.in_cycle && std::string_view(name).rfind("p2p:", 0) == 0) return;
    if (!cc.in_cycle || c.promised) leave_collective();
    return;
  }
  c.cycle_now.push_back(cc.id);
  if (!cc.in_cycle) {
    // A call that may wait for one rank in particular (a receive, a completion, a probe):
    // another rank could be waiting for this rank's next vote. Leave the level for good (so
    // a cycle never holds such a call).
    leave_collective();
    return;
  }
  ++c.collective_calls;
  if (!c.cast_for_next) {
    vote_for_next(cc.id, nullptr);
    return;
  }
  if (!c.promised) return;
  const std::vector<std::uint64_t>* cycle = c.cycles->expected();
  if (!cc.in_cycle || !cycle || c.cycle_pos >= cycle->size() || (*cycle)[c.cycle_pos] != cc.id) {
    leave_collective();
    return;
  }
  ++c.cycle_pos;
}

// A burst starts with `p`: close the cycle before it, cast its promise if no call did.
void start_burst(const burst::Post& p) {
  State& s = st();
  Collective& c = s.col;
  if (!collective_active()) return;
  if (c.promised) {
    const std::vector<std::uint64_t>* cycle = c.cycles->expected();
    if (!cycle || c.cycle_pos != cycle->size()) leave_collective();  // skipped part of the cycle
  }
  c.cycles->finish(c.cycle_now);
  c.cycle_now.clear();
  vote_for_next(0, &p);
}

// Records a post of the burst in progress. Returns true when it may be deferred (a send that
// matches the learned burst).
bool note_post(const burst::Post& p, bool clean) {
  State& s = st();
  if (s.outstanding.empty() && s.current.empty()) {
    start_burst(p);  // level collective: the cycle before it, its promise
    // A new burst: substitute it if the learned one is expected (level local or above); hold
    // its sends if that can help (or as the trial says).
    s.substituting = s.learner->expected() != nullptr;
    s.collective_pending = s.substituting && s.col.voted_yes;
    s.hold = s.substituting && decide_hold();
    if (collective_active() || s.substituting) s.burst_start = PMPI_Wtime();
    s.position = 0;
    s.fell_back = false;
  }
  // Level collective counts every message on the communicators a burst may run on.
  if (Collective& c = s.col; c.on) {
    if (const auto numbered = s.numbered.find(p.comm); numbered != s.numbered.end()) {
      const int peer = world_peer(numbered->second.world_ranks, p.peer);
      c.align[numbered->second.serial] += p.kind == burst::Kind::send
                                              ? burst::match_key(c.rank, peer, p.tag)
                                              : 0 - burst::match_key(peer, c.rank, p.tag);
    }
  }
  if (!clean) s.broken = true;
  if (s.current.size() < kMaxBurstPosts + 1) {
    s.current.push_back(p);
  } else {
    s.broken = true;
    start_native_stretch();  // a burst that never drains: nothing to learn from it
  }
  if (!s.substituting) return false;
  const burst::Signature& expected = *s.learner->expected();
  if (!clean || s.position >= expected.size() || !(expected[s.position] == p)) {
    if (s.col.promised) leave_collective();  // not the burst this rank promised
    abandon_substitution();
    return false;
  }
  ++s.position;
  return (p.kind == burst::Kind::send && s.hold) || s.collective_pending;
}


// Packs the burst's sends into the exchange buffer (layout `l`); false if MPI disagrees on a size.
bool pack_sends(const std::vector<Shadow*>& by_post, const burst::Layout& l) {
  State& s = st();
  Collective& c = s.col;
  c.sendbuf.resize(std::max<std::uint64_t>(l.total, 1));
  for (std::size_t k = 0; k < l.index.size(); ++k) {
    const Shadow* sh = by_post[l.index[k]];
    if (!sh) return false;
    const int bytes = static_cast<int>(sh->post.bytes);
    int pos = 0;
    if (bytes > 0 && (PMPI_Pack(sh->buf, sh->count, sh->type, c.sendbuf.data() + l.offset[k], bytes,
                                &pos, MPI_COMM_WORLD) != MPI_SUCCESS ||
                      pos != bytes))
      return false;
  }
  return true;
}

// The learned burst's last post, voted yes: run it as one collective exchange if every rank
// promised it and can run it, else release it natively like level local.
void settle_collective() {
  State& s = st();
  Collective& c = s.col;
  s.collective_pending = false;
  c.voted_yes = false;
  const burst::Verdict v = await_only();
  if (v != burst::Verdict::go) {
    release_deferred();
    return;
  }
  std::vector<Shadow*> by_post(s.current.size(), nullptr);
  for (Shadow* sh : s.deferred)
    if (sh->post_index < by_post.size()) by_post[sh->post_index] = sh;
  const burst::Signature posts = in_world(s.current);
  const burst::Layout sl = burst::layout(posts, burst::Kind::send, c.size);
  const burst::Layout rl = burst::layout(posts, burst::Kind::recv, c.size);
  const bool ready = sl.fits && rl.fits && pack_sends(by_post, sl);
  if (!commit(ready)) {
    release_deferred();
    return;
  }
  c.recvbuf.resize(std::max<std::uint64_t>(rl.total, 1));
  s.executing = true;  // the Alltoallv path's own MPI calls are not the application's
  int rc = alltoallv(c.sendbuf.data(), sl.counts.data(), sl.displs.data(), MPI_BYTE,
                     c.recvbuf.data(), rl.counts.data(), rl.displs.data(), MPI_BYTE, c.exchange);
  s.executing = false;
  for (std::size_t k = 0; k < rl.index.size() && rc == MPI_SUCCESS; ++k) {
    Shadow* sh = by_post[rl.index[k]];
    if (!sh) {
      rc = MPI_ERR_INTERN;
      break;
    }
    const int bytes = static_cast<int>(sh->post.bytes);
    int pos = 0;
    if (bytes > 0)
      rc = PMPI_Unpack(c.recvbuf.data() + rl.offset[k], bytes, &pos, sh->rbuf, sh->count,
                       sh->type, MPI_COMM_WORLD);
  }
  for (Shadow* sh : s.deferred) {
    drop_type(*sh);  // packed or unpacked: the data has moved
    sh->by_collective = true;
    sh->release_error = rc;
    PMPI_Grequest_complete(sh->greq);
    sh->real = sh->greq;
  }
  s.deferred.clear();
  s.collective_done = true;
}

// The learned burst's last post has arrived.
void burst_posted() {
  if (st().collective_pending) {
    settle_collective();
  } else {
    release_deferred();
  }
}

void track(MPI_Request req) {
  if (req != MPI_REQUEST_NULL) ++st().outstanding[req];
}

// The request `orig` (the application's handle before the call) completed or was freed.
void untrack(MPI_Request orig) {
  State& s = st();
  if (auto it = s.outstanding.find(orig); it != s.outstanding.end() && --it->second <= 0)
    s.outstanding.erase(it);
  auto it = s.shadows.find(orig);
  if (it == s.shadows.end()) return;
  if (!it->second->by_collective) {  // a completed collective greq was freed by MPI's call
    MPI_Request g = it->second->greq;
    PMPI_Grequest_complete(g);
    PMPI_Request_free(&g);
  }
  s.shadows.erase(it);
}

Shadow* shadow_of(MPI_Request req) {
  State& s = st();
  if (s.shadows.empty()) return nullptr;
  auto it = s.shadows.find(req);
  return it == s.shadows.end() ? nullptr : it->second.get();
}

// A completion call's scratch, on the stack up to kInlineRequests entries: a polling loop of
// MPI_Test or MPI_Testany (HPCC's RandomAccess makes millions) must not pay an allocation per
// call on top of MPI's own test.
constexpr std::size_t kInlineRequests = 16;
using Requests = boost::container::small_vector<MPI_Request, kInlineRequests>;
using Done = boost::container::small_vector<bool, kInlineRequests>;

// The array MPI sees: shadows replaced by their real sends (all released by then).
struct Translated {
  Requests orig;
  Requests mpi;
};

Translated translate(int count, const MPI_Request* reqs) {
  Translated t;
  const auto n = static_cast<std::size_t>(count < 0 ? 0 : count);
  t.orig.assign(reqs, reqs + n);
  t.mpi = t.orig;
  for (std::size_t i = 0; i < n; ++i)
    if (Shadow* sh = shadow_of(t.orig[i])) t.mpi[i] = sh->real;
  return t;
}

// Copies MPI's view back: completed entries are untracked (shadows freed, handle set to null);
// the others keep the application's handle.
void write_back(Translated& t, MPI_Request* reqs, const Done& completed) {
  for (std::size_t i = 0; i < t.orig.size(); ++i) {
    Shadow* sh = shadow_of(t.orig[i]);
    if (!completed[i]) {
      if (sh) {
        sh->real = t.mpi[i];
      } else {
        reqs[i] = t.mpi[i];
      }
      continue;
    }
    untrack(t.orig[i]);
    reqs[i] = sh ? MPI_REQUEST_NULL : t.mpi[i];  // a persistent request keeps its handle
  }
  end_burst_if_idle();
}

// Which entries of a completion call's array completed, from what the call returned.
Done done_all(std::size_t n, bool all, int rc, const MPI_Status* statuses) {
  Done done(n, all);
  // On MPI_ERR_IN_STATUS some requests may still be pending: the others completed.
  if (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE)
    for (std::size_t i = 0; i < n; ++i) done[i] = statuses[i].MPI_ERROR != MPI_ERR_PENDING;
  return done;
}
// Whether a call that completes one of `n` requests (MPI_Testany, MPI_Waitany) completed the
// one at *index.
bool completed_one(std::size_t n, bool completed, const int* index) {
  return completed && index && *index != MPI_UNDEFINED && *index >= 0 &&
         static_cast<std::size_t>(*index) < n;
}
Done done_one(std::size_t n, bool completed, const int* index) {
  Done done(n, false);
  if (completed_one(n, completed, index)) done[static_cast<std::size_t>(*index)] = true;
  return done;
}
Done done_some(std::size_t n, const int* outcount, const int* indices) {
  Done done(n, false);
  if (outcount && *outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      if (indices[k] >= 0 && static_cast<std::size_t>(indices[k]) < n)
        done[static_cast<std::size_t>(indices[k])] = true;
  return done;
}

}  // namespace

// --- posts ----------------------------------------------------------------------------------

namespace {

// Defers a post that matches the learned burst behind a generalized request; false if MPI
// could not make one (the caller posts it natively after releasing what is deferred).
bool defer(const burst::Post& p, const void* buf, void* rbuf, int count, MPI_Datatype type,
           int peer, int tag, MPI_Comm comm, MPI_Request* req) {
  State& s = st();
  auto sh = std::make_unique<Shadow>();
  sh->buf = buf;
  sh->rbuf = rbuf;
  sh->count = count;
  sh->type = held_type(type, p.kind == burst::Kind::recv, sh->owns_type);
  if (sh->type == MPI_DATATYPE_NULL) {
    abandon_substitution();
    return false;
  }
  sh->dest = peer;
  sh->tag = tag;
  sh->comm = comm;
  sh->post = p;
  sh->post_index = s.current.size() - 1;
  if (PMPI_Grequest_start(query_fn, free_fn, cancel_fn, sh.get(), &sh->greq) != MPI_SUCCESS) {
    drop_type(*sh);
    abandon_substitution();
    return false;
  }
  *req = sh->greq;
  s.deferred.push_back(sh.get());
  detail::p2p_watching = 1;
  track(sh->greq);
  s.shadows.emplace(sh->greq, std::move(sh));
  if (s.position == s.learner->expected()->size()) burst_posted();  // the burst's last post
  return true;
}

// A post MPI may reject (see valid_post) goes to MPI unchanged; the burst it is in stays native:
// what is held goes first, and level collective, which could not count the message, ends.
template <typename Native>
int post_natively(Native native, MPI_Request* req) {
  State& s = st();
  if (!s.deferred.empty()) abandon_substitution();
  if (!s.outstanding.empty() || !s.current.empty()) s.broken = true;
  leave_collective();
  const int rc = native();
  if (rc == MPI_SUCCESS) track(*req);
  return rc;
}

// Completion calls (and starts) in a native stretch, or with bursts off: straight to MPI.
bool passing() { return native_posts_left > 0 || !enabled(); }

// In a native stretch: true, and one post fewer left in it.
bool native_stretch_post() {
  if (native_posts_left > 0) [[likely]] {  // the case that must cost nothing
    --native_posts_left;
    return true;
  }
  return false;
}

// Isend and Irecv outside a native stretch (the entry points below test the stretch alone, so
// that path is a jump to MPI with no stack frame set up).
[[gnu::noinline]] int isend_watched(const void* buf, int count, MPI_Datatype type, int dest,
                                    int tag, MPI_Comm comm, MPI_Request* req) {
  if (!enabled() || dest == MPI_PROC_NULL || comm == MPI_COMM_NULL || !req)
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
  if (!valid_post(count, type, dest, tag, comm, false))
    return post_natively([&] { return PMPI_Isend(buf, count, type, dest, tag, comm, req); }, req);
  const burst::Post p = make_post(burst::Kind::send, count, type, dest, tag, comm);
  // Posted now unless deferred: any earlier deferred post of this burst has been released by
  // note_post's abandon, or there is none, so per-peer order holds.
  // Paused (MPI_Pcontrol(0)): a post the library cannot use, like a wildcard: nothing is held.
  if (note_post(p, !paused()) && defer(p, buf, nullptr, count, type, dest, tag, comm, req))
    return MPI_SUCCESS;
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
  if (rc == MPI_SUCCESS) track(*req);
  return rc;
}

[[gnu::noinline]] int irecv_watched(void* buf, int count, MPI_Datatype type, int source,
                                    int tag, MPI_Comm comm, MPI_Request* req) {
  if (!enabled() || source == MPI_PROC_NULL || comm == MPI_COMM_NULL || !req)
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  if (!valid_post(count, type, source, tag, comm, true))
    return post_natively([&] { return PMPI_Irecv(buf, count, type, source, tag, comm, req); }, req);
  const bool wildcard = source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG;
  // A wildcard matches a message the library cannot name: level collective cannot count it.
  if (wildcard) leave_collective();
  const burst::Post p = make_post(burst::Kind::recv, count, type, source, tag, comm);
  if (note_post(p, !wildcard && !paused()) &&
      defer(p, nullptr, buf, count, type, source, tag, comm, req))
    return MPI_SUCCESS;
  State& s = st();
  // A receive can be the burst's last post: the deferred sends go now.
  if (s.substituting && s.position == s.learner->expected()->size()) burst_posted();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  if (rc == MPI_SUCCESS) track(*req);
  return rc;
}

}  // namespace

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          MPI_Request* req) {
  if (native_stretch_post()) return PMPI_Isend(buf, count, type, dest, tag, comm, req);
  return isend_watched(buf, count, type, dest, tag, comm, req);
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Request* req) {
  if (native_stretch_post()) return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  return irecv_watched(buf, count, type, source, tag, comm, req);
}

int isend_mode(SendMode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* req) {
  auto post = [&] {
    switch (mode) {
      case SendMode::synchronous: return PMPI_Issend(buf, count, type, dest, tag, comm, req);
      case SendMode::ready: return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
      case SendMode::buffered: break;
    }
    return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
  };
  if (native_stretch_post() || !enabled() || dest == MPI_PROC_NULL || comm == MPI_COMM_NULL ||
      !req)
    return post();
  if (!valid_post(count, type, dest, tag, comm, false)) return post_natively(post, req);
  note_post(make_post(burst::Kind::send, count, type, dest, tag, comm), false);
  const int rc = post();
  if (rc == MPI_SUCCESS) track(*req);
  return rc;
}

int send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* req) {
  const int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, req);
  if (rc == MPI_SUCCESS && enabled() && dest != MPI_PROC_NULL && comm != MPI_COMM_NULL)
    st().persistent[*req] = make_post(burst::Kind::send, count, type, dest, tag, comm);
  return rc;
}

int recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* req) {
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, req);
  if (rc == MPI_SUCCESS && enabled() && source != MPI_PROC_NULL && comm != MPI_COMM_NULL)
    st().persistent[*req] = make_post(burst::Kind::recv, count, type, source, tag, comm);
  return rc;
}

int start(MPI_Request* req) { return startall(1, req); }

int startall(int count, MPI_Request reqs[]) {
  if (nb_has_bound()) nb_start(count, reqs);  // the engine's persistent exchanges among them
  if (passing()) return PMPI_Startall(count, reqs);
  // The application's persistent requests are a schedule of its own: the burst stays native,
  // and anything deferred goes first so per-peer order holds.
  p2p_flush("startall");
  State& s = st();
  for (int i = 0; i < count; ++i) {
    auto it = s.persistent.find(reqs[i]);
    if (it != s.persistent.end()) note_post(it->second, false);
  }
  const int rc = PMPI_Startall(count, reqs);
  if (rc == MPI_SUCCESS)
    for (int i = 0; i < count; ++i)
      if (s.persistent.count(reqs[i])) track(reqs[i]);
  return rc;
}

// --- completion -----------------------------------------------------------------------------

// Completion calls with the non-blocking engine's exchanges under way (nonblocking.hpp): Wait
// and Waitall drive them, Waitany and Waitsome poll (an application request may complete
// first), the calls that do not block let them progress.
int wait(MPI_Request* req, MPI_Status* status) {
  if (nb_pending()) nb_before_wait(1, req);
  if (passing()) return PMPI_Wait(req, status);
  p2p_flush("p2p:wait");
  Translated t = translate(1, req);
  const int rc = PMPI_Wait(t.mpi.data(), status);
  write_back(t, req, Done{true});
  return rc;
}

int waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  if (nb_pending()) nb_before_wait(count, reqs);
  if (passing()) return PMPI_Waitall(count, reqs, statuses);
  p2p_flush("p2p:waitall");
  Translated t = translate(count, reqs);
  const int rc = PMPI_Waitall(count, t.mpi.data(), statuses);
  write_back(t, reqs, done_all(t.orig.size(), rc == MPI_SUCCESS, rc, statuses));
  return rc;
}

int waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (nb_pending()) {
    while (nb_any_pending(count, reqs)) {
      int flag = 0;
      const int rc = testany(count, reqs, index, &flag, status);
      if (rc != MPI_SUCCESS || flag) return rc;
    }
    nb_release_all();  // about to block: every held send goes
  }
  if (passing()) return PMPI_Waitany(count, reqs, index, status);
  p2p_flush("p2p:waitany");
  Translated t = translate(count, reqs);
  const int rc = PMPI_Waitany(count, t.mpi.data(), index, status);
  write_back(t, reqs, done_one(t.orig.size(), true, index));
  return rc;
}

int waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (nb_pending()) {
    while (nb_any_pending(incount, reqs)) {
      const int rc = testsome(incount, reqs, outcount, indices, statuses);
      if (rc != MPI_SUCCESS || (outcount && *outcount != 0)) return rc;
    }
    nb_release_all();
  }
  if (passing()) return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  p2p_flush("p2p:waitsome");
  Translated t = translate(incount, reqs);
  const int rc = PMPI_Waitsome(incount, t.mpi.data(), outcount, indices, statuses);
  write_back(t, reqs, done_some(t.orig.size(), outcount, indices));
  return rc;
}

int test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (nb_pending()) nb_progress();
  if (passing()) return PMPI_Test(req, flag, status);
  p2p_flush("p2p:test");
  if (st().shadows.empty()) {  // nothing held: MPI's handle is the application's (a polling loop)
    const MPI_Request orig = *req;
    const int rc = PMPI_Test(req, flag, status);
    if (rc == MPI_SUCCESS && *flag) untrack(orig);
    end_burst_if_idle();
    return rc;
  }
  Translated t = translate(1, req);
  const int rc = PMPI_Test(t.mpi.data(), flag, status);
  write_back(t, req, Done{rc == MPI_SUCCESS && *flag != 0});
  return rc;
}

int testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (nb_pending()) nb_progress();
  if (passing()) return PMPI_Testall(count, reqs, flag, statuses);
  p2p_flush("p2p:testall");
  Translated t = translate(count, reqs);
  const int rc = PMPI_Testall(count, t.mpi.data(), flag, statuses);
  write_back(t, reqs, done_all(t.orig.size(), rc == MPI_SUCCESS && *flag != 0, rc, statuses));
  return rc;
}

int testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (nb_pending()) nb_progress();
  if (passing()) return PMPI_Testany(count, reqs, index, flag, status);
  p2p_flush("p2p:testany");
  if (st().shadows.empty()) {  // nothing held: MPI's array is the application's (a polling loop)
    const Requests orig(reqs, reqs + (count > 0 ? count : 0));
    const int rc = PMPI_Testany(count, reqs, index, flag, status);
    if (completed_one(orig.size(), *flag != 0, index))
      untrack(orig[static_cast<std::size_t>(*index)]);
    end_burst_if_idle();
    return rc;
  }
  Translated t = translate(count, reqs);
  const int rc = PMPI_Testany(count, t.mpi.data(), index, flag, status);
  write_back(t, reqs, done_one(t.orig.size(), *flag != 0, index));
  return rc;
}

int testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (nb_pending()) nb_progress();
  if (passing()) return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  p2p_flush("p2p:testsome");
  Translated t = translate(incount, reqs);
  const int rc = PMPI_Testsome(incount, t.mpi.data(), outcount, indices, statuses);
  write_back(t, reqs, done_some(t.orig.size(), outcount, indices));
  return rc;
}

int request_get_status(MPI_Request req, int* flag, MPI_Status* status) {
  if (nb_pending()) nb_progress();
  if (!enabled()) return PMPI_Request_get_status(req, flag, status);
  p2p_flush("p2p:request_get_status");
  Shadow* sh = shadow_of(req);
  return PMPI_Request_get_status(sh ? sh->real : req, flag, status);
}

int request_free(MPI_Request* req) {
  if (req && nb_has_bound()) nb_request_free(*req);
  if (!enabled() || !req) return PMPI_Request_free(req);
  p2p_flush("request_free");
  State& s = st();
  const MPI_Request orig = *req;
  if (s.outstanding.count(orig)) s.broken = true;  // completion no longer visible: stay native
  if (Shadow* sh = shadow_of(orig)) {
    MPI_Request real = sh->real;
    const int rc = real == MPI_REQUEST_NULL ? MPI_SUCCESS : PMPI_Request_free(&real);
    untrack(orig);
    *req = MPI_REQUEST_NULL;
    end_burst_if_idle();
    return rc;
  }
  const int rc = PMPI_Request_free(req);
  if (rc == MPI_SUCCESS) {
    s.persistent.erase(orig);
    untrack(orig);
    end_burst_if_idle();
  }
  return rc;
}

int cancel(MPI_Request* req) {
  if (!enabled() || !req) return PMPI_Cancel(req);
  p2p_flush("cancel");
  leave_collective();  // a cancelled message may or may not arrive: it cannot be counted
  State& s = st();
  if (s.outstanding.count(*req)) s.broken = true;
  if (Shadow* sh = shadow_of(*req)) return PMPI_Cancel(&sh->real);
  return PMPI_Cancel(req);
}

void p2p_flush(const char* call) {
  State& s = st();
  if (s.executing) return;  // the collective exchange's own calls
  if (!s.deferred.empty()) abandon_substitution();
  note_call(call);
  if (s.broken && ++s.broken_calls > kBrokenCallsBeforeNative) start_native_stretch();
  detail::p2p_watching = !s.deferred.empty() || collective_active() ? 1 : 0;
}

bool congruent_to_world(MPI_Comm comm) {
  int result = MPI_UNEQUAL;
  return comm != MPI_COMM_NULL && PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) == MPI_SUCCESS &&
         (result == MPI_CONGRUENT || result == MPI_IDENT);
}

WorldCall world_call(MPI_Comm parent, MPI_Comm made) {
  WorldCall c;
  c.congruent = congruent_to_world(made);
  c.every_rank = c.congruent || congruent_to_world(parent);
  return c;
}

namespace {

// The ranks of intracommunicator `comm` as ranks of MPI_COMM_WORLD (empty if MPI cannot say).
std::vector<int> world_ranks(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int n = 0;
  std::vector<int> out;
  if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS &&
      PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
      PMPI_Group_size(group, &n) == MPI_SUCCESS && n > 0) {
    std::vector<int> ranks(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
    out.resize(ranks.size());
    if (PMPI_Group_translate_ranks(group, n, ranks.data(), world, out.data()) != MPI_SUCCESS)
      out.clear();
  }
  if (group != MPI_GROUP_NULL) PMPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) PMPI_Group_free(&world);
  return out;
}

}  // namespace

void p2p_new_comm(MPI_Comm parent, MPI_Comm made) {
  State& s = st();
  if (!s.col.on) return;
  // Numbered when every rank of MPI_COMM_WORLD made the call (the new communicator is congruent
  // to it, or the parent is): then every rank counts it, a rank left out of a split too, whether
  // it still votes or not, so the serials stay alike.
  const WorldCall call = world_call(parent, made);
  if (!call.every_rank) return;
  const std::uint32_t serial = s.next_serial++;
  int inter = 0;
  if (made == MPI_COMM_NULL || PMPI_Comm_test_inter(made, &inter) != MPI_SUCCESS || inter) return;
  s.comms.erase(made);  // a handle MPI reused: a new number
  State::Numbered n{serial, {}};
  if (!call.congruent) {
    n.world_ranks = world_ranks(made);
    if (n.world_ranks.empty()) return;  // no bursts run collectively on it
  }
  s.numbered.emplace(comm_info(made).id, std::move(n));
}

void p2p_forget_comm(MPI_Comm comm) {
  State& s = st();
  if (s.checked && !s.enabled) return;  // nothing recorded (and threads may free at once)
  p2p_flush("comm_free");
  if (const auto it = s.comms.find(comm); it != s.comms.end()) {
    s.numbered.erase(it->second.id);
    s.comms.erase(it);
  }
}

namespace {

// Finalize: every vote and commit completes before MPI_Finalize. A rank settles what it
// promised, casts quit, and casts as many promises as the most active rank (the others stopped
// or never voted; their missing votes are quits), so every reduction has all its ranks.
void finish_votes() {
  Collective& c = st().col;
  if (!c.on) return;
  leave_collective();
  std::uint64_t most = 0;
  PMPI_Allreduce(&c.cast, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  while (c.cast < most) {
    const std::uint64_t before = c.cast;
    cast_vote(Ballot::quit);
    if (c.cast == before) break;  // MPI refused: nothing more can be done
  }
  for (auto& p : c.promises) PMPI_Wait(&p->req, MPI_STATUS_IGNORE);
  for (auto& w : c.loose) PMPI_Wait(&w->req, MPI_STATUS_IGNORE);
  c.promises.clear();
  c.loose.clear();
  c.on = false;
}

}  // namespace

void p2p_threads_native() {
  State& s = st();
  // enabled() then answers false without a write; level "off" is what the report shows.
  s.checked = true;
  s.enabled = false;
  s.level = settings::BurstLevel::off;
}

void p2p_init() {
  State& s = st();
  const settings::Settings* cfg = active_settings();
  if (!cfg || cfg->bursts != settings::BurstLevel::collective || cfg->strategy == "native" ||
      s.checked)
    return;
  Collective& c = s.col;
  // Made here, where every rank is: the votes and exchanges never mix with the application's
  // messages, and no rank has to create a communicator while another is already voting.
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &c.votes) != MPI_SUCCESS ||
      PMPI_Comm_dup(MPI_COMM_WORLD, &c.commits) != MPI_SUCCESS ||
      PMPI_Comm_dup(MPI_COMM_WORLD, &c.exchange) != MPI_SUCCESS)
    return;  // level local (enabled() says so)
  PMPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &c.size);
  c.use_trial = cfg->trial;
  s.world_id = comm_info(MPI_COMM_WORLD).id;
  s.numbered.emplace(s.world_id, State::Numbered{});
  c.on = true;
  detail::p2p_watching = 1;
}

std::vector<BurstSummary> p2p_finish(std::string& level_name, std::int64_t& posts_native) {
  State& s = st();
  p2p_flush(nullptr);
  finish_votes();
  level_name = s.level == settings::BurstLevel::off     ? "off"
               : s.level == settings::BurstLevel::local ? "local"
                                                        : "collective";
  if (!s.checked) level_name = "off";
  // Fixed-size arrays: every rank contributes the same shape to the reductions. The sums end
  // with the posts that went native.
  constexpr int kFields = 6;  // ranks, bytes, seen, substituted, fallbacks, collective
  std::array<std::int64_t, kMaxPatterns * kFields + 1> sums{}, mine{};
  mine.back() = static_cast<std::int64_t>(s.stretched_posts - native_posts_left);
  std::array<std::int64_t, kMaxPatterns> max_posts{}, my_posts{};
  for (std::size_t i = 0; i < s.patterns.size(); ++i) {
    const PatternStats& p = s.patterns[i];
    mine[i * kFields + 0] = 1;
    mine[i * kFields + 1] = p.bytes;
    mine[i * kFields + 2] = p.seen;
    mine[i * kFields + 3] = p.substituted;
    mine[i * kFields + 4] = p.fallbacks;
    mine[i * kFields + 5] = p.collective;
    my_posts[i] = p.posts;
  }
  PMPI_Reduce(mine.data(), sums.data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_SUM, 0,
              MPI_COMM_WORLD);
  PMPI_Reduce(my_posts.data(), max_posts.data(), static_cast<int>(my_posts.size()), MPI_INT64_T,
              MPI_MAX, 0, MPI_COMM_WORLD);
  posts_native = sums.back();  // rank 0's report; 0 elsewhere
  std::vector<BurstSummary> out;
  for (std::size_t i = 0; i < kMaxPatterns; ++i) {
    if (sums[i * kFields + 0] == 0) continue;
    BurstSummary b;
    b.index = static_cast<int>(i);
    b.ranks = sums[i * kFields + 0];
    b.bytes = sums[i * kFields + 1];
    b.seen = sums[i * kFields + 2];
    b.substituted = sums[i * kFields + 3];
    b.fallbacks = sums[i * kFields + 4];
    b.collective = sums[i * kFields + 5];
    b.posts = max_posts[i];
    out.push_back(b);
  }
  if (s.ask != MPI_COMM_NULL) PMPI_Comm_free(&s.ask);
  s.enabled = false;  // nothing after finalize
  return out;
}

}  // namespace commsched::intercept
