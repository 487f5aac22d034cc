// Non-lockstep exchanges: ranks complete the same ring halo differently and some carry requests
// others do not, so the bursts differ from rank to rank.
//   rank % 3 == 0 waits on each request alone, last posted first; == 1 calls MPI_Waitall once;
//   == 2 waits on each receive alone, then calls MPI_Waitall over the whole array (whose entries
//   for the finished receives must come back as empty statuses).
//   Ranks 0 and n-1 exchange an extra message every iteration; rank 1 sends rank 0 one more
//   every third iteration; even ranks send themselves a message (MPI_Isend posted before its
//   MPI_Irecv) and run a second ring, with the world ring's tag, on a communicator of the even
//   ranks.
// Two later phases: from iters/2 rank 1 keeps an MPI_ANY_SOURCE receive outstanding across
// iterations (rank 0 satisfies it at 3*iters/4 - 1), so its outstanding requests never drop to
// zero; from 3*iters/4 every rank posts the next iteration's receives before it completes its
// sends (pipelined, double-buffered), so no burst ever ends.
//   p2p_uneven [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kTagRight = 10, kTagLeft = 11, kTagPartner = 20, kTagExtra = 21, kTagSelf = 30,
              kTagBackground = 99, kBackgroundCount = 7;

struct Ranks {
  int me, n, left, right, partner;  // partner: the rank of the every-iteration extra, or -1
  MPI_Comm evens;                   // MPI_COMM_NULL on odd ranks
  int even_me, even_n;
};

std::vector<p2p::Message> burst_for(const Ranks& r, int it, bool background_send) {
  std::vector<p2p::Message> b = {
      p2p::incoming(r.left, kTagRight, 40), p2p::incoming(r.right, kTagLeft, 23),
      p2p::outgoing(r.right, kTagRight, 40), p2p::outgoing(r.left, kTagLeft, 23)};
  if (r.partner >= 0) {
    b.push_back(p2p::incoming(r.partner, kTagPartner, 8));
    b.push_back(p2p::outgoing(r.partner, kTagPartner, 8));
  }
  if (it % 3 == 0 && r.me == 0) b.push_back(p2p::incoming(1, kTagExtra, 5));
  if (it % 3 == 0 && r.me == 1) b.push_back(p2p::outgoing(0, kTagExtra, 5));
  if (r.me % 2 == 0) {
    b.push_back(p2p::outgoing(r.me, kTagSelf, 6));
    b.push_back(p2p::incoming(r.me, kTagSelf, 6));
  }
  if (r.evens != MPI_COMM_NULL && r.even_n >= 2) {
    b.push_back(p2p::incoming(p2p::ring(r.even_me, -1, r.even_n), kTagRight, 9, r.evens));
    b.push_back(p2p::outgoing(p2p::ring(r.even_me, 1, r.even_n), kTagRight, 9, r.evens));
  }
  if (background_send) b.push_back(p2p::outgoing(1, kTagBackground, kBackgroundCount));
  return b;
}

