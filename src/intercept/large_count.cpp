// The large-count (_c) all-to-alls' adapters (large_count.hpp): each narrows its counts and
// displacements to int and hands the call to its family's adapter with its own native call,
// which runs, with the arguments as the application passed them, whenever the call is not
// substituted. A rank whose values do not fit votes native through the shared steps' agreement
// rather than leaving them alone: the other ranks would wait there.
#include "intercept/large_count.hpp"

#if MPI_VERSION >= 4
#include <algorithm>
#include <climits>
#include <vector>

#include "intercept/exchange.hpp"
#include "intercept/intercept.hpp"
#include "intercept/nonblocking.hpp"

namespace commsched::intercept {
namespace {

/// A call's large-count arguments, for its native call.
struct LargeArgs {
  const MPI_Count* sendcounts = nullptr;
  const MPI_Aint* sdispls = nullptr;
  const MPI_Datatype* sendtypes = nullptr;
  const MPI_Count* recvcounts = nullptr;
  const MPI_Aint* rdispls = nullptr;
  const MPI_Datatype* recvtypes = nullptr;
  MPI_Count sendcount = 0, recvcount = 0;
};

const LargeArgs& args_of(const Exchange& x) { return *static_cast<const LargeArgs*>(x.args); }

int native_alltoallv_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Alltoallv_c(x.sendbuf, a.sendcounts, a.sdispls, x.sendtype, x.recvbuf,
                          a.recvcounts, a.rdispls, x.recvtype, x.comm);
}

int native_alltoall_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Alltoall_c(x.sendbuf, a.sendcount, x.sendtype, x.recvbuf, a.recvcount, x.recvtype,
                         x.comm);
}

int native_alltoallw_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Alltoallw_c(x.sendbuf, a.sendcounts, a.sdispls, a.sendtypes, x.recvbuf,
                          a.recvcounts, a.rdispls, a.recvtypes, x.comm);
}

int native_neighbor_alltoallv_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Neighbor_alltoallv_c(x.sendbuf, a.sendcounts, a.sdispls, x.sendtype, x.recvbuf,
                                   a.recvcounts, a.rdispls, x.recvtype, x.comm);
}

int native_neighbor_alltoall_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Neighbor_alltoall_c(x.sendbuf, a.sendcount, x.sendtype, x.recvbuf, a.recvcount,
                                  x.recvtype, x.comm);
}

int native_neighbor_alltoallw_c(const Exchange& x) {
  const LargeArgs& a = args_of(x);
  return PMPI_Neighbor_alltoallw_c(x.sendbuf, a.sendcounts, a.sdispls, a.sendtypes, x.recvbuf,
                                   a.recvcounts, a.rdispls, a.recvtypes, x.comm);
}

bool fits(long long v) { return v >= INT_MIN && v <= INT_MAX; }

int narrowed(long long v) { return static_cast<int>(std::clamp<long long>(v, INT_MIN, INT_MAX)); }

/// `n` values as int in `out` (clamped where they do not fit, which clears `all_fit`); nullptr
/// for nullptr, so that MPI sees a missing array as missing.
template <class T>
const int* narrow(const T* in, int n, std::vector<int>& out, bool& all_fit) {
  if (!in) return nullptr;
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  for (int j = 0; j < n; ++j) {
    all_fit = all_fit && fits(in[j]);
    out[static_cast<std::size_t>(j)] = narrowed(in[j]);
  }
  return out.data();
}

/// The size of `comm`'s group, whose ranks the vector forms' arrays index; false where the
/// shared steps would run the call natively without reading them (no library, no communicator,
/// an intercommunicator, whose arrays index the remote group).
bool group_size(MPI_Comm comm, int& n) {
  int inter = 0;
  return !pass_through() && comm != MPI_COMM_NULL &&
         PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
         PMPI_Comm_size(comm, &n) == MPI_SUCCESS;
}

// Scratch reused from call to call, one per thread (MPI_THREAD_MULTIPLE: threads may call on
// different communicators).
thread_local std::vector<int> scratch[4];

}  // namespace

int alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
  const LargeArgs args{sendcounts, sdispls, nullptr, recvcounts, rdispls, nullptr};
  Exchange x{sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
             Family::alltoallv, "MPI_Alltoallv_c", native_alltoallv_c, &args};
  int n = 0;
  if (!group_size(comm, n)) {
    flush_point("Alltoallv_c");  // it may block on a peer waiting for a held send
    return x.native(x);
  }
  bool all_fit = true;
  if (sendbuf != MPI_IN_PLACE) {  // in place, MPI ignores the send arrays
    x.sendcounts = narrow(sendcounts, n, scratch[0], all_fit);
    x.sdispls = narrow(sdispls, n, scratch[1], all_fit);
  }
  x.recvcounts = narrow(recvcounts, n, scratch[2], all_fit);
  x.rdispls = narrow(rdispls, n, scratch[3], all_fit);
  x.describable = all_fit;
  return exchange(x);
}

int alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  LargeArgs args;
  args.sendcount = sendcount;
  args.recvcount = recvcount;
  return regular({sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                  Family::alltoall, "MPI_Alltoall_c", native_alltoall_c, &args},
                 sendcount, recvcount);
}

int alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  const LargeArgs args{sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes};
  const Exchange x{sendbuf, nullptr, nullptr, MPI_BYTE, recvbuf, nullptr, nullptr, MPI_BYTE, comm,
                   Family::alltoallw, "MPI_Alltoallw_c", native_alltoallw_c, &args};
  int n = 0;
  if (!group_size(comm, n)) {
    flush_point("Alltoallw_c");
    return x.native(x);
  }
  bool all_fit = true;
  const int* sc = nullptr;
  const int* sd = nullptr;
  if (sendbuf != MPI_IN_PLACE) {
    sc = narrow(sendcounts, n, scratch[0], all_fit);
    sd = narrow(sdispls, n, scratch[1], all_fit);
  }
  const int* rc = narrow(recvcounts, n, scratch[2], all_fit);
  const int* rd = narrow(rdispls, n, scratch[3], all_fit);
  return typed(x, sc, sd, sendtypes, rc, rd, recvtypes, all_fit);
}

int neighbor_alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts,
                         const MPI_Aint* sdispls, MPI_Datatype sendtype, void* recvbuf,
                         const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                         MPI_Datatype recvtype, MPI_Comm comm) {
  const LargeArgs args{sendcounts, sdispls, nullptr, recvcounts, rdispls, nullptr};
  const Exchange x{sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                   Family::neighbor_alltoallv, "MPI_Neighbor_alltoallv_c",
                   native_neighbor_alltoallv_c, &args};
  if (pass_through()) return x.native(x);
  int sources = 0, destinations = 0;
  // Without a topology neighbor() runs MPI's own call before reading anything.
  if (comm == MPI_COMM_NULL || !neighbor_degrees(comm, &sources, &destinations))
    return neighbor(x, nullptr, nullptr, 0, nullptr, nullptr, 0, false);
  bool all_fit = true;
  const int* sc = narrow(sendcounts, destinations, scratch[0], all_fit);
  const int* sd = narrow(sdispls, destinations, scratch[1], all_fit);
  const int* rc = narrow(recvcounts, sources, scratch[2], all_fit);
  const int* rd = narrow(rdispls, sources, scratch[3], all_fit);
  return neighbor(x, sc, sd, 0, rc, rd, 0, all_fit);
}

int neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  LargeArgs args;
  args.sendcount = sendcount;
  args.recvcount = recvcount;
  return neighbor({sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                   Family::neighbor_alltoall, "MPI_Neighbor_alltoall_c",
                   native_neighbor_alltoall_c, &args},
                  nullptr, nullptr, narrowed(sendcount), nullptr, nullptr, narrowed(recvcount),
                  fits(sendcount) && fits(recvcount));
}

int neighbor_alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts,
                         const MPI_Aint* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                         const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                         const MPI_Datatype* recvtypes, MPI_Comm comm) {
  const LargeArgs args{sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes};
  const Exchange x{sendbuf, nullptr, nullptr, MPI_BYTE, recvbuf, nullptr, nullptr, MPI_BYTE, comm,
                   Family::neighbor_alltoallw, "MPI_Neighbor_alltoallw_c",
                   native_neighbor_alltoallw_c, &args};
  if (pass_through()) return x.native(x);
  int sources = 0, destinations = 0;
  // Without a topology neighbor_typed() runs MPI's own call before reading anything.
  if (comm == MPI_COMM_NULL || !neighbor_degrees(comm, &sources, &destinations))
    return neighbor_typed(x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, false);
  bool all_fit = true;
  const int* sc = narrow(sendcounts, destinations, scratch[0], all_fit);
  const int* rc = narrow(recvcounts, sources, scratch[2], all_fit);
  return neighbor_typed(x, sc, sdispls, sendtypes, rc, rdispls, recvtypes, all_fit);
}

}  // namespace commsched::intercept
#endif
