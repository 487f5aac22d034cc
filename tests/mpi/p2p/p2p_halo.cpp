// Lockstep ring halo, the burst the library must learn and substitute: every iteration posts
// both receives, then both sends, then completes all four with one MPI_Waitall. Rightward
// messages are 12 KB (past Open MPI's shared-memory eager limit), leftward ones 17 ints, so
// both protocols run under substitution. At 2 ranks both neighbours are the same rank.
//   p2p_halo [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_halo", 40, [](p2p::Checker& chk) {
    const int left = p2p::ring(chk.rank(), -1, chk.size());
    const int right = p2p::ring(chk.rank(), 1, chk.size());
    constexpr int kBig = 3000, kSmall = 17, kTagRight = 10, kTagLeft = 11;
    std::vector<p2p::Message> burst = {
        p2p::incoming(left, kTagRight, kBig), p2p::incoming(right, kTagLeft, kSmall),
        p2p::outgoing(right, kTagRight, kBig), p2p::outgoing(left, kTagLeft, kSmall)};
    std::vector<MPI_Request> reqs;
    std::vector<MPI_Status> st(burst.size());
    for (int it = 0; it < chk.iterations(); ++it) {
      p2p::post_all(burst, it, reqs);
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      for (MPI_Request r : reqs)
        chk.same(r == MPI_REQUEST_NULL, 1, it, "MPI_Waitall", "request freed");
      p2p::check_all(chk, burst, st.data(), it);
      chk.expect_messages(p2p::receives(burst));
    }
  });
}
