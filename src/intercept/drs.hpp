#pragma once
/// `drs`, distributed random scheduling (paper 001 §6, Fig. 5): every rank pre-posts its
/// receives, then repeatedly picks a destination at random from those it still has to serve and
/// test-and-sets that destination's busy lock; when it wins it sends the whole message (the
/// receiver frees its lock when the message has arrived), otherwise it tries another. It needs no
/// global matrix and no plan: a receiver is never hit by two senders at once.
///
/// The test-and-set is a request/reply pair of small messages on the private communicator, as
/// the paper's active messages were on the CM-5 (MPI one-sided atomics would do, but Open MPI
/// 4.1's osc/rdma over shared memory crashes on them, and a preloaded library must not change
/// the job's MCA settings). Requests carry the call's sequence number: a request from a rank
/// already in the next call is refused until this rank gets there.
#include <mpi.h>

#include <cstdint>

#include "intercept/pmpi_transport.hpp"

namespace commsched::intercept {

/// Runs one Alltoallv by distributed random scheduling over `comm` (the private duplicate),
/// with the call's buffers as `send`/`recv` describe them (whole messages, user datatypes; an
/// in-place send side arrives packed). `call` numbers this call on the communicator (the same on
/// every rank); `seed` varies the destination order. Returns the first PMPI error code.
int drs_alltoallv(Side& send, Side& recv, MPI_Comm comm, int rank, int size, std::uint64_t call,
                  std::uint64_t seed);

}  // namespace commsched::intercept
