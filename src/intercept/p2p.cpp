// Isend/Irecv bursts over PMPI: tracking which requests are outstanding, learning each burst's
// signature (src/burst), deferring a learned burst's sends behind generalized requests and
// releasing them in shift order. Rules that keep the application safe:
//  * a deferred send is never held across any MPI call the library sees: every wrapper other
//    than a matching post releases all deferred sends first (p2p_flush);
//  * receives are never deferred, and sends to one peer keep their order (burst::release_order);
//  * anything unusual in a burst (wildcard receive, persistent, synchronous, ready or buffered
//    send, cancel, request free) makes that burst native and resets learning;
//  * requests the library did not create are passed to MPI unchanged.
#include "intercept/p2p.hpp"

#include <boost/container/flat_map.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

#include "burst/burst.hpp"
#include "core/log.hpp"
#include "intercept/intercept.hpp"
#include "settings/settings.hpp"

namespace commsched::intercept {
namespace {

// A deferred send. The application holds `greq`, a generalized request; once released, `real`
// is the send MPI runs, and completion calls act on it in the application's place.
struct Shadow {
  MPI_Request greq = MPI_REQUEST_NULL;
  MPI_Request real = MPI_REQUEST_NULL;
  int release_error = MPI_SUCCESS;
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
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
};

constexpr std::size_t kMaxPatterns = 16;      // report slots per rank; later ones fold into the last
constexpr std::size_t kMaxBurstPosts = 4096;  // a longer burst is not learned (bounded memory)

struct State {
  bool checked = false;
  bool enabled = false;
  settings::BurstLevel level = settings::BurstLevel::off;
  std::uint32_t next_comm_id = 1;
  boost::container::flat_map<MPI_Comm, CommInfo> comms;

  std::unordered_map<MPI_Request, std::unique_ptr<Shadow>> shadows;  // by greq
  std::vector<Shadow*> deferred;                                     // not yet released
  std::unordered_map<MPI_Request, bool> outstanding;                 // tracked; value: persistent
  std::unordered_map<MPI_Request, burst::Post> persistent;           // made by *_init

  burst::Signature current;  // posts of the burst in progress
  bool broken = false;       // the burst in progress may not be learned or substituted
  bool substituting = false; // the burst in progress follows `expected`
  bool fell_back = false;    // ... and met a difference or a flush before its last post
  std::size_t position = 0;  // posts of the burst in progress matched so far
  std::unique_ptr<burst::Learner> learner;
  std::vector<PatternStats> patterns;
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
    if (s.level == settings::BurstLevel::collective) {
      // Not built yet (see README "Isend/Irecv bursts"): say so once and keep the safe level.
      int rank = 0;
      PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0)
        core::log_warn("COMMSCHED_BURSTS=collective is not available yet; bursts run at level "
                       "local");
      s.level = settings::BurstLevel::local;
    }
    s.enabled = cfg->bursts != settings::BurstLevel::off && cfg->strategy != "native";
    s.learner = std::make_unique<burst::Learner>(cfg->learn_calls);
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

burst::Post make_post(burst::Kind kind, int count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm) {
  burst::Post p;
  p.kind = kind;
  const CommInfo c = comm_info(comm);
  p.comm = c.id;
  p.peer = peer;
  p.tag = tag;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS) size = 0;
  p.bytes = static_cast<std::uint64_t>(count < 0 ? 0 : count) * static_cast<std::uint64_t>(size);
  p.distance = c.size > 0 && peer >= 0 ? ((peer - c.rank) % c.size + c.size) % c.size : 0;
  return p;
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
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = sh ? sh->release_error : MPI_SUCCESS;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  return MPI_SUCCESS;
}
int free_fn(void*) { return MPI_SUCCESS; }  // the library owns the Shadow
int cancel_fn(void*, int) { return MPI_SUCCESS; }

// Releases every deferred send, in shift order.
void release_deferred() {
  State& s = st();
  if (s.deferred.empty()) return;
  std::vector<burst::Post> posts;
  posts.reserve(s.deferred.size());
  for (const Shadow* sh : s.deferred) posts.push_back(sh->post);
  for (std::size_t i : burst::release_order(posts)) {
    Shadow& sh = *s.deferred[i];
    sh.release_error = PMPI_Isend(sh.buf, sh.count, sh.type, sh.dest, sh.tag, sh.comm, &sh.real);
    if (sh.release_error != MPI_SUCCESS) sh.real = MPI_REQUEST_NULL;
  }
  s.deferred.clear();
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
    if (s.substituting && s.position == s.current.size() && !s.fell_back) ++ps.substituted;
    if (s.substituting && s.fell_back) ++ps.fallbacks;
  }
  s.current.clear();
  s.broken = false;
  s.substituting = false;
  s.fell_back = false;
  s.position = 0;
}

