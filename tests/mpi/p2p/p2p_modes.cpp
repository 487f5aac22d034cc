// Send modes other than standard in a repeating burst, which must leave the burst native:
// MPI_Issend (completes only once matched), MPI_Irsend (valid only because the receive is
// known to be posted: a barrier separates the receives from the sends), MPI_Ibsend (through an
// attached buffer). Each iteration sends the right neighbour three messages on tag 120, in the
// order MPI_Isend, MPI_Issend, MPI_Ibsend (odd iterations: MPI_Issend, MPI_Isend, MPI_Ibsend),
// which must arrive in that order, plus one MPI_Irsend on tag 121, and the left neighbour one
// MPI_Isend on tag 122. The receives are posted before the barrier; one MPI_Waitall completes
// all.
//   p2p_modes [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_modes", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    constexpr int kCounts[3] = {30, 1400, 9};  // by position on tag 120
    int pack = 0;
    MPI_Pack_size(kCounts[2], MPI_INT, MPI_COMM_WORLD, &pack);
    std::vector<char> attached(static_cast<std::size_t>(4 * (pack + MPI_BSEND_OVERHEAD)));
    MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
    for (int it = 0; it < chk.iterations(); ++it) {
      std::vector<p2p::Message> recvs, sends;
      for (int j = 0; j < 3; ++j) {
        recvs.push_back(p2p::incoming(left, 120, kCounts[j], MPI_COMM_WORLD, 1400));
        recvs.back().key = 120 * 8 + j;
      }
      recvs.push_back(p2p::incoming(left, 121, 17));
      recvs.push_back(p2p::incoming(right, 122, 5));
      const p2p::Mode first = it % 2 ? p2p::Mode::sync : p2p::Mode::standard;
      const p2p::Mode second = it % 2 ? p2p::Mode::standard : p2p::Mode::sync;
      const p2p::Mode modes[3] = {first, second, p2p::Mode::buffered};
      for (int j = 0; j < 3; ++j) {
        sends.push_back(p2p::outgoing(right, 120, kCounts[j], MPI_COMM_WORLD, modes[j]));
        sends.back().key = 120 * 8 + j;
      }
      sends.push_back(p2p::outgoing(right, 121, 17, MPI_COMM_WORLD, p2p::Mode::ready));
      sends.push_back(p2p::outgoing(left, 122, 5));

      std::vector<MPI_Request> reqs, sreqs;
      p2p::post_all(recvs, it, reqs);
      MPI_Barrier(MPI_COMM_WORLD);  // every receive is posted: MPI_Irsend is valid
      p2p::post_all(sends, it, sreqs);
      reqs.insert(reqs.end(), sreqs.begin(), sreqs.end());
      std::vector<MPI_Status> st(reqs.size());
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      p2p::check_all(chk, recvs, st.data(), it);
      p2p::check_all(chk, sends, nullptr, it);
      chk.expect_messages(p2p::receives(recvs));
    }
    void* detached = nullptr;
    int size = 0;
    MPI_Buffer_detach(&detached, &size);
  });
}
