#pragma once
/// MPI_Ialltoallv, MPI_Ialltoall, MPI_Ialltoallw and their neighbourhood forms run by the
/// library (COMMSCHED_NONBLOCKING `eager` or `shift`, or `auto`: a trial on each communicator,
/// learn/engine_trial.hpp): the exchange becomes one message per non-empty pair on a private
/// duplicate of the communicator, and the application holds a generalized request.
///
/// Safe in every legal program, without an agreement at the call (a start call must not block):
///  * The messages are the same whatever order a rank sends them in, so ranks never need to
///    agree on a schedule: each orders its own sends (shift order: itself, then rank + 1,
///    rank + 2, ...). Whether the library runs a call at all depends only on agreed state (the
///    settings, the thread level, the communicator's channel, made where every member is
///    present: MPI_Init, or the call that created the communicator), so every rank decides
///    alike.
///  * Every receive is posted at the call. `shift` holds the sends beyond its window and
///    releases them as earlier ones complete, inside the completion calls; before any other MPI
///    call that may block on a peer (p2p_flush), every held send is posted, so a rank never
///    blocks elsewhere while a peer waits for its data.
///  * Under `auto`, the mode of a call (MPI's own, eager, shift) is a function of its index on
///    the communicator and of verdicts agreed inside the application's blocking collectives
///    (nb_collective_done), never of what a rank measured alone.
///  * While a held exchange is driven to completion (a Wait on it), the rank waits only for its
///    own sends, whose receives every rank posted at its call, and every other exchange's sends
///    are posted first: two exchanges in flight, in any order on any communicators, cannot wait
///    on each other.
#include <mpi.h>

#include <cstdint>

#include "intercept/p2p.hpp"

namespace commsched::learn {
class Wisdom;
}

// The persistent collectives: MPI-4's MPI_<name>_init (MPICH 4), or Open MPI 4.1's MPIX_<name>_init
// from its pcollreq extension. COMMSCHED_PCOLL(name) is the entry point, COMMSCHED_PPCOLL(name)
// the profiling one; neither is defined where the MPI has no persistent collectives.
#if MPI_VERSION >= 4
#define COMMSCHED_PCOLL(name) MPI_##name
#define COMMSCHED_PPCOLL(name) PMPI_##name
#elif defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define COMMSCHED_PCOLL(name) MPIX_##name
#define COMMSCHED_PPCOLL(name) PMPIX_##name
#define COMMSCHED_PCOLLREQ 1  // Open MPI's extension, whose Fortran bindings call PMPIX_* too
#endif
#endif

namespace commsched::intercept {

int ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
               MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);
int ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);

/// MPI_Ineighbor_alltoallv and MPI_Ineighbor_alltoall: run by the engine on a communicator whose
/// topology names no rank twice in any member's lists (a multigraph, or a periodic Cartesian
/// dimension of one or two ranks, runs as MPI's own on every rank).
int ineighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                        MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                        const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request* req);
int ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);

/// MPI_Ialltoallw and MPI_Ineighbor_alltoallw: the same, each block with its own datatype (held
/// sends keep a duplicate of theirs), displacements in bytes.
int ialltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
               const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
               const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
               MPI_Request* req);
int ineighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                        const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                        const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                        MPI_Request* req);

#if MPI_VERSION >= 4
/// Their large-count forms (MPI-4): the engine runs them as the int ones, every block of any
/// size (a block past int goes as MPI_Isend_c / MPI_Irecv_c), so no rank needs to know whether
/// another's counts fit; MPI's own large-count call otherwise.
int ialltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                 MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                 const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);
int ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);
int ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts,
                          const MPI_Aint* sdispls, MPI_Datatype sendtype, void* recvbuf,
                          const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);
int ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request* req);
int ialltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                 const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                 const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                 MPI_Request* req);
int ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts,
                          const MPI_Aint* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                          const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                          const MPI_Datatype* recvtypes, MPI_Comm comm, MPI_Request* req);
#endif

#ifdef COMMSCHED_PCOLL
/// The persistent forms (MPI_Alltoallv_init and the like): the engine binds the exchange at init
/// and runs it at each MPI_Start; the application's handle is a persistent receive on a private
/// self communicator, matched by the library when the exchange completes, so every completion
/// call and MPI_Request_free treat it as MPI's own. Taken on the same agreed grounds as the
/// non-blocking forms; otherwise MPI's own init.
int alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                   MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* req);
int alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                  MPI_Request* req);
int neighbor_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                            MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                            const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, MPI_Request* req);
int neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Info info, MPI_Request* req);
/// The engine's binding alone, MPI's own init left to the caller: false when the engine does
/// not take the call, nothing done. For a binding (Open MPI's Fortran) that must pass MPI its
/// own arrays, which a persistent operation may read until it is freed.
bool bind_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                         MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                         const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request* req);
bool bind_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req);
bool bind_neighbor_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                  MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                                  const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Request* req);
bool bind_neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Request* req);
/// MPI's own init of a persistent exchange the engine did not take (counted as passed).
void nb_passed();
/// The w forms (MPI_Alltoallw_init, MPI_Neighbor_alltoallw_init): each block with its own
/// datatype, of which the binding keeps duplicates; displacements in bytes.
int alltoallw_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                   const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                   const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                   MPI_Info info, MPI_Request* req);
int neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                            const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                            const MPI_Aint* rdispls, const MPI_Datatype* recvtypes,
                            MPI_Comm comm, MPI_Info info, MPI_Request* req);
