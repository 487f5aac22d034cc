#pragma once
// The one list of MPI functions commsched intercepts. Each line names the C function and its
// Fortran name (lower case); c_wrappers.cpp defines the C entry points and fortran_wrappers.cpp
// every Fortran mangling (name_, name__, name, NAME, and name_f08_ for `use mpi_f08`) from it
// for Open MPI, whose Fortran layer calls PMPI_* directly. MPICH's Fortran reaches the C entry
// points except mpi_f08's Finalize, wrapped in mpich_f08_wrappers.cpp.
//
//   X(C name,        fortran name,     fortran arguments,                    forwarded args)
#define COMMSCHED_INTERCEPTED(X)                                                               \
  X(MPI_Init, mpi_init, (MPI_Fint * ierr), (ierr))                                             \
  X(MPI_Init_thread, mpi_init_thread, (MPI_Fint * required, MPI_Fint * provided, MPI_Fint * ierr), \
    (required, provided, ierr))                                                                \
  X(MPI_Finalize, mpi_finalize, (MPI_Fint * ierr), (ierr))                                     \
  X(MPI_Pcontrol, mpi_pcontrol, (MPI_Fint * level), (level))                                  \
  X(MPI_Comm_free, mpi_comm_free, (MPI_Fint * comm, MPI_Fint * ierr), (comm, ierr))            \
  X(MPI_Comm_disconnect, mpi_comm_disconnect, (MPI_Fint * comm, MPI_Fint * ierr), (comm, ierr)) \
  X(MPI_Alltoallv, mpi_alltoallv,                                                              \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr), \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, ierr)) \
  X(MPI_Alltoall, mpi_alltoall,                                                                \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr),                                      \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr)) \
  X(MPI_Alltoallw, mpi_alltoallw,                                                              \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm, MPI_Fint* ierr), \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, ierr)) \
  X(MPI_Neighbor_alltoallv, mpi_neighbor_alltoallv,                                            \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr), \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, ierr)) \
  X(MPI_Neighbor_alltoall, mpi_neighbor_alltoall,                                              \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr),                                      \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr))                  \
  X(MPI_Neighbor_alltoallw, mpi_neighbor_alltoallw,                                            \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,             \
     MPI_Fint* ierr),                                                                          \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,    \
     ierr))                                                                                    \
  X(MPI_Ialltoallv, mpi_ialltoallv,                                                            \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm,              \
     MPI_Fint* request, MPI_Fint* ierr),                                                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,      \
     request, ierr))                                                                           \
  X(MPI_Ialltoall, mpi_ialltoall,                                                              \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr),                   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr))        \
  X(MPI_Ineighbor_alltoallv, mpi_ineighbor_alltoallv,                                          \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm,              \
     MPI_Fint* request, MPI_Fint* ierr),                                                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,      \
     request, ierr))                                                                           \
  X(MPI_Ineighbor_alltoall, mpi_ineighbor_alltoall,                                            \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr),                   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr))        \
  X(MPI_Ialltoallw, mpi_ialltoallw,                                                            \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,             \
     MPI_Fint* request, MPI_Fint* ierr),                                                       \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,    \
     request, ierr))                                                                           \
  X(MPI_Ineighbor_alltoallw, mpi_ineighbor_alltoallw,                                          \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,             \
     MPI_Fint* request, MPI_Fint* ierr),                                                       \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,    \
     request, ierr))

// Open MPI's persistent all-to-alls (its pcollreq extension, MPIX_<name>_init; where the MPI is
// MPI-4, as MPICH 4, its Fortran reaches the C entry points): fortran_wrappers.cpp, when the
// extension is there (nonblocking.hpp's COMMSCHED_PCOLLREQ).
#define COMMSCHED_INTERCEPTED_PCOLLREQ(X)                                                      \
  X(MPIX_Alltoallv_init, mpix_alltoallv_init,                                                  \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm,              \
     MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),                                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,      \
     info, request, ierr))                                                                     \
  X(MPIX_Alltoall_init, mpix_alltoall_init,                                                    \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request, ierr))  \
  X(MPIX_Neighbor_alltoallv_init, mpix_neighbor_alltoallv_init,                                \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm,              \
     MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),                                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,      \
     info, request, ierr))                                                                     \
  X(MPIX_Neighbor_alltoall_init, mpix_neighbor_alltoall_init,                                  \
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, MPI_Fint* recvcount, \
     MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request, ierr))  \
  X(MPIX_Alltoallw_init, mpix_alltoallw_init,                                                  \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,             \
     MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),                                       \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,    \
     info, request, ierr))                                                                     \
  X(MPIX_Neighbor_alltoallw_init, mpix_neighbor_alltoallw_init,                                \
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes, void* recvbuf, \
     MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,             \
     MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierr),                                       \
    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,    \
     info, request, ierr))
