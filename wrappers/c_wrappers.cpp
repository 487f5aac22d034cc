// C entry points: turn arguments into plain values and hand them to src/intercept. No logic.
#include <mpi.h>

#include "intercept/intercept.hpp"
#include "intercept/large_count.hpp"
#include "intercept/nonblocking.hpp"
#include "intercept/p2p.hpp"
#include "intercept/pcontrol.hpp"
#include "wrappers/flush_points.hpp"

#define COMMSCHED_EXPORT extern "C" __attribute__((visibility("default")))

namespace ci = commsched::intercept;

COMMSCHED_EXPORT int MPI_Init(int* argc, char*** argv) { return ci::init(argc, argv); }

COMMSCHED_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return ci::init_thread(argc, argv, required, provided);
}

COMMSCHED_EXPORT int MPI_Finalize(void) { return ci::finalize(); }

// Profiling control: 0 pauses the library on this rank, anything else resumes it. The variable
// arguments mean nothing to MPI itself, so only the level is forwarded.
COMMSCHED_EXPORT int MPI_Pcontrol(const int level, ...) {
  ci::pcontrol(level);
  return PMPI_Pcontrol(level);
}

COMMSCHED_EXPORT int MPI_Comm_free(MPI_Comm* comm) { return ci::comm_free(comm); }

COMMSCHED_EXPORT int MPI_Comm_disconnect(MPI_Comm* comm) { return ci::comm_disconnect(comm); }

COMMSCHED_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return ci::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm) {
  return ci::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return ci::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                            const int sdispls[], MPI_Datatype sendtype,
                                            void* recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm) {
  return ci::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm) {
  return ci::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                            const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void* recvbuf,
                                            const int recvcounts[], const MPI_Aint rdispls[],
                                            const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return ci::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm);
}

#if MPI_VERSION >= 4  // the large-count forms (src/intercept/large_count.hpp)
COMMSCHED_EXPORT int MPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                     void* recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                     MPI_Comm comm) {
  return ci::alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                                    MPI_Datatype recvtype, MPI_Comm comm) {
  return ci::alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void* recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                     MPI_Comm comm) {
  return ci::alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                                              const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                              void* recvbuf, const MPI_Count recvcounts[],
                                              const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                              MPI_Comm comm) {
  return ci::neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount,
                                             MPI_Datatype sendtype, void* recvbuf,
                                             MPI_Count recvcount, MPI_Datatype recvtype,
                                             MPI_Comm comm) {
  return ci::neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                                              const MPI_Aint sdispls[],
                                              const MPI_Datatype sendtypes[], void* recvbuf,
                                              const MPI_Count recvcounts[],
                                              const MPI_Aint rdispls[],
                                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return ci::neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                  rdispls, recvtypes, comm);
}
#endif

// --- Non-blocking all-to-all (src/intercept/nonblocking.hpp) ---------------------------------
COMMSCHED_EXPORT int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req) {
  return ci::ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request* req) {
  return ci::ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                             const int sdispls[], MPI_Datatype sendtype,
                                             void* recvbuf, const int recvcounts[],
                                             const int rdispls[], MPI_Datatype recvtype,
                                             MPI_Comm comm, MPI_Request* req) {
  return ci::ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm,
                                            MPI_Request* req) {
  return ci::ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                req);
}

COMMSCHED_EXPORT int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                                    const int sdispls[], const MPI_Datatype sendtypes[],
                                    void* recvbuf, const int recvcounts[], const int rdispls[],
                                    const MPI_Datatype recvtypes[], MPI_Comm comm,
                                    MPI_Request* req) {
  return ci::ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                             const MPI_Aint sdispls[],
                                             const MPI_Datatype sendtypes[], void* recvbuf,
                                             const int recvcounts[], const MPI_Aint rdispls[],
                                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                                             MPI_Request* req) {
  return ci::ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, req);
}

#if MPI_VERSION >= 4  // their large-count forms
COMMSCHED_EXPORT int MPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                      void* recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                      MPI_Comm comm, MPI_Request* req) {
  return ci::ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                                               const MPI_Aint sdispls[],
                                               const MPI_Datatype sendtypes[], void* recvbuf,
                                               const MPI_Count recvcounts[],
                                               const MPI_Aint rdispls[],
                                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                                               MPI_Request* req) {
  return ci::ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm, req);
}