bool bind_alltoallw_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                         const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                         const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                         MPI_Request* req);
bool bind_neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts,
                                  const MPI_Aint* sdispls, const MPI_Datatype* sendtypes,
                                  void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                                  const MPI_Datatype* recvtypes, MPI_Comm comm,
                                  MPI_Request* req);
#if MPI_VERSION >= 4
/// The large-count inits (MPI-4), bound as the int ones (a block past int goes as
/// MPI_Isend_c / MPI_Irecv_c); otherwise MPI's own.
int alltoallv_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                     const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                     MPI_Request* req);
int alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Info info, MPI_Request* req);
int neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count* sendcounts,
                              const MPI_Aint* sdispls, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request* req);
int neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Info info, MPI_Request* req);
int alltoallw_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                     const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                     const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                     MPI_Info info, MPI_Request* req);
int neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count* sendcounts,
                              const MPI_Aint* sdispls, const MPI_Datatype* sendtypes,
                              void* recvbuf, const MPI_Count* recvcounts,
                              const MPI_Aint* rdispls, const MPI_Datatype* recvtypes,
                              MPI_Comm comm, MPI_Info info, MPI_Request* req);
#endif
#endif
/// MPI_Start and MPI_Startall, before MPI starts `reqs`: the engine's persistent exchanges among
/// them start.
void nb_start(int count, const MPI_Request* reqs);
/// MPI_Request_free, before MPI frees `req`: an engine's persistent exchange lets go of its
/// state (MPI does not allow freeing one that is active).
void nb_request_free(MPI_Request req);

/// Whether the engine runs a call on `comm` with this send buffer (alike on every rank); when
/// not, the call is MPI's own (a Fortran wrapper then forwards its arguments untouched).
bool nb_takes(MPI_Comm comm, const void* sendbuf);
/// The same for the neighbourhood forms.
bool nb_takes_neighbor(MPI_Comm comm, const void* sendbuf);

namespace detail {
inline int nb_under_way = 0;  // exchanges started and not complete on this rank
inline int nb_bound = 0;      // persistent exchanges bound on this rank
inline int nb_agreeing = 0;   // auto: communicators whose verdict is still to agree
}
/// Whether this rank has an exchange under way: every completion call asks, so it is one load.
inline bool nb_pending() { return detail::nb_under_way != 0; }
/// Whether this rank has a persistent exchange bound: MPI_Start and MPI_Request_free ask.
inline bool nb_has_bound() { return detail::nb_bound != 0; }
/// A completion call that does not block (Test and its forms, Request_get_status): every
/// exchange under way progresses.
void nb_progress();
/// Wait or Waitall on `reqs`, about to block in MPI: the first exchange of the library among
/// them is driven to completion with its window, after every other exchange's held sends are
/// posted; then the rest among them complete.
void nb_before_wait(int count, const MPI_Request* reqs);
/// Whether one of `reqs` is an exchange still under way: Waitany and Waitsome then poll.
bool nb_any_pending(int count, const MPI_Request* reqs);
/// Any other MPI call that may block on a peer: every held send is posted.
void nb_release_all();
/// A flush point (an MPI call that may block on a peer): held exchange and burst sends go.
/// Every wrapper calls it, so where nothing is held it costs two loads.
inline void flush_point(const char* call) {
  if (nb_pending()) nb_release_all();
  if (p2p_watching()) p2p_flush(call);
}

/// COMMSCHED_NONBLOCKING=auto: a blocking collective on `comm` returned, every member of
/// `comm` has called it. The calls on communicators congruent to MPI_COMM_WORLD are counted,
/// the same count on every rank (a correct program calls them in one order, as they may
/// synchronise); at counts 16, 32, 64, ... the ranks add up their trials there, with an
/// allreduce on MPI_COMM_WORLD's channel, and a communicator whose verdict is in switches to it
/// from the first call no rank has started yet.
void nb_collective_done(MPI_Comm comm);
/// Every wrapper of a blocking collective calls it: one load unless a verdict is open.
inline void collective_done(MPI_Comm comm) {
  if (detail::nb_agreeing) nb_collective_done(comm);
}

/// MPI_Init, collective on MPI_COMM_WORLD: its channel, when the engine is on.
void nb_setup_world();
/// After a call that created `comm` (MPI_COMM_NULL on ranks left out) from `parent`
/// (MPI_COMM_NULL unless every rank of it took part), on every rank that took part.
void nb_new_comm(MPI_Comm parent, MPI_Comm comm);
/// What the wrappers of every communicator constructor call after it succeeded, on every rank
/// that took part: the engine's channel on `made` (nb_new_comm) and level collective's
/// numbering (p2p_new_comm). `parent` is MPI_COMM_NULL where not every rank of the parent takes
/// part (MPI_Comm_create_group).
inline void comm_made(MPI_Comm parent, MPI_Comm made) {
  nb_new_comm(parent, made);
  p2p_new_comm(parent, made);
}
/// The application frees `comm`: its channel goes once its exchanges are complete.
void nb_forget_comm(MPI_Comm comm);
/// Rank 0, at MPI_Finalize: the verdicts COMMSCHED_NONBLOCKING=auto reached by trial this run,
/// for COMMSCHED_WISDOM.
void nb_add_wisdom(learn::Wisdom& w);
/// Before MPI_Finalize: every exchange completes, every channel is freed; rank 0 says what ran.
void nb_finish();

}  // namespace commsched::intercept
