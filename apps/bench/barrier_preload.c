/* A control for the application tier (bench.py apps --control barrier): preloaded in place of
 * libcommsched.so, it runs MPI's own MPI_Alltoall and MPI_Alltoallv, each preceded by an
 * MPI_Barrier on the call's communicator, and changes nothing else. It separates what a
 * schedule gains from what lining the ranks up before the call gains: the library's agreement
 * is itself a collective that every rank leaves only once all have entered it. */
#include <mpi.h>

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  PMPI_Barrier(comm);
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  PMPI_Barrier(comm);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}
