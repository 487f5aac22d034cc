// MPI_Alltoall's adapter: the regular all-to-all as per-peer counts over the shared steps
// (exchange.hpp). Its learned pattern is the communicator and the block size; it keeps its own
// patterns and trial, and runs as PMPI_Alltoall whenever it is not substituted. regular() is
// shared with the large-count MPI_Alltoall_c (large_count.cpp).
#include <algorithm>
#include <climits>
#include <vector>

#include "intercept/exchange.hpp"
#include "intercept/intercept.hpp"
#include "intercept/nonblocking.hpp"
#include "intercept/p2p.hpp"

namespace commsched::intercept {
namespace {

struct AlltoallArgs {
  int sendcount, recvcount;
};

int native_alltoall(const Exchange& x) {
  const auto* a = static_cast<const AlltoallArgs*>(x.args);
  return PMPI_Alltoall(x.sendbuf, a->sendcount, x.sendtype, x.recvbuf, a->recvcount, x.recvtype,
                       x.comm);
}

}  // namespace

int regular(Exchange x, long long sendcount, long long recvcount) {
  int n = 0;
  // Counts need the communicator's size: without the library, a communicator or a size, MPI's
  // call as it is (alike on every rank). exchange() sends the rest MPI must see untouched (an
  // intercommunicator, arguments MPI rejects) to the native call itself.
  if (pass_through()) return x.native(x);
  if (x.comm == MPI_COMM_NULL || PMPI_Comm_size(x.comm, &n) != MPI_SUCCESS) {
    flush_point(x.name + 4);  // it may block on a peer waiting for a held send
    return x.native(x);
  }
  // The same exchange as per-peer counts: block j of each buffer goes to and comes from rank j.
  // Counts or displacements past int (this rank's alone, as counts may differ between ranks
  // with the datatypes) have no such description: the call votes native. Scratch reused from
  // call to call, one per thread (MPI_THREAD_MULTIPLE: threads may call on different
  // communicators).
  const long long own_send = x.sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
  const auto fits = [n](long long c) {
    const long long span = static_cast<long long>(n) * c;  // the last displacement's end
    return span >= INT_MIN && span <= INT_MAX && c >= INT_MIN && c <= INT_MAX;
  };
  const bool describable = fits(own_send) && fits(recvcount);
  thread_local std::vector<int> counts[4];
  thread_local int filled_n = -1, filled_sc = 0, filled_rc = 0;  // what counts hold
  // Undescribable: zeros, which only name the pattern.
  const int sc = describable ? static_cast<int>(own_send) : 0;
  const int rc = describable ? static_cast<int>(recvcount) : 0;
  if (n != filled_n || sc != filled_sc || rc != filled_rc) {  // else the previous call's hold
    for (std::vector<int>& v : counts) v.resize(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      counts[0][k] = sc;
      counts[1][k] = j * sc;
      counts[2][k] = rc;
      counts[3][k] = j * rc;
    }
    filled_n = n;
    filled_sc = sc;
    filled_rc = rc;
  }
  x.sendcounts = counts[0].data();
  x.sdispls = counts[1].data();
  x.recvcounts = counts[2].data();
  x.rdispls = counts[3].data();
  x.describable = describable;
  return exchange(x);
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const AlltoallArgs args{sendcount, recvcount};
  return regular({sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm,
                  Family::alltoall, "MPI_Alltoall", native_alltoall, &args},
                 sendcount, recvcount);
}

}  // namespace commsched::intercept
