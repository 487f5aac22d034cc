#pragma once
/// MPI-4's large-count (_c) forms of the blocking all-to-alls (MPICH 4; Open MPI 4.1 and SMPI
/// have none): the same calls as their int forms, learned with them (one family each, so a
/// pattern seen through either form is one pattern) and substituted through the same shared
/// steps where this rank's counts and displacements fit in int. Where they do not, this rank
/// votes native, and every rank runs the call as MPI's own large-count call.
#include <mpi.h>

#if MPI_VERSION >= 4
namespace commsched::intercept {

int alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm);
int alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm);
int neighbor_alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts,
                         const MPI_Aint* sdispls, MPI_Datatype sendtype, void* recvbuf,
                         const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                         MPI_Datatype recvtype, MPI_Comm comm);
int neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int neighbor_alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts,
                         const MPI_Aint* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                         const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                         const MPI_Datatype* recvtypes, MPI_Comm comm);

}  // namespace commsched::intercept
#endif
