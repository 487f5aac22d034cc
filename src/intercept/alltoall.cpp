// MPI_Alltoall's adapter: the regular all-to-all as per-peer counts over the shared steps
// (exchange.hpp). Its learned pattern is the communicator and the block size; it keeps its own
// patterns and trial, and runs as PMPI_Alltoall whenever it is not substituted.
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

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int n = 0;
  // Counts need the communicator's size: without the library, a communicator or a size, MPI's
  // call as it is (alike on every rank). exchange() sends the rest MPI must see untouched (an
  // intercommunicator, arguments MPI rejects) to PMPI_Alltoall itself.
  if (pass_through()) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm);
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS) {
    flush_point("Alltoall");  // it may block on a peer waiting for a held send
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  // The same exchange as per-peer counts: block j of each buffer goes to and comes from rank j.
  // Displacements past int (this rank's alone, as counts may differ between ranks with the
  // datatypes) have no such description: the call votes native. Scratch reused from call to
  // call, one per thread (MPI_THREAD_MULTIPLE: threads may call on different communicators).
  const bool describable = static_cast<long long>(n) * std::max(sendcount, recvcount) <= INT_MAX;
  thread_local std::vector<int> counts[4];
  thread_local int filled_n = -1, filled_sc = 0, filled_rc = 0;  // what counts hold
  // Undescribable: zeros, which only name the pattern.
  const int sc = !describable ? 0 : sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
  const int rc = describable ? recvcount : 0;
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
  const AlltoallArgs args{sendcount, recvcount};
  Exchange x{sendbuf,         counts[0].data(), counts[1].data(), sendtype,
             recvbuf,         counts[2].data(), counts[3].data(), recvtype,
             comm,            Family::alltoall, "MPI_Alltoall",   native_alltoall, &args};
  x.describable = describable;
  return exchange(x);
}

}  // namespace commsched::intercept
