// C entry points: turn arguments into plain values and hand them to src/intercept. No logic.
#include <mpi.h>

#include "intercept/intercept.hpp"

#define COMMSCHED_EXPORT extern "C" __attribute__((visibility("default")))

namespace ci = commsched::intercept;

COMMSCHED_EXPORT int MPI_Init(int* argc, char*** argv) { return ci::init(argc, argv); }

COMMSCHED_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return ci::init_thread(argc, argv, required, provided);
}

COMMSCHED_EXPORT int MPI_Finalize(void) { return ci::finalize(); }

COMMSCHED_EXPORT int MPI_Comm_free(MPI_Comm* comm) { return ci::comm_free(comm); }

COMMSCHED_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return ci::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm);
}
