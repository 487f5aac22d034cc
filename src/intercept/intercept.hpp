#pragma once
/// The glue the wrappers call: plain values in, PMPI return codes out. Never throws.
#include <mpi.h>

#include <algorithm>

#include <cstdint>
#include <vector>

namespace commsched::settings {
struct Settings;
}
namespace commsched::learn {
class Wisdom;
}

namespace commsched::intercept {

/// The settings, once MPI is initialised and the library is active; nullptr otherwise.
const settings::Settings* active_settings();
/// COMMSCHED_WISDOM as this run read it (every rank holds the same bytes; null where it is off)
/// and the hash of the machine model, part of every key.
struct WisdomContext {
  const learn::Wisdom* wisdom = nullptr;
  std::uint64_t machine = 0;
};
WisdomContext wisdom_context();
/// Node of every rank of `comm` (of `size` ranks), collective on it: one allgather of each
/// rank's processor name hashed (core::node_layout: `fake` blocks when positive).
std::vector<int> node_of_ranks(MPI_Comm comm, int size, int fake);
/// False before MPI_Init, after MPI_Finalize, when disabled, or under MPI_THREAD_MULTIPLE when
/// MPI was initialised where the library did not see it.
bool library_active();

int init(int* argc, char*** argv);
int init_thread(int* argc, char*** argv, int required, int* provided);
/// For entry points (Fortran) that initialised MPI themselves: set up the library.
void after_init(int provided_thread_level);
/// Writes the report; call before PMPI_Finalize.
void before_finalize();
int finalize();
int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
              void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
              MPI_Comm comm);
/// MPI_Alltoall: the same steps as alltoallv, with its own patterns and trial; runs as
/// PMPI_Alltoall whenever it is not substituted.
int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/// MPI_Alltoallw: substituted when each side's non-empty blocks share one datatype at
/// displacements that are whole multiples of its extent; otherwise PMPI_Alltoallw.
int alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
              const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
              const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm);
/// MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall on a communicator with a topology
/// (distributed graph, graph, Cartesian).
int neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                       MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                       const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm);
int neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
/// MPI_Neighbor_alltoallw: substituted as MPI_Alltoallw is (one datatype per side at whole
/// multiples of its extent); otherwise PMPI_Neighbor_alltoallw.
int neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                       const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                       const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm);
/// The lengths of `comm`'s source and destination lists (the neighbourhood calls' arrays);
/// false without a topology.
bool neighbor_degrees(MPI_Comm comm, int* sources, int* destinations);
/// A communicator's neighbour lists: block i of a neighbourhood call goes to destinations[i] and
/// comes from sources[i] (MPI_PROC_NULL where a Cartesian shift falls off).
struct Neighbours {
  std::vector<int> sources, destinations;
  bool distinct = true;  // no rank twice in either list
};
/// `comm`'s lists, cached on it (its topology never changes); nullptr without a topology.
const Neighbours* neighbours(MPI_Comm comm);
/// Spreads one side's per-neighbour blocks over the communicator's ranks (`out_*` sized to it):
/// the block for ranks[i] at that rank's position, zero for everyone else. `counts` and `displs`
/// nullptr: the regular form, `count` elements per neighbour, one after another. Values of the
/// int calls, or of the large-count ones (MPI_Count, MPI_Aint) where the engine runs them.
template <typename C, typename D, typename Out>
void spread(const std::vector<int>& ranks, const C* counts, const D* displs, C count,
            std::vector<Out>& out_counts, std::vector<Out>& out_displs) {
  std::fill(out_counts.begin(), out_counts.end(), Out{0});
  std::fill(out_displs.begin(), out_displs.end(), Out{0});
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == MPI_PROC_NULL) continue;
    const auto k = static_cast<std::size_t>(ranks[i]);
    out_counts[k] = counts ? static_cast<Out>(counts[i]) : static_cast<Out>(count);
    out_displs[k] = displs ? static_cast<Out>(displs[i]) : static_cast<Out>(i) * count;
  }
}
/// Drops the library's state for `comm` (before the application's PMPI_Comm_free).
void forget_comm(MPI_Comm comm);
int comm_free(MPI_Comm* comm);
/// MPI_Comm_disconnect: as comm_free (held burst sends on `comm` are released first).
int comm_disconnect(MPI_Comm* comm);

}  // namespace commsched::intercept
