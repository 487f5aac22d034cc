// A call the library has no signature for in the middle of a burst. Every iteration each rank
// sends its right neighbour three messages: 5 ints on tag 86, then 9 ints on tag 86 with
// MPI_Isend_c (MPI-4's large-count form; MPI_Isend where the MPI has none), then 3 ints on
// tag 87; the two receives on tag 86 must get 5 and 9 ints in that order. A library that held
// the first send (a learned burst's sends are held until its last post) and let the
// large-count send go first would swap them: every call it does not handle itself releases the
// held sends first.
//   p2p_large_count [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_large_count", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<p2p::Message> recvs, sends;
      p2p::Message first = p2p::incoming(left, 86, 5, MPI_COMM_WORLD, 9);
      p2p::Message second = p2p::incoming(left, 86, 9, MPI_COMM_WORLD, 9);
      first.key = 86 * 8;
      second.key = 86 * 8 + 1;
      recvs = {first, second, p2p::incoming(left, 87, 3)};
      sends.push_back(p2p::outgoing(right, 86, 5));
      sends.back().key = 86 * 8;
      p2p::Message unseen = p2p::outgoing(right, 86, 9);
      unseen.key = 86 * 8 + 1;
      p2p::Message last = p2p::outgoing(right, 87, 3);

      std::vector<MPI_Request> reqs;
      for (p2p::Message& m : recvs) {
        m.post(it);
        reqs.push_back(m.req);
      }
      sends[0].post(it);
      reqs.push_back(sends[0].req);
      unseen.prepare(it);
#if MPI_VERSION >= 4
      MPI_Isend_c(unseen.buf.data(), unseen.count, MPI_INT, right, 86, MPI_COMM_WORLD, &unseen.req);
#else
      MPI_Isend(unseen.buf.data(), unseen.count, MPI_INT, right, 86, MPI_COMM_WORLD, &unseen.req);
#endif
      reqs.push_back(unseen.req);
      last.post(it);
      reqs.push_back(last.req);
      sends.push_back(unseen);
      sends.push_back(last);

      std::vector<MPI_Status> st;
      p2p::complete_all(chk, it, it % 2 == 0, reqs, st);
      std::size_t i = 0;
      for (const p2p::Message& m : recvs) m.check(chk, &st[i++], it);
      for (const p2p::Message& m : sends) m.check(chk, &st[i++], it);
      chk.expect_messages(static_cast<long>(recvs.size()));
    }
  });
}
