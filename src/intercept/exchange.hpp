#pragma once
/// The one pipeline behind every intercepted all-to-all. Each entry point (one file per family:
/// alltoall.cpp, alltoallw.cpp, neighbor.cpp; MPI_Alltoallv itself in intercept.cpp; the
/// large-count forms of all of them in large_count.cpp) is a thin
/// adapter that describes its call as an Exchange, per-peer counts and displacements over the
/// communicator's ranks, and hands it to exchange(), which runs the shared steps: describe,
/// match a cached pattern, agree, learn and plan, run, record.
#include <mpi.h>

#include <vector>

namespace commsched::intercept {

/// The families of entry points, each with its own per-communicator state (its own patterns
/// and trial), as each has its own native call: MPI's regular all-to-all algorithms are not
/// its Alltoallv's, nor its neighbourhood exchange's.
enum class Family { alltoallv = 0, alltoall = 1, alltoallw = 2, neighbor_alltoallv = 3,
                    neighbor_alltoall = 4, neighbor_alltoallw = 5 };
inline constexpr int kFamilies = 6;

/// One all-to-all call as the shared steps see it: the per-peer description every entry point
/// produces (counts and displacements in elements of one type per side, indexed by rank of
/// `comm`), and the native call it stands for, which runs whenever the library does not
/// substitute (MPI_Alltoall stays MPI_Alltoall then).
struct Exchange {
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;
  Family family;
  const char* name;  ///< for messages: "MPI_Alltoallv"
  int (*native)(const Exchange&);
  /// The entry point's own arguments, for its native call.
  const void* args = nullptr;
  /// False when this rank's call has no such description (per-peer datatypes that differ, a
  /// neighbour listed twice): the counts then only name the pattern, and this rank votes that
  /// it cannot run a schedule, so every rank runs the call natively. A rank never leaves the
  /// shared steps on its own: the others would wait in the agreement.
  bool describable = true;
};

/// Runs `x` through the shared steps; returns what MPI's own call would. Never throws.
int exchange(const Exchange& x);
/// The same, with the per-peer arrays over the communicator's ranks the adapter built: send
/// counts, send displacements, receive counts, receive displacements.
inline int exchange(Exchange x, const std::vector<int> (&v)[4]) {
  x.sendcounts = v[0].data();
  x.sdispls = v[1].data();
  x.recvcounts = v[2].data();
  x.rdispls = v[3].data();
  return exchange(x);
}

// The families' adapters, each given the call's Exchange without its per-peer arrays (the name,
// the native call and its arguments set): the int entry points and the large-count (_c) ones
// narrowed to int (large_count.cpp) share them. `fits` false: this rank's large counts do not
// fit in int, and it votes native.
/// Regular: `sendcount` and `recvcount` elements per peer (alltoall.cpp).
int regular(Exchange x, long long sendcount, long long recvcount);
/// Per-peer datatypes, byte displacements (alltoallw.cpp).
int typed(Exchange x, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
          const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes, bool fits);
/// The neighbourhood forms (neighbor.cpp): per-neighbour arrays, or nullptr and one count per
/// neighbour for the regular form.
int neighbor(Exchange x, const int* sendcounts, const int* sdispls, int sendcount,
             const int* recvcounts, const int* rdispls, int recvcount, bool fits);
/// The neighbourhood form with per-neighbour datatypes and byte displacements (neighbor.cpp).
int neighbor_typed(Exchange x, const int* sendcounts, const MPI_Aint* sdispls,
                   const MPI_Datatype* sendtypes, const int* recvcounts, const MPI_Aint* rdispls,
                   const MPI_Datatype* recvtypes, bool fits);

/// One side of a call with per-block datatypes and byte displacements (`n` blocks) as counts
/// and element displacements of one datatype (alltoallw.cpp), in the first `n` entries of
/// `out_counts` and `out_displs`: false when its non-empty blocks use different datatypes, or
/// sit between elements or past int's reach of them.
bool one_type(int n, const int* counts, const int* byte_displs, const MPI_Datatype* types,
              std::vector<int>& out_counts, std::vector<int>& out_displs, MPI_Datatype& type);
bool one_type(int n, const int* counts, const MPI_Aint* byte_displs, const MPI_Datatype* types,
              std::vector<int>& out_counts, std::vector<int>& out_displs, MPI_Datatype& type);

/// Whether the library intercepts at all (MPI initialised, not disabled); when not, an adapter
/// calls its native function directly. Counts such a call when threads keep the library native.
bool pass_through();

}  // namespace commsched::intercept