// Something the learned burst did not contain: release what is deferred, run the rest native.
void abandon_substitution() {
  State& s = st();
  release_deferred();
  if (s.substituting) s.fell_back = true;
  s.substituting = false;
}

// Records a post of the burst in progress. Returns true when it may be deferred (a send that
// matches the learned burst).
bool note_post(const burst::Post& p, bool clean) {
  State& s = st();
  if (s.outstanding.empty() && s.current.empty()) {
    // A new burst: substitute it if the learned one is expected (level local or above).
    s.substituting = s.learner->expected() != nullptr;
    s.position = 0;
    s.fell_back = false;
  }
  if (!clean) s.broken = true;
  if (s.current.size() < kMaxBurstPosts + 1) {
    s.current.push_back(p);
  } else {
    s.broken = true;
  }
  if (!s.substituting) return false;
  const burst::Signature& expected = *s.learner->expected();
  if (!clean || s.position >= expected.size() || !(expected[s.position] == p)) {
    abandon_substitution();
    return false;
  }
  ++s.position;
  return p.kind == burst::Kind::send;
}

void track(MPI_Request req, bool persistent) {
  if (req != MPI_REQUEST_NULL) st().outstanding[req] = persistent;
}

// The request `orig` (the application's handle before the call) completed or was freed.
void untrack(MPI_Request orig) {
  State& s = st();
  s.outstanding.erase(orig);
  auto it = s.shadows.find(orig);
  if (it == s.shadows.end()) return;
  MPI_Request g = it->second->greq;
  PMPI_Grequest_complete(g);
  PMPI_Request_free(&g);
  s.shadows.erase(it);
}

Shadow* shadow_of(MPI_Request req) {
  State& s = st();
  if (s.shadows.empty()) return nullptr;
  auto it = s.shadows.find(req);
  return it == s.shadows.end() ? nullptr : it->second.get();
}

