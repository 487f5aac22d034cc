// A burst that changes after it was learned. With iters = 60 (phases scale with --iterations):
//   [0, 15)   ring halo with both neighbours, 40 and 23 ints, tags 10 and 11
//   [15, 30)  sizes change: 1500 and 7 ints
//   [22, 30)  only the senders change: 1200 ints sent into receives still posted for 1500
//   [30, 45)  peers change: the ranks at distance 2, tags 12 and 13
//   [36, 40)  ranks 0 and 1 only: rank 1 adds a send to rank 0 (tag 14), rank 0 its receive
//   40        once: every rank adds one more message to the right (tag 15)
//   [45, 60)  back to the first pattern
// Completion: MPI_Waitall. Whatever the library learned or substituted before a change, every
// message and status must stay exact.
//   p2p_changing [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_changing", 60, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size(), iters = chk.iterations();
    auto at = [iters](int of60) { return of60 * iters / 60; };
    for (int it = 0; it < iters; ++it) {
      const bool far = it >= at(30) && it < at(45);
      const bool big = it >= at(15) && it < at(30);
      const int dist = far ? 2 : 1, tag = far ? 12 : 10;
      const int l = p2p::ring(me, -dist, n), r = p2p::ring(me, dist, n);
      const int right_count = big ? 1500 : 40, left_count = big ? 7 : 23;
      const int sent_right = it >= at(22) && it < at(30) ? 1200 : right_count;
      std::vector<p2p::Message> burst = {
          p2p::incoming(l, tag, sent_right, MPI_COMM_WORLD, right_count),
          p2p::incoming(r, tag + 1, left_count), p2p::outgoing(r, tag, sent_right),
          p2p::outgoing(l, tag + 1, left_count)};
      if (it >= at(36) && it < at(40) && me == 0) burst.push_back(p2p::incoming(1, 14, 3));
      if (it >= at(36) && it < at(40) && me == 1) burst.push_back(p2p::outgoing(0, 14, 3));
      if (it == at(40)) {
        burst.push_back(p2p::incoming(p2p::ring(me, -1, n), 15, 2));
        burst.push_back(p2p::outgoing(p2p::ring(me, 1, n), 15, 2));
      }
      std::vector<MPI_Request> reqs;
      p2p::post_all(burst, it, reqs);
      std::vector<MPI_Status> st(burst.size());
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      p2p::check_all(chk, burst, st.data(), it);
      chk.expect_messages(p2p::receives(burst));
    }
  });
}
