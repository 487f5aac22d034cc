#pragma once
/// Point-to-point glue: Isend/Irecv bursts (DESIGN.md "Isend/Irecv bursts"). The wrappers hand
/// plain values here; requests the library did not create pass through untouched.
///
/// Level `local` (COMMSCHED_BURSTS): once a rank's burst has repeated COMMSCHED_LEARN_CALLS
/// times and holding it can help (burst::hold_can_help, then a trial against native; else the
/// burst passes straight to MPI), the next identical burst's receives are posted at once (as the
/// application posts them) and its sends are deferred: the application gets a generalized request for each, and
/// when the burst's last post arrives the sends are released in shift order (burst.hpp). Any
/// other MPI call the library sees before that (a completion call, a blocking send or receive,
/// a collective, a post that differs from the learned burst) first releases every deferred send,
/// so a program that waits for a peer between its posts behaves as natively.
///
/// Level `collective` (bursts on MPI_COMM_WORLD, or on a communicator congruent to it that a
/// wrapped constructor made, such as a duplicate): every rank votes on every burst; when all
/// promise the learned burst after the learned calls, its receives are deferred too and the
/// burst runs as one exchange through the Alltoallv path (see p2p.cpp "level collective").
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace commsched::intercept {

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          MPI_Request* req);
int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Request* req);
/// MPI_Issend, MPI_Irsend, MPI_Ibsend: posted natively; the burst they are in stays native.
enum class SendMode { synchronous, ready, buffered };
int isend_mode(SendMode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* req);
int send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* req);
int recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* req);
int start(MPI_Request* req);
int startall(int count, MPI_Request reqs[]);
int wait(MPI_Request* req, MPI_Status* status);
int waitall(int count, MPI_Request reqs[], MPI_Status statuses[]);
int waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status);
int waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int test(MPI_Request* req, int* flag, MPI_Status* status);
int testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]);
int testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status);
int testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int request_free(MPI_Request* req);
int cancel(MPI_Request* req);
int request_get_status(MPI_Request req, int* flag, MPI_Status* status);

/// Any other MPI call the library sees (`call`: its name, e.g. "Allreduce"; nullptr for the
/// library's own): releases every deferred post first. Level collective also learns the calls
/// between bursts from it.
void p2p_flush(const char* call);
namespace detail {
// Nonzero while p2p_flush has work: sends are held, or level collective follows the calls. It
// may stay set a little longer than that (p2p_flush clears it), never less.
inline int p2p_watching = 0;
}
/// Whether p2p_flush has work: every MPI call asks, so it is one load.
inline bool p2p_watching() { return detail::p2p_watching != 0; }
/// Call where every rank is (MPI_Init): makes level collective's communicators.
void p2p_init();
/// MPI_THREAD_MULTIPLE (call at MPI_Init_thread, before p2p_init): bursts pass through to MPI
/// untouched and the burst state is never written again, as threads may post at once.
void p2p_threads_native();
/// After a call made `made` (MPI_COMM_NULL on ranks left out) from `parent` (MPI_COMM_NULL
/// unless every rank of it took part), on every rank that took part: level collective numbers
/// the communicators bursts may run on collectively, alike on every rank of MPI_COMM_WORLD.
void p2p_new_comm(MPI_Comm parent, MPI_Comm made);
/// Whether `comm` has MPI_COMM_WORLD's ranks in its order (it is MPI_COMM_WORLD, or congruent to
/// it): alike on every rank. COMMSCHED_NONBLOCKING=auto's trials run on such communicators only;
/// level collective numbers the communicators made by calls on them.
bool congruent_to_world(MPI_Comm comm);
/// How a constructor's call (`parent` as p2p_new_comm takes it) relates to MPI_COMM_WORLD, alike
/// on every rank: `congruent`, the new communicator is congruent to it; `every_rank`, every rank
/// of MPI_COMM_WORLD made the call (the new communicator or the parent is congruent), so every
/// rank counts it, one left out of a split too. Level collective and COMMSCHED_NONBLOCKING=auto
/// number such calls.
struct WorldCall {
  bool congruent = false;
  bool every_rank = false;
};
WorldCall world_call(MPI_Comm parent, MPI_Comm made);
/// The communicator is being freed: forget its number.
void p2p_forget_comm(MPI_Comm comm);

/// One burst pattern as the finalize report shows it, summed over ranks (pattern i = the i-th
/// distinct burst each rank saw).
struct BurstSummary {
  int index = 0;
  std::int64_t ranks = 0;        ///< ranks that saw a pattern with this index
  std::int64_t posts = 0;        ///< most posts in one burst of it on any rank
  std::int64_t bytes = 0;        ///< bytes sent per burst, summed over ranks
  std::int64_t seen = 0;         ///< bursts, summed over ranks
  std::int64_t substituted = 0;  ///< bursts that ran substituted, summed over ranks
  std::int64_t fallbacks = 0;    ///< substituted bursts that met a difference and went native
  std::int64_t collective = 0;   ///< bursts that ran as one collective exchange (level collective)
};

/// Collective over MPI_COMM_WORLD (call from before_finalize on every rank): releases what is
/// deferred and sums every rank's burst statistics, and in `posts_native` the posts that passed
/// to MPI unwatched in native stretches; the results are meaningful on rank 0.
std::vector<BurstSummary> p2p_finish(std::string& level_name, std::int64_t& posts_native);

}  // namespace commsched::intercept
