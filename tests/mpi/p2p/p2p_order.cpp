// Non-overtaking order inside one burst. Every iteration each rank sends its right neighbour:
//   a  four messages on tag 80 of 2000, 3, 0 and 11 ints (rendezvous first, then eager and
//      empty): receive j, posted j-th, must get message j;
//   b  tags 81, 82, 83, 84 in that order, received with receives posted for 84 first, 81 last;
//   c  on communicator c, tags 93, 91, 92 in that order, received by three MPI_ANY_TAG
//      receives that must see 93, 91, 92: MPI orders messages between a pair across tags
//      whenever one receive could match both, so a sender may not reorder them even by tag;
//   d  on communicator d, two messages on tag 80 (the world tag of a), received before the
//      world ones are posted: no matching across communicators;
//   e  tag 85 twice: an MPI_Isend, then, after every other send, a blocking MPI_Send; the first
//      receive must get the MPI_Isend's message.
// Receives are posted first, then the sends in the order above; completion alternates MPI_Waitall
// and an MPI_Waitany loop. Messages of one tag differ by content and size, so a swap is caught.
//   p2p_order [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kSizesA[] = {2000, 3, 0, 11};
constexpr int kTagsB[] = {81, 82, 83, 84};
constexpr int kTagsC[] = {93, 91, 92};

// Messages of one tag told apart: the key is tag * 8 + position.
p2p::Message keyed(p2p::Message m, int position) {
  m.key = m.tag * 8 + position;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_order", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    MPI_Comm comm_c, comm_d;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_c);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_d);
    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<p2p::Message> recvs, sends;
      // Every receive of a run has room for the run's largest message, so a swap shows as a
      // wrong count and wrong values rather than a truncation error that ends the job.
      for (int j = 0; j < 2; ++j)
        recvs.push_back(keyed(p2p::incoming(left, 80, 5 + j, comm_d, 6), j));
      for (int j = 0; j < 4; ++j)
        recvs.push_back(keyed(p2p::incoming(left, 80, kSizesA[j], MPI_COMM_WORLD, 2000), j));
      for (int j = 3; j >= 0; --j) recvs.push_back(p2p::incoming(left, kTagsB[j], 2 + j));
      for (int j = 0; j < 2; ++j)
        recvs.push_back(keyed(p2p::incoming(left, 85, 7 + j, MPI_COMM_WORLD, 8), j));
      // c: MPI_ANY_TAG; the j-th receive must be the j-th message sent.
      std::vector<p2p::Message> any(3);
      for (int j = 0; j < 3; ++j) {
        any[j] = p2p::incoming(left, kTagsC[j], 4 + j, comm_c, 8);  // room for any of the three
        any[j].tag = MPI_ANY_TAG;  // posted as a wildcard, checked against kTagsC[j]
      }

      for (int j = 0; j < 4; ++j) sends.push_back(keyed(p2p::outgoing(right, 80, kSizesA[j]), j));
      for (int j = 0; j < 4; ++j) sends.push_back(p2p::outgoing(right, kTagsB[j], 2 + j));
      for (int j = 0; j < 3; ++j) sends.push_back(p2p::outgoing(right, kTagsC[j], 4 + j, comm_c));
      for (int j = 0; j < 2; ++j)
        sends.push_back(keyed(p2p::outgoing(right, 80, 5 + j, comm_d), j));
      sends.push_back(keyed(p2p::outgoing(right, 85, 7), 0));
      p2p::Message blocking = keyed(p2p::outgoing(right, 85, 8), 1);

      std::vector<MPI_Request> reqs;
      for (p2p::Message& m : recvs) {
        m.post(it);
        reqs.push_back(m.req);
      }
      for (p2p::Message& m : any) {
        m.post(it);
        reqs.push_back(m.req);
      }
      for (p2p::Message& m : sends) {
        m.post(it);
        reqs.push_back(m.req);
      }
      blocking.prepare(it);
      MPI_Send(blocking.buf.data(), blocking.count, MPI_INT, right, 85, MPI_COMM_WORLD);

      std::vector<MPI_Status> st;
      p2p::complete_all(chk, it, it % 2 == 0, reqs, st);
      std::size_t i = 0;
      for (const p2p::Message& m : recvs) m.check(chk, &st[i++], it);
      for (std::size_t j = 0; j < any.size(); ++j) {
        const MPI_Status& s = st[i++];
        chk.status(s, left, kTagsC[j], any[j].count, MPI_INT, it, "MPI_ANY_TAG receive in order");
        chk.data(any[j].buf.data(), any[j].count, any[j].sender, it, kTagsC[j]);
      }
      for (const p2p::Message& m : sends) m.check(chk, &st[i++], it);
      blocking.check(chk, nullptr, it);
      chk.expect_messages(static_cast<long>(recvs.size() + any.size()));
    }
    MPI_Comm_free(&comm_c);
    MPI_Comm_free(&comm_d);
  });
}