// The array MPI sees: shadows replaced by their real sends (all released by then).
struct Translated {
  std::vector<MPI_Request> orig;
  std::vector<MPI_Request> mpi;
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
void write_back(Translated& t, MPI_Request* reqs, const std::vector<bool>& completed) {
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
std::vector<bool> done_all(std::size_t n, bool all, int rc, const MPI_Status* statuses) {
  std::vector<bool> done(n, all);
  // On MPI_ERR_IN_STATUS some requests may still be pending: the others completed.
  if (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE)
    for (std::size_t i = 0; i < n; ++i) done[i] = statuses[i].MPI_ERROR != MPI_ERR_PENDING;
  return done;
}
std::vector<bool> done_one(std::size_t n, bool completed, const int* index) {
  std::vector<bool> done(n, false);
  if (completed && index && *index != MPI_UNDEFINED && *index >= 0 &&
      static_cast<std::size_t>(*index) < n)
    done[static_cast<std::size_t>(*index)] = true;
  return done;
}
std::vector<bool> done_some(std::size_t n, const int* outcount, const int* indices) {
  std::vector<bool> done(n, false);
  if (outcount && *outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      if (indices[k] >= 0 && static_cast<std::size_t>(indices[k]) < n)
        done[static_cast<std::size_t>(indices[k])] = true;
  return done;
}

}  // namespace

// --- posts ----------------------------------------------------------------------------------

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          MPI_Request* req) {
  if (!enabled() || dest == MPI_PROC_NULL || comm == MPI_COMM_NULL || !req)
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
  State& s = st();
  const burst::Post p = make_post(burst::Kind::send, count, type, dest, tag, comm);
  if (!note_post(p, true)) {
    // Posted now: any earlier deferred send of this burst has been released by note_post's
    // abandon, or there is none, so per-peer order holds.
    const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) track(*req, false);
    return rc;
  }
  auto sh = std::make_unique<Shadow>();
  sh->buf = buf;
  sh->count = count;
  sh->type = type;
  sh->dest = dest;
  sh->tag = tag;
  sh->comm = comm;
  sh->post = p;
  if (PMPI_Grequest_start(query_fn, free_fn, cancel_fn, sh.get(), &sh->greq) != MPI_SUCCESS) {
    abandon_substitution();
    const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS) track(*req, false);
    return rc;
  }
  *req = sh->greq;
  s.deferred.push_back(sh.get());
  track(sh->greq, false);
  s.shadows.emplace(sh->greq, std::move(sh));
  if (s.position == s.learner->expected()->size()) release_deferred();  // the burst's last post
  return MPI_SUCCESS;
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Request* req) {
  if (!enabled() || source == MPI_PROC_NULL || comm == MPI_COMM_NULL || !req)
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  const bool wildcard = source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG;
  note_post(make_post(burst::Kind::recv, count, type, source, tag, comm), !wildcard);
  State& s = st();
  // A receive can be the burst's last post: the deferred sends go now.
  if (s.substituting && s.position == s.learner->expected()->size()) release_deferred();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  if (rc == MPI_SUCCESS) track(*req, false);
  return rc;
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
  if (!enabled() || dest == MPI_PROC_NULL || comm == MPI_COMM_NULL || !req) return post();
  note_post(make_post(burst::Kind::send, count, type, dest, tag, comm), false);
  const int rc = post();
  if (rc == MPI_SUCCESS) track(*req, false);
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
  if (!enabled()) return PMPI_Startall(count, reqs);
  // The application's persistent requests are a schedule of its own: the burst stays native,
  // and anything deferred goes first so per-peer order holds.
  p2p_flush();
  State& s = st();
  for (int i = 0; i < count; ++i) {
    auto it = s.persistent.find(reqs[i]);
    if (it != s.persistent.end()) note_post(it->second, false);
  }
  const int rc = PMPI_Startall(count, reqs);
  if (rc == MPI_SUCCESS)
    for (int i = 0; i < count; ++i)
      if (s.persistent.count(reqs[i])) track(reqs[i], true);
  return rc;
}

// --- completion -----------------------------------------------------------------------------

int wait(MPI_Request* req, MPI_Status* status) {
  if (!enabled()) return PMPI_Wait(req, status);
  p2p_flush();
  Translated t = translate(1, req);
  const int rc = PMPI_Wait(t.mpi.data(), status);
  write_back(t, req, std::vector<bool>{true});
  return rc;
}

int waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!enabled()) return PMPI_Waitall(count, reqs, statuses);
  p2p_flush();
  Translated t = translate(count, reqs);
  const int rc = PMPI_Waitall(count, t.mpi.data(), statuses);
  write_back(t, reqs, done_all(t.orig.size(), rc == MPI_SUCCESS, rc, statuses));
  return rc;
}

int waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (!enabled()) return PMPI_Waitany(count, reqs, index, status);
  p2p_flush();
  Translated t = translate(count, reqs);
  const int rc = PMPI_Waitany(count, t.mpi.data(), index, status);
  write_back(t, reqs, done_one(t.orig.size(), true, index));
  return rc;
}

int waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!enabled()) return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  p2p_flush();
  Translated t = translate(incount, reqs);
  const int rc = PMPI_Waitsome(incount, t.mpi.data(), outcount, indices, statuses);
  write_back(t, reqs, done_some(t.orig.size(), outcount, indices));
  return rc;
}

