// The neighbourhood all-to-alls' adapters (MPI_Neighbor_alltoallv, MPI_Neighbor_alltoall and
// MPI_Neighbor_alltoallw) on
// distributed-graph, graph and Cartesian communicators: the many-to-many personalised exchange
// of paper 004 §3. Block i goes to the i-th destination and comes from the i-th source of the
// communicator's topology; placed at those ranks' positions (zero for everyone else) it is an
// MPI_Alltoallv over the communicator, learned and substituted by the shared steps with its own
// patterns and trial, and run as MPI's own neighbourhood call whenever it is not substituted.
// A rank that lists a neighbour twice (a multigraph, or a periodic Cartesian dimension of one or
// two ranks) has no such description: it votes that it cannot run, and every rank runs natively.
// MPI_Neighbor_alltoallw is described as MPI_Alltoallw is (alltoallw.cpp): where each side's
// non-empty blocks share one datatype at byte displacements that are whole multiples of its
// extent; any other call votes native. neighbor() and neighbor_typed() are shared with the
// large-count forms (large_count.cpp).
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

#include "intercept/exchange.hpp"
#include "intercept/intercept.hpp"

namespace commsched::intercept {
namespace {

int delete_neighbours(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<Neighbours*>(attribute);
  return MPI_SUCCESS;
}

bool distinct(std::vector<int> ranks) {
  ranks.erase(std::remove(ranks.begin(), ranks.end(), MPI_PROC_NULL), ranks.end());
  std::sort(ranks.begin(), ranks.end());
  return std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end();
}

// Local only: the topology's own queries.
bool query(MPI_Comm comm, Neighbours& nb) {
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return false;
  if (kind == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) return false;
    nb.sources.resize(static_cast<std::size_t>(in));
    nb.destinations.resize(static_cast<std::size_t>(out));
    std::vector<int> wi(static_cast<std::size_t>(in) + 1), wo(static_cast<std::size_t>(out) + 1);
    if (PMPI_Dist_graph_neighbors(comm, in, nb.sources.data(), wi.data(), out,
                                  nb.destinations.data(), wo.data()) != MPI_SUCCESS)
      return false;
  } else if (kind == MPI_GRAPH) {
    int rank = 0, count = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
        PMPI_Graph_neighbors_count(comm, rank, &count) != MPI_SUCCESS)
      return false;
    nb.sources.resize(static_cast<std::size_t>(count));
    if (PMPI_Graph_neighbors(comm, rank, count, nb.sources.data()) != MPI_SUCCESS) return false;
    nb.destinations = nb.sources;
  } else if (kind == MPI_CART) {
    int dims = 0;
    if (PMPI_Cartdim_get(comm, &dims) != MPI_SUCCESS) return false;
    for (int d = 0; d < dims; ++d) {  // per dimension: the rank at -1, then the one at +1
      int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
      if (PMPI_Cart_shift(comm, d, 1, &below, &above) != MPI_SUCCESS) return false;
      nb.sources.push_back(below);
      nb.sources.push_back(above);
    }
    nb.destinations = nb.sources;
  } else {
    return false;  // no topology: MPI itself rejects the call
  }
  nb.distinct = distinct(nb.sources) && distinct(nb.destinations);
  return true;
}

struct NeighborArgs {
  const int* sendcounts;  // MPI_Neighbor_alltoallv's arrays; nullptr for MPI_Neighbor_alltoall
  const int* sdispls;
  const int* recvcounts;
  const int* rdispls;
  int sendcount, recvcount;  // MPI_Neighbor_alltoall's
};

struct NeighborwArgs {
  const int* sendcounts;
  const MPI_Aint* sdispls;
  const MPI_Datatype* sendtypes;
  const int* recvcounts;
  const MPI_Aint* rdispls;
  const MPI_Datatype* recvtypes;
};

int native_neighbor_alltoallw(const Exchange& x) {
  const auto* a = static_cast<const NeighborwArgs*>(x.args);
  return PMPI_Neighbor_alltoallw(x.sendbuf, a->sendcounts, a->sdispls, a->sendtypes, x.recvbuf,
                                 a->recvcounts, a->rdispls, a->recvtypes, x.comm);
}

int native_neighbor_alltoallv(const Exchange& x) {
  const auto* a = static_cast<const NeighborArgs*>(x.args);
  return PMPI_Neighbor_alltoallv(x.sendbuf, a->sendcounts, a->sdispls, x.sendtype, x.recvbuf,
                                 a->recvcounts, a->rdispls, x.recvtype, x.comm);
}

int native_neighbor_alltoall(const Exchange& x) {
  const auto* a = static_cast<const NeighborArgs*>(x.args);
  return PMPI_Neighbor_alltoall(x.sendbuf, a->sendcount, x.sendtype, x.recvbuf, a->recvcount,
                                x.recvtype, x.comm);
}

}  // namespace

const Neighbours* neighbours(MPI_Comm comm) {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_neighbours, &k, nullptr) !=
        MPI_SUCCESS)
      k = MPI_KEYVAL_INVALID;
    return k;
  }();
  void* found = nullptr;
  int flag = 0;
  if (keyval != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(comm, keyval, &found, &flag) == MPI_SUCCESS &&
      flag && found)
    return static_cast<const Neighbours*>(found);
  auto* nb = new Neighbours;
  if (!query(comm, *nb) || keyval == MPI_KEYVAL_INVALID ||
      PMPI_Comm_set_attr(comm, keyval, nb) != MPI_SUCCESS) {
    delete nb;
    return nullptr;
  }
  return nb;
}

