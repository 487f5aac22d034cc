// Cancelled receives inside an otherwise repeating burst. Besides the ring halo (tags 10, 11),
// each iteration posts a receive from the left neighbour on tag 900, which nobody sends, and
// cancels it: right after posting it (even iterations) or after posting everything (odd ones).
// Every fourth iteration adds an MPI_ANY_SOURCE receive on tag 901 (never sent), also cancelled.
// Completion rotates: one MPI_Waitall over everything; MPI_Wait on each cancelled receive, then
// MPI_Waitall; an MPI_Test loop on the cancelled ones, then MPI_Waitall. MPI_Test_cancelled must
// say true for exactly the cancelled receives.
// Then a racy cancel: a receive for a message the left neighbour does send (tag 902, posted
// with the halo) is cancelled after the halo completes. If the cancel won, the message is still
// there and MPI_Recv takes it; either way it must hold the right data with a correct status.
//   p2p_cancel [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_cancel", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    long raced = 0;
    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<p2p::Message> burst = {p2p::incoming(left, 10, 25), p2p::incoming(right, 11, 4),
                                         p2p::incoming(left, 902, 6)};
      std::vector<p2p::Message> doomed = {p2p::incoming(left, 900, 8)};
      if (it % 4 == 3) doomed.push_back(p2p::incoming(MPI_ANY_SOURCE, 901, 8));
      std::vector<MPI_Request> reqs;
      const bool cancel_early = it % 2 == 0;
      for (p2p::Message& m : burst) m.post(it);
      for (p2p::Message& m : doomed) {
        m.post(it);
        if (cancel_early) MPI_Cancel(&m.req);
      }
      std::vector<p2p::Message> sends = {p2p::outgoing(right, 10, 25), p2p::outgoing(left, 11, 4),
                                         p2p::outgoing(right, 902, 6)};
      for (p2p::Message& m : sends) m.post(it);
      if (!cancel_early)
        for (p2p::Message& m : doomed) MPI_Cancel(&m.req);

      // The halo receives [0] and [1], the sends, and the cancelled ones; 902 stays posted.
      reqs = {burst[0].req, burst[1].req};
      for (p2p::Message& m : sends) reqs.push_back(m.req);
      const std::size_t first_doomed = reqs.size();
      std::vector<MPI_Status> doomed_st(doomed.size());
      const int way = (it / 3) % 3;
      for (std::size_t d = 0; d < doomed.size(); ++d) {
        if (way == 1) {
          MPI_Wait(&doomed[d].req, &doomed_st[d]);
        } else if (way == 2) {
          p2p::Poll poll(chk, it, "MPI_Test loop on a cancelled receive");
          for (int flag = 0; !flag; poll.tick()) MPI_Test(&doomed[d].req, &flag, &doomed_st[d]);
        }
        reqs.push_back(doomed[d].req);  // MPI_REQUEST_NULL once waited on
      }
      std::vector<MPI_Status> st(reqs.size());
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      if (way == 0)
        for (std::size_t d = 0; d < doomed.size(); ++d) doomed_st[d] = st[first_doomed + d];
      for (std::size_t d = 0; d < doomed.size(); ++d) {
        int cancelled = 0;
        MPI_Test_cancelled(&doomed_st[d], &cancelled);
        chk.same(cancelled, 1, it,
                 doomed[d].tag == 900 ? "receive on tag 900" : "MPI_ANY_SOURCE receive on tag 901",
                 "MPI_Test_cancelled");
        for (int v : doomed[d].buf)
          if (!chk.same(v, -1, it, "cancelled receive", "untouched element")) break;
      }
      burst[0].check(chk, &st[0], it);
      burst[1].check(chk, &st[1], it);
      for (std::size_t s = 0; s < sends.size(); ++s) sends[s].check(chk, &st[2 + s], it);

      p2p::Message& racy = burst[2];
      MPI_Cancel(&racy.req);
      MPI_Status rst;
      MPI_Wait(&racy.req, &rst);
      int cancelled = 0;
      MPI_Test_cancelled(&rst, &cancelled);
      if (cancelled) {
        ++raced;
        for (int v : racy.buf)
          if (!chk.same(v, -1, it, "cancelled receive on tag 902", "untouched element")) break;
        MPI_Recv(racy.buf.data(), racy.capacity, MPI_INT, left, 902, MPI_COMM_WORLD, &rst);
      }
      racy.check(chk, &rst, it);
      chk.expect_messages(3);
    }
    // How often the cancel won is timing, not a result: stderr only, so outputs stay comparable.
    if (raced > 0) std::fprintf(stderr, "p2p_cancel: rank %d: %ld racy cancels won\n", me, raced);
  });
}
