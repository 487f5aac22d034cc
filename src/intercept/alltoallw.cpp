// MPI_Alltoallw's adapter. Its displacements are in bytes and each peer has its own datatype;
// the shared steps take one datatype per side. A side whose non-empty blocks all use one
// datatype, at displacements that are whole multiples of its extent, is the same exchange as an
// MPI_Alltoallv, and is learned and substituted as one (with its own patterns and trial). Any
// other call runs as PMPI_Alltoallw: it still passes through the shared steps, naming its
// pattern by the bytes per peer and voting that it cannot run, so that every rank agrees.
// typed() is shared with the large-count MPI_Alltoallw_c (large_count.cpp), one_type() with
// MPI_Neighbor_alltoallw (neighbor.cpp).
#include <algorithm>
#include <climits>
#include <vector>

#include "intercept/exchange.hpp"
#include "intercept/intercept.hpp"

namespace commsched::intercept {
namespace {

struct AlltoallwArgs {
  const int* sendcounts;
  const int* sdispls;
  const MPI_Datatype* sendtypes;
  const int* recvcounts;
  const int* rdispls;
  const MPI_Datatype* recvtypes;
};

int native_alltoallw(const Exchange& x) {
  const auto* a = static_cast<const AlltoallwArgs*>(x.args);
  return PMPI_Alltoallw(x.sendbuf, a->sendcounts, a->sdispls, a->sendtypes, x.recvbuf,
                        a->recvcounts, a->rdispls, a->recvtypes, x.comm);
}

template <class D>
bool one_type_of(int n, const int* counts, const D* byte_displs, const MPI_Datatype* types,
                 std::vector<int>& out_counts, std::vector<int>& out_displs, MPI_Datatype& type) {
  type = MPI_BYTE;
  int j0 = 0;
  while (j0 < n && counts[j0] <= 0) ++j0;
  if (j0 < n) type = types[j0];
  MPI_Aint lb = 0, extent = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      extent <= 0)
    return false;
  for (int j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    out_counts[k] = counts[j];
    out_displs[k] = 0;
    if (counts[j] <= 0) continue;
    if (types[j] != type || byte_displs[j] % extent != 0) return false;
    const auto elements = static_cast<long long>(byte_displs[j] / extent);
    if (elements < INT_MIN || elements > INT_MAX) return false;
    out_displs[k] = static_cast<int>(elements);
  }
  return true;
}

// The pattern of a call that cannot be described: bytes per peer, as MPI_BYTE from offset 0.
void bytes_only(int n, const int* counts, const MPI_Datatype* types, std::vector<int>& out_counts,
                std::vector<int>& out_displs) {
  for (int j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    int size = 0;
    if (counts[j] > 0 && types[j] != MPI_DATATYPE_NULL) PMPI_Type_size(types[j], &size);
    const long long bytes = static_cast<long long>(counts[j] > 0 ? counts[j] : 0) * size;
    out_counts[k] = bytes > 0x7fffffff ? 0x7fffffff : static_cast<int>(bytes);
    out_displs[k] = 0;
  }
}

}  // namespace

bool one_type(int n, const int* counts, const int* byte_displs, const MPI_Datatype* types,
              std::vector<int>& out_counts, std::vector<int>& out_displs, MPI_Datatype& type) {
  return one_type_of(n, counts, byte_displs, types, out_counts, out_displs, type);
}

bool one_type(int n, const int* counts, const MPI_Aint* byte_displs, const MPI_Datatype* types,
              std::vector<int>& out_counts, std::vector<int>& out_displs, MPI_Datatype& type) {
  return one_type_of(n, counts, byte_displs, types, out_counts, out_displs, type);
}

int typed(Exchange x, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
          const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes, bool fits) {
  int n = 0, inter = 0;
  // The per-peer arrays have one entry per rank of the remote group on an intercommunicator,
  // which the shared steps run natively anyway: read them only on an intracommunicator.
  if (pass_through() || x.comm == MPI_COMM_NULL ||
      PMPI_Comm_test_inter(x.comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(x.comm, &n) != MPI_SUCCESS || !recvcounts || !rdispls || !recvtypes)
    return x.native(x);
  thread_local std::vector<int> v[4];
  for (std::vector<int>& a : v) a.resize(static_cast<std::size_t>(n));
  const bool in_place = x.sendbuf == MPI_IN_PLACE;
  MPI_Datatype st = MPI_BYTE, rt = MPI_BYTE;
  bool describable = one_type(n, recvcounts, rdispls, recvtypes, v[2], v[3], rt) && fits;
  if (in_place) {
    st = rt;
  } else if (!sendcounts || !sdispls || !sendtypes) {
    describable = false;  // MPI rejects the call: the shared steps run it natively
    std::fill(v[0].begin(), v[0].end(), 0);
    std::fill(v[1].begin(), v[1].end(), 0);
  } else {
    describable = one_type(n, sendcounts, sdispls, sendtypes, v[0], v[1], st) && describable;
  }
  if (!describable) {
    st = rt = MPI_BYTE;
    bytes_only(n, recvcounts, recvtypes, v[2], v[3]);
    if (!in_place && sendcounts && sendtypes) bytes_only(n, sendcounts, sendtypes, v[0], v[1]);
  }
  x.sendtype = st;
  x.recvtype = rt;
  x.describable = describable;
  return exchange(x, v);
}

int alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
              const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
              const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  const AlltoallwArgs args{sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes};
  return typed({sendbuf, nullptr, nullptr, MPI_BYTE, recvbuf, nullptr, nullptr, MPI_BYTE, comm,
                Family::alltoallw, "MPI_Alltoallw", native_alltoallw, &args},
               sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes, true);
}

}  // namespace commsched::intercept
