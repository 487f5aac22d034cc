// A burst that never ends, in the shape of HPCC's RandomAccess: each rank keeps kRecvs receives
// from MPI_ANY_SOURCE posted, polls them with MPI_Testany and reposts each one that completes,
// while it sends its own messages one at a time (MPI_Isend, then MPI_Test on it between polls).
// Message i of rank s goes to rank ring(s, 1 + i mod (n-1)) with tag kTag: element 0 is i, the
// others value(s, receiver, i, kTag, k). A rank stops when its sends are done and it has
// received every message sent to it; the receives still posted are cancelled, and
// MPI_Test_cancelled must say so. Every message must arrive once, whole, with its status.
// The library cannot learn such a burst (wildcards): with default settings its polling goes
// straight to MPI after a few hundred calls (the report's burst_posts_native, CMakeLists.txt).
//   p2p_polling [--iterations N (messages per rank)] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kRecvs = 4;
constexpr int kCount = 6;  // elements per message
constexpr int kTag = 30;

int receiver(int sender, int i, int n) { return p2p::ring(sender, 1 + i % (n - 1), n); }

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_polling", 600, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size(), messages = chk.iterations();
    if (n < 2) return;
    long want = 0;
    for (int s = 0; s < n; ++s)
      for (int i = 0; s != me && i < messages; ++i) want += receiver(s, i, n) == me ? 1 : 0;
    chk.expect_messages(want);

    std::vector<std::vector<char>> seen(static_cast<std::size_t>(n),
                                        std::vector<char>(static_cast<std::size_t>(messages), 0));
    std::vector<int> rbuf(kRecvs * kCount, -1);
    std::vector<MPI_Request> rreq(kRecvs, MPI_REQUEST_NULL);
    auto post = [&](int r) {
      int* b = &rbuf[static_cast<std::size_t>(r * kCount)];
      std::fill(b, b + kCount, -1);
      MPI_Irecv(b, kCount, MPI_INT, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD,
                &rreq[static_cast<std::size_t>(r)]);
    };
    for (int r = 0; r < kRecvs; ++r) post(r);

    std::vector<int> sbuf(kCount);
    MPI_Request sreq = MPI_REQUEST_NULL;
    int next = 0, sent_to = -1;
    long got = 0;
    p2p::Poll poll(chk, 0, "MPI_Testany loop");
    while (next < messages || sreq != MPI_REQUEST_NULL || got < want) {
      if (sreq == MPI_REQUEST_NULL && next < messages) {
        sent_to = receiver(me, next, n);
        sbuf[0] = next;
        p2p::fill(sbuf.data() + 1, kCount - 1, me, sent_to, next, kTag);
        MPI_Isend(sbuf.data(), kCount, MPI_INT, sent_to, kTag, MPI_COMM_WORLD, &sreq);
        ++next;
      }
      int index = MPI_UNDEFINED, flag = 0;
      MPI_Status st;
      MPI_Testany(kRecvs, rreq.data(), &index, &flag, &st);
      if (flag && index != MPI_UNDEFINED) {
        const int* b = &rbuf[static_cast<std::size_t>(index * kCount)];
        const int src = st.MPI_SOURCE, i = b[0];
        chk.status(st, src, kTag, kCount, MPI_INT, i, "MPI_ANY_SOURCE receive");
        if (src >= 0 && src < n && src != me && i >= 0 && i < messages &&
            receiver(src, i, n) == me) {
          chk.same(seen[static_cast<std::size_t>(src)][static_cast<std::size_t>(i)], 0, i,
                   "message", "times received before");
          seen[static_cast<std::size_t>(src)][static_cast<std::size_t>(i)] = 1;
          chk.data(b + 1, kCount - 1, src, i, kTag);
        } else {
          chk.fail(i, "a message from %d numbered %d was not sent to this rank", src, i);
        }
        ++got;
        post(index);
      }
      if (sreq != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&sreq, &done, MPI_STATUS_IGNORE);
        if (done) chk.intact(sbuf.data() + 1, kCount - 1, sent_to, next - 1, kTag);
      }
      poll.tick();
    }
    // Everything sent to this rank has arrived: the receives still posted can only be cancelled.
    for (int r = 0; r < kRecvs; ++r) {
      MPI_Cancel(&rreq[static_cast<std::size_t>(r)]);
      MPI_Status st;
      MPI_Wait(&rreq[static_cast<std::size_t>(r)], &st);
      int cancelled = 0;
      MPI_Test_cancelled(&st, &cancelled);
      chk.same(cancelled, 1, messages, "receive left posted", "MPI_Test_cancelled");
    }
  });
}