COMMSCHED_EXPORT int MPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                      void* recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request* req) {
  return ci::ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req) {
  return ci::ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                                               const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                               void* recvbuf, const MPI_Count recvcounts[],
                                               const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                               MPI_Comm comm, MPI_Request* req) {
  return ci::ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, req);
}

COMMSCHED_EXPORT int MPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount,
                                              MPI_Datatype sendtype, void* recvbuf,
                                              MPI_Count recvcount, MPI_Datatype recvtype,
                                              MPI_Comm comm, MPI_Request* req) {
  return ci::ineighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, req);
}
#endif

#ifdef COMMSCHED_PCOLL  // the persistent forms, where the MPI has them (nonblocking.hpp)
COMMSCHED_EXPORT int COMMSCHED_PCOLL(Alltoallv_init)(const void* sendbuf, const int sendcounts[],
                                                     const int sdispls[], MPI_Datatype sendtype,
                                                     void* recvbuf, const int recvcounts[],
                                                     const int rdispls[], MPI_Datatype recvtype,
                                                     MPI_Comm comm, MPI_Info info,
                                                     MPI_Request* req) {
  return ci::alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, info, req);
}

COMMSCHED_EXPORT int COMMSCHED_PCOLL(Alltoall_init)(const void* sendbuf, int sendcount,
                                                    MPI_Datatype sendtype, void* recvbuf,
                                                    int recvcount, MPI_Datatype recvtype,
                                                    MPI_Comm comm, MPI_Info info,
                                                    MPI_Request* req) {
  return ci::alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                           req);
}

COMMSCHED_EXPORT int COMMSCHED_PCOLL(Neighbor_alltoallv_init)(
    const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return ci::neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, info, req);
}

COMMSCHED_EXPORT int COMMSCHED_PCOLL(Neighbor_alltoall_init)(const void* sendbuf, int sendcount,
                                                             MPI_Datatype sendtype, void* recvbuf,
                                                             int recvcount, MPI_Datatype recvtype,
                                                             MPI_Comm comm, MPI_Info info,
                                                             MPI_Request* req) {
  return ci::neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, req);
}

COMMSCHED_EXPORT int COMMSCHED_PCOLL(Alltoallw_init)(
    const void* sendbuf, const int sendcounts[], const int sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return ci::alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm, info, req);
}

COMMSCHED_EXPORT int COMMSCHED_PCOLL(Neighbor_alltoallw_init)(
    const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
    MPI_Request* req) {
  return ci::neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                     recvcounts, rdispls, recvtypes, comm, info, req);
}

#if MPI_VERSION >= 4  // their large-count forms
COMMSCHED_EXPORT int MPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                          void* recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return ci::alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm, info, req);
}

COMMSCHED_EXPORT int MPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount,
                                         MPI_Datatype sendtype, void* recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return ci::alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             info, req);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallv_init_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return ci::neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm, info, req);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount,
                                                  MPI_Datatype sendtype, void* recvbuf,
                                                  MPI_Count recvcount, MPI_Datatype recvtype,
                                                  MPI_Comm comm, MPI_Info info,
                                                  MPI_Request* req) {
  return ci::neighbor_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, info, req);
}

COMMSCHED_EXPORT int MPI_Alltoallw_init_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
    MPI_Request* req) {
  return ci::alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm, info, req);
}

COMMSCHED_EXPORT int MPI_Neighbor_alltoallw_init_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
    MPI_Request* req) {
  return ci::neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                       recvcounts, rdispls, recvtypes, comm, info, req);
}
#endif
#endif

// Communicator creation (flush_points.hpp): held sends go first, as the call may block on a
// peer; then intercept::comm_made on the parent (where all its ranks took part) and the new one.
// COMMSCHED_C_THEN: a flush point, MPI's call, then `then` once MPI's call succeeded.
#define COMMSCHED_C_THEN(name, params, args, then) \
  COMMSCHED_EXPORT int MPI_##name params {         \
    ci::flush_point(#name);                        \
    const int status = PMPI_##name args;           \
    if (status == MPI_SUCCESS) then;               \
    return status;                                 \
  }