int test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (!enabled()) return PMPI_Test(req, flag, status);
  p2p_flush();
  Translated t = translate(1, req);
  const int rc = PMPI_Test(t.mpi.data(), flag, status);
  write_back(t, req, std::vector<bool>{rc == MPI_SUCCESS && *flag != 0});
  return rc;
}

int testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (!enabled()) return PMPI_Testall(count, reqs, flag, statuses);
  p2p_flush();
  Translated t = translate(count, reqs);
  const int rc = PMPI_Testall(count, t.mpi.data(), flag, statuses);
  write_back(t, reqs, done_all(t.orig.size(), rc == MPI_SUCCESS && *flag != 0, rc, statuses));
  return rc;
}

int testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (!enabled()) return PMPI_Testany(count, reqs, index, flag, status);
  p2p_flush();
  Translated t = translate(count, reqs);
  const int rc = PMPI_Testany(count, t.mpi.data(), index, flag, status);
  write_back(t, reqs, done_one(t.orig.size(), *flag != 0, index));
  return rc;
}

int testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!enabled()) return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  p2p_flush();
  Translated t = translate(incount, reqs);
  const int rc = PMPI_Testsome(incount, t.mpi.data(), outcount, indices, statuses);
  write_back(t, reqs, done_some(t.orig.size(), outcount, indices));
  return rc;
}

int request_get_status(MPI_Request req, int* flag, MPI_Status* status) {
  if (!enabled()) return PMPI_Request_get_status(req, flag, status);
  p2p_flush();
  Shadow* sh = shadow_of(req);
  return PMPI_Request_get_status(sh ? sh->real : req, flag, status);
}

int request_free(MPI_Request* req) {
  if (!enabled() || !req) return PMPI_Request_free(req);
  p2p_flush();
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
  p2p_flush();
  State& s = st();
  if (s.outstanding.count(*req)) s.broken = true;
  if (Shadow* sh = shadow_of(*req)) return PMPI_Cancel(&sh->real);
  return PMPI_Cancel(req);
}

void p2p_flush() {
  State& s = st();
  if (s.deferred.empty()) return;
  abandon_substitution();
}

void p2p_forget_comm(MPI_Comm comm) {
  State& s = st();
  p2p_flush();
  s.comms.erase(comm);
}

std::vector<BurstSummary> p2p_finish(std::string& level_name) {
  State& s = st();
  p2p_flush();
  level_name = s.level == settings::BurstLevel::off     ? "off"
               : s.level == settings::BurstLevel::local ? "local"
                                                        : "collective";
  if (!s.checked) level_name = "off";
  // Fixed-size arrays: every rank contributes the same shape to the reductions.
  constexpr int kFields = 5;  // ranks, bytes, seen, substituted, fallbacks
  std::array<std::int64_t, kMaxPatterns * kFields> sums{}, mine{};
  std::array<std::int64_t, kMaxPatterns> max_posts{}, my_posts{};
  for (std::size_t i = 0; i < s.patterns.size(); ++i) {
    const PatternStats& p = s.patterns[i];
    mine[i * kFields + 0] = 1;
    mine[i * kFields + 1] = p.bytes;
    mine[i * kFields + 2] = p.seen;
    mine[i * kFields + 3] = p.substituted;
    mine[i * kFields + 4] = p.fallbacks;
    my_posts[i] = p.posts;
  }
  PMPI_Reduce(mine.data(), sums.data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_SUM, 0,
              MPI_COMM_WORLD);
  PMPI_Reduce(my_posts.data(), max_posts.data(), static_cast<int>(my_posts.size()), MPI_INT64_T,
              MPI_MAX, 0, MPI_COMM_WORLD);
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
    b.posts = max_posts[i];
    out.push_back(b);
  }
  s.enabled = false;  // nothing after finalize
  return out;
}

}  // namespace commsched::intercept
