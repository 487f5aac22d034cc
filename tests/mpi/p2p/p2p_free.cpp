// Send requests freed with MPI_Request_free right after posting; completion is inferred from a
// later message, as MPI allows. Each iteration on the ring:
//   1. send a request to the right neighbour (tag 70) and free it;
//   2. post receives for the right neighbour's reply (tag 71) and the left one's request (tag 70);
//   3. wait for the left neighbour's request, compute the reply into the reply buffer (its
//      values are those the checker expects), send it left (tag 71) and free that send;
//   4. wait for the reply from the right.
// The request buffer is reused next iteration: the reply proves the right neighbour received it.
// The reply buffer is rewritten only in step 3 of the next iteration, after the left neighbour's
// next request, which it sends after step 4: so after it received this reply.
// The freed send is all the library holds of a message the neighbour waits for: a deferred send
// that is freed must still go out. From iters/3 the request goes through a persistent request
// (MPI_Send_init, MPI_Start, MPI_Request_free while active); from 2*iters/3 each rank frees an
// MPI_Isend to the right, then receives from the left with a blocking MPI_Recv and enters
// MPI_Barrier (after which its buffer is free again).
//   p2p_free [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_free", 45, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size(), iters = chk.iterations();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    constexpr int kRequest = 70, kReply = 71, kOneWay = 72;
    p2p::Message request = p2p::outgoing(right, kRequest, 40);
    p2p::Message reply = p2p::outgoing(left, kReply, 11);
    p2p::Message one_way = p2p::outgoing(right, kOneWay, 1200);
    const int persistent_from = iters / 3, barrier_from = 2 * iters / 3;
    for (int it = 0; it < barrier_from; ++it) {
      if (it < persistent_from) {
        request.post(it);
      } else {
        request.init_persistent();
        request.prepare(it);
        MPI_Start(&request.req);
      }
      MPI_Request_free(&request.req);
      chk.same(request.req == MPI_REQUEST_NULL, 1, it, "MPI_Request_free", "handle nulled");

      p2p::Message from_right = p2p::incoming(right, kReply, 11);
      p2p::Message from_left = p2p::incoming(left, kRequest, 40);
      from_right.post(it);
      from_left.post(it);
      MPI_Status st;
      MPI_Wait(&from_left.req, &st);
      from_left.check(chk, &st, it);
      reply.post(it);
      MPI_Request_free(&reply.req);
      MPI_Wait(&from_right.req, &st);
      from_right.check(chk, &st, it);
      request.check(chk, nullptr, it);  // our request buffer: untouched while in flight
      chk.expect_messages(2);
    }
    for (int it = barrier_from; it < iters; ++it) {
      one_way.post(it);
      MPI_Request_free(&one_way.req);
      p2p::Message from_left = p2p::incoming(left, kOneWay, 1200);
      MPI_Status st;
      MPI_Recv(from_left.buf.data(), from_left.capacity, MPI_INT, left, kOneWay, MPI_COMM_WORLD,
               &st);
      from_left.check(chk, &st, it);
      chk.expect_messages(1);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  });
}
