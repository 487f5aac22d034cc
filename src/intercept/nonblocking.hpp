#pragma once
/// MPI_Ialltoallv, MPI_Ialltoall and their neighbourhood forms run by the library (COMMSCHED_NONBLOCKING `eager` or
/// `shift`): the exchange becomes one message per non-empty pair on a private duplicate of the
/// communicator, and the application holds a generalized request.
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
///  * While a held exchange is driven to completion (a Wait on it), the rank waits only for its
///    own sends, whose receives every rank posted at its call, and every other exchange's sends
///    are posted first: two exchanges in flight, in any order on any communicators, cannot wait
///    on each other.
#include <mpi.h>

#include <cstdint>

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

/// Whether the engine runs a call on `comm` with this send buffer (alike on every rank); when
/// not, the call is MPI's own (a Fortran wrapper then forwards its arguments untouched).
bool nb_takes(MPI_Comm comm, const void* sendbuf);
/// The same for the neighbourhood forms.
bool nb_takes_neighbor(MPI_Comm comm, const void* sendbuf);

namespace detail {
inline int nb_under_way = 0;  // exchanges started and not complete on this rank
}
/// Whether this rank has an exchange under way: every completion call asks, so it is one load.
inline bool nb_pending() { return detail::nb_under_way != 0; }
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
void flush_point(const char* call);

/// MPI_Init, collective on MPI_COMM_WORLD: its channel, when the engine is on.
void nb_setup_world();
/// After a call that created `comm` (MPI_COMM_NULL on ranks left out), collective on it.
void nb_new_comm(MPI_Comm comm);
/// The application frees `comm`: its channel goes once its exchanges are complete.
void nb_forget_comm(MPI_Comm comm);
/// Before MPI_Finalize: every exchange completes, every channel is freed; rank 0 says what ran.
void nb_finish();

}  // namespace commsched::intercept