// Completes `reqs` the way rank r.me does and leaves one status per request in `st`.
void complete(p2p::Checker& chk, const Ranks& r, const std::vector<p2p::Message>& burst,
              std::vector<MPI_Request>& reqs, std::vector<MPI_Status>& st, int it) {
  const int count = static_cast<int>(reqs.size());
  st.resize(reqs.size());
  switch (r.me % 3) {
    case 0:
      for (int i = count - 1; i >= 0; --i) MPI_Wait(&reqs[i], &st[i]);
      break;
    case 1:
      MPI_Waitall(count, reqs.data(), st.data());
      break;
    default: {
      for (int i = 0; i < count; ++i)
        if (!burst[i].send) MPI_Wait(&reqs[i], &st[i]);
      std::vector<MPI_Status> all(reqs.size());
      MPI_Waitall(count, reqs.data(), all.data());
      for (int i = 0; i < count; ++i) {
        if (burst[i].send) {
          st[i] = all[i];
        } else {
          chk.empty_status(all[i], it, "MPI_Waitall entry of a finished receive");
        }
      }
    }
  }
  for (MPI_Request q : reqs) chk.same(q == MPI_REQUEST_NULL, 1, it, "completion", "request freed");
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_uneven", 48, [](p2p::Checker& chk) {
    Ranks r{};
    r.me = chk.rank();
    r.n = chk.size();
    r.left = p2p::ring(r.me, -1, r.n);
    r.right = p2p::ring(r.me, 1, r.n);
    const int last = r.n - 1;
    r.partner = r.me == 0 ? last : r.me == last ? 0 : -1;
    MPI_Comm_split(MPI_COMM_WORLD, r.me % 2 == 0 ? 0 : MPI_UNDEFINED, r.me, &r.evens);
    if (r.evens != MPI_COMM_NULL) {
      MPI_Comm_rank(r.evens, &r.even_me);
      MPI_Comm_size(r.evens, &r.even_n);
    }
    const int iters = chk.iterations();
    const int background_from = iters / 2, pipeline_from = 3 * iters / 4;
    const int background_at = pipeline_from - 1;  // rank 0 sends it, rank 1 completes it
    p2p::Message background = p2p::incoming(MPI_ANY_SOURCE, kTagBackground, kBackgroundCount);
    background.sender = 0;  // the only rank that sends this tag

    std::vector<MPI_Request> reqs;
    std::vector<MPI_Status> st;
    for (int it = 0; it < pipeline_from; ++it) {
      std::vector<p2p::Message> burst = burst_for(r, it, r.me == 0 && it == background_at);
      p2p::post_all(burst, it, reqs);
      if (r.me == 1 && it == background_from) background.post(background_at);
      complete(chk, r, burst, reqs, st, it);
      p2p::check_all(chk, burst, st.data(), it);
      chk.expect_messages(p2p::receives(burst));
      if (r.me == 1 && it == background_at) {
        MPI_Status bst;
        MPI_Wait(&background.req, &bst);
        chk.status(bst, 0, kTagBackground, kBackgroundCount, MPI_INT, it, "background receive");
        background.peer = 0;  // check() reads the status against the matched source
        background.check(chk, nullptr, it);
        chk.expect_messages(1);
      }
    }

    // Pipelined: receives for it+1 are posted before the sends of it complete.
    std::vector<p2p::Message> recvs[2] = {
        {p2p::incoming(r.left, kTagRight, 40), p2p::incoming(r.right, kTagLeft, 23)},
        {p2p::incoming(r.left, kTagRight, 40), p2p::incoming(r.right, kTagLeft, 23)}};
    std::vector<p2p::Message> sends = {p2p::outgoing(r.right, kTagRight, 40),
                                       p2p::outgoing(r.left, kTagLeft, 23)};
    std::vector<MPI_Request> rreqs[2], sreqs;
    if (pipeline_from < iters)
      p2p::post_all(recvs[pipeline_from % 2], pipeline_from, rreqs[pipeline_from % 2]);
    for (int it = pipeline_from; it < iters; ++it) {
      const int cur = it % 2;
      p2p::post_all(sends, it, sreqs);
      st.resize(recvs[cur].size());
      MPI_Waitall(static_cast<int>(rreqs[cur].size()), rreqs[cur].data(), st.data());
      p2p::check_all(chk, recvs[cur], st.data(), it);
      chk.expect_messages(p2p::receives(recvs[cur]));
      if (it + 1 < iters) p2p::post_all(recvs[1 - cur], it + 1, rreqs[1 - cur]);
      MPI_Waitall(static_cast<int>(sreqs.size()), sreqs.data(), MPI_STATUSES_IGNORE);
      p2p::check_all(chk, sends, nullptr, it);
    }
    if (r.evens != MPI_COMM_NULL) MPI_Comm_free(&r.evens);
  });
}