namespace {

// What a neighbourhood call hands the shared steps: its topology and the four per-rank arrays
// (send counts, send displacements, receive counts, receive displacements), sized to the
// communicator. False where the call runs as MPI's own at once: the library off, no topology
// (MPI rejects the call on every rank alike), or MPI_IN_PLACE, which is not allowed here either.
struct OverRanks {
  const Neighbours* nb = nullptr;
  std::vector<int> (*v)[4] = nullptr;  // the calling thread's

  bool start(const Exchange& x) {
    int n = 0;
    if (pass_through() || x.comm == MPI_COMM_NULL || x.sendbuf == MPI_IN_PLACE ||
        PMPI_Comm_size(x.comm, &n) != MPI_SUCCESS || !(nb = neighbours(x.comm)))
      return false;
    thread_local std::vector<int> arrays[4];
    for (std::vector<int>& a : arrays) a.resize(static_cast<std::size_t>(n));
    v = &arrays;
    return true;
  }
  // A call with no description: the counts stay zero, they only name the pattern.
  void zero() const {
    for (std::vector<int>& a : *v) std::fill(a.begin(), a.end(), 0);
  }
  int run(const Exchange& x) const { return exchange(x, *v); }
};

}  // namespace

int neighbor(Exchange x, const int* sendcounts, const int* sdispls, int sendcount,
             const int* recvcounts, const int* rdispls, int recvcount, bool fits) {
  const bool vector_form = x.family == Family::neighbor_alltoallv;
  OverRanks to;
  if (!to.start(x)) return x.native(x);
  const Neighbours* nb = to.nb;
  std::vector<int>(&v)[4] = *to.v;
  // The regular form's blocks lie one after another: the last one's displacement must fit too.
  const auto degree =
      static_cast<long long>(std::max(nb->sources.size(), nb->destinations.size()));
  const auto span = [degree](int c) { return degree * std::abs(static_cast<long long>(c)); };
  const bool regular_fits =
      vector_form || (span(sendcount) <= INT_MAX && span(recvcount) <= INT_MAX);
  // A side without neighbours may pass no arrays at all.
  const bool arrays = !vector_form || ((nb->destinations.empty() || (sendcounts && sdispls)) &&
                                       (nb->sources.empty() || (recvcounts && rdispls)));
  if (fits && regular_fits && nb->distinct && arrays) {
    spread(nb->destinations, sendcounts, sdispls, sendcount, v[0], v[1]);
    spread(nb->sources, recvcounts, rdispls, recvcount, v[2], v[3]);
  } else {
    x.describable = false;
    to.zero();
  }
  return to.run(x);
}

int neighbor_typed(Exchange x, const int* sendcounts, const MPI_Aint* sdispls,
                   const MPI_Datatype* sendtypes, const int* recvcounts, const MPI_Aint* rdispls,
                   const MPI_Datatype* recvtypes, bool fits) {
  OverRanks to;
  if (!to.start(x)) return x.native(x);
  const Neighbours* nb = to.nb;
  std::vector<int>(&v)[4] = *to.v;
  // Per neighbour (the topology's order), then spread over the communicator's ranks.
  thread_local std::vector<int> per[4];
  const auto out = static_cast<int>(nb->destinations.size());
  const auto in = static_cast<int>(nb->sources.size());
  per[0].resize(nb->destinations.size());
  per[1].resize(nb->destinations.size());
  per[2].resize(nb->sources.size());
  per[3].resize(nb->sources.size());
  MPI_Datatype st = MPI_BYTE, rt = MPI_BYTE;
  // A side without neighbours may pass no arrays at all.
  const bool describable =
      fits && nb->distinct && (out == 0 || (sendcounts && sdispls && sendtypes)) &&
      (in == 0 || (recvcounts && rdispls && recvtypes)) &&
      one_type(out, sendcounts, sdispls, sendtypes, per[0], per[1], st) &&
      one_type(in, recvcounts, rdispls, recvtypes, per[2], per[3], rt);
  if (describable) {
    spread(nb->destinations, per[0].data(), per[1].data(), 0, v[0], v[1]);
    spread(nb->sources, per[2].data(), per[3].data(), 0, v[2], v[3]);
  } else {
    st = rt = MPI_BYTE;
    to.zero();
  }
  x.sendtype = st;
  x.recvtype = rt;
  x.describable = describable;
  return to.run(x);
}

int neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                       const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                       const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  const NeighborwArgs args{sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes};
  return neighbor_typed({sendbuf, nullptr, nullptr, MPI_BYTE, recvbuf, nullptr, nullptr, MPI_BYTE,
                         comm, Family::neighbor_alltoallw, "MPI_Neighbor_alltoallw",
                         native_neighbor_alltoallw, &args},
                        sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes, true);
}

int neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                       MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                       const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
  const NeighborArgs args{sendcounts, sdispls, recvcounts, rdispls, 0, 0};
  return neighbor({sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                   Family::neighbor_alltoallv, "MPI_Neighbor_alltoallv", native_neighbor_alltoallv,
                   &args},
                  sendcounts, sdispls, 0, recvcounts, rdispls, 0, true);
}

int neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const NeighborArgs args{nullptr, nullptr, nullptr, nullptr, sendcount, recvcount};
  return neighbor({sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                   Family::neighbor_alltoall, "MPI_Neighbor_alltoall", native_neighbor_alltoall,
                   &args},
                  nullptr, nullptr, sendcount, nullptr, nullptr, recvcount, true);
}

bool neighbor_degrees(MPI_Comm comm, int* sources, int* destinations) {
  const Neighbours* nb = comm == MPI_COMM_NULL ? nullptr : neighbours(comm);
  if (!nb) return false;
  *sources = static_cast<int>(nb->sources.size());
  *destinations = static_cast<int>(nb->destinations.size());
  return true;
}

}  // namespace commsched::intercept