#define COMMSCHED_COMM_CREATOR(name, fname, params, args, nf) \
  COMMSCHED_C_THEN(name, params, args,                        \
                   ci::comm_made(commsched::wrappers::whole_parent(#name) ? m : MPI_COMM_NULL, *n))
COMMSCHED_COMM_CREATORS(COMMSCHED_COMM_CREATOR)

// --- Isend/Irecv bursts (src/intercept/p2p.hpp) ---------------------------------------------
COMMSCHED_EXPORT int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                               MPI_Comm comm, MPI_Request* req) {
  return ci::isend(buf, count, type, dest, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                               MPI_Comm comm, MPI_Request* req) {
  return ci::irecv(buf, count, type, source, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, MPI_Request* req) {
  return ci::isend_mode(ci::SendMode::synchronous, buf, count, type, dest, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, MPI_Request* req) {
  return ci::isend_mode(ci::SendMode::ready, buf, count, type, dest, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, MPI_Request* req) {
  return ci::isend_mode(ci::SendMode::buffered, buf, count, type, dest, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest,
                                   int tag, MPI_Comm comm, MPI_Request* req) {
  return ci::send_init(buf, count, type, dest, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag,
                                   MPI_Comm comm, MPI_Request* req) {
  return ci::recv_init(buf, count, type, source, tag, comm, req);
}
COMMSCHED_EXPORT int MPI_Start(MPI_Request* req) { return ci::start(req); }
COMMSCHED_EXPORT int MPI_Startall(int count, MPI_Request reqs[]) { return ci::startall(count, reqs); }
COMMSCHED_EXPORT int MPI_Wait(MPI_Request* req, MPI_Status* status) { return ci::wait(req, status); }
COMMSCHED_EXPORT int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  return ci::waitall(count, reqs, statuses);
}
COMMSCHED_EXPORT int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  return ci::waitany(count, reqs, index, status);
}
COMMSCHED_EXPORT int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                                  MPI_Status statuses[]) {
  return ci::waitsome(incount, reqs, outcount, indices, statuses);
}
COMMSCHED_EXPORT int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  return ci::test(req, flag, status);
}
COMMSCHED_EXPORT int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  return ci::testall(count, reqs, flag, statuses);
}
COMMSCHED_EXPORT int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag,
                                 MPI_Status* status) {
  return ci::testany(count, reqs, index, flag, status);
}
COMMSCHED_EXPORT int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                                  MPI_Status statuses[]) {
  return ci::testsome(incount, reqs, outcount, indices, statuses);
}
COMMSCHED_EXPORT int MPI_Request_free(MPI_Request* req) { return ci::request_free(req); }
COMMSCHED_EXPORT int MPI_Cancel(MPI_Request* req) { return ci::cancel(req); }
COMMSCHED_EXPORT int MPI_Request_get_status(MPI_Request req, int* flag, MPI_Status* status) {
  return ci::request_get_status(req, flag, status);
}

// Calls that may wait for another rank: deferred sends are released before them, so a program
// that blocks here on a peer which waits for one of those sends behaves as natively.
#define COMMSCHED_FLUSH_POINT(name, fname, params, args, nf)     \
  COMMSCHED_EXPORT int MPI_##name params {                       \
    ci::flush_point(#name);                                      \
    return PMPI_##name args;                                     \
  }
COMMSCHED_FLUSH_POINTS(COMMSCHED_FLUSH_POINT)
COMMSCHED_FLUSH_POINTS_C(COMMSCHED_FLUSH_POINT)
COMMSCHED_FLUSH_POINTS_IO(COMMSCHED_FLUSH_POINT)
COMMSCHED_FLUSH_POINTS_STRING(COMMSCHED_FLUSH_POINT)
COMMSCHED_FLUSH_POINTS_MPI4(COMMSCHED_FLUSH_POINT)

// Blocking collectives: flush points, and after MPI's call every member has been there
// (intercept::collective_done). Each names its communicator `m`.
#define COMMSCHED_COLLECTIVE(name, fname, params, args, nf) \
  COMMSCHED_C_THEN(name, params, args, ci::collective_done(m))
COMMSCHED_BLOCKING_COLLECTIVES(COMMSCHED_COLLECTIVE)
COMMSCHED_BLOCKING_COLLECTIVES_MPI4(COMMSCHED_COLLECTIVE)
