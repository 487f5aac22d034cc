// Persistent requests. Set A (MPI_Recv_init/MPI_Send_init from and to both ring neighbours, tags
// 10 and 11) is created before the first iteration, before any pattern settles, and started in
// every iteration; set B (the ranks at distance 2, tags 12 and 13, 8 KB one way; itself at 2
// ranks) is created mid-run at iters/3 and started alongside; A is freed at 2*iters/3 and B
// carries on, joined by set C (tag 14), created, started once and freed in every iteration. A
// nonpersistent MPI_Irecv/MPI_Isend pair (tag 15) completes in the same call on odd iterations.
// Even ranks start with one MPI_Startall, odd ones with MPI_Start per request, receives first;
// completion alternates MPI_Waitall and an MPI_Testall loop. A completed persistent request must
// keep its handle and be inactive: MPI_Wait, MPI_Test and MPI_Request_get_status on it return at
// once with an empty status.
//   p2p_persistent [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

struct Set {
  std::vector<p2p::Message> msgs;
  bool live = false;

  void create() {
    for (p2p::Message& m : msgs) m.init_persistent();
    live = true;
  }
  void free(p2p::Checker& chk, int it) {
    for (p2p::Message& m : msgs) {
      MPI_Request_free(&m.req);
      chk.same(m.req == MPI_REQUEST_NULL, 1, it, "MPI_Request_free", "handle nulled");
    }
    live = false;
  }
};

// An inactive persistent request answers every completion call at once, with an empty status.
void check_inactive(p2p::Checker& chk, p2p::Message& m, int it) {
  const MPI_Request handle = m.req;
  MPI_Status st;
  MPI_Wait(&m.req, &st);
  chk.empty_status(st, it, "MPI_Wait on an inactive persistent request");
  int flag = 0;
  MPI_Test(&m.req, &flag, &st);
  chk.same(flag, 1, it, "MPI_Test on an inactive persistent request", "flag");
  chk.empty_status(st, it, "MPI_Test on an inactive persistent request");
  flag = 0;
  MPI_Request_get_status(m.req, &flag, &st);
  chk.same(flag, 1, it, "MPI_Request_get_status on an inactive persistent request", "flag");
  chk.empty_status(st, it, "MPI_Request_get_status on an inactive persistent request");
  chk.same(m.req == handle, 1, it, "inactive persistent request", "handle kept");
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_persistent", 42, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size(), iters = chk.iterations();
    const int l1 = p2p::ring(me, -1, n), r1 = p2p::ring(me, 1, n);
    const int l2 = p2p::ring(me, -2, n), r2 = p2p::ring(me, 2, n);
    const int b_from = iters / 3, a_until = 2 * iters / 3;
    Set a{{p2p::incoming(l1, 10, 30), p2p::incoming(r1, 11, 7), p2p::outgoing(r1, 10, 30),
           p2p::outgoing(l1, 11, 7)}};
    Set b{{p2p::incoming(l2, 12, 2000), p2p::incoming(r2, 13, 9), p2p::outgoing(r2, 12, 2000),
           p2p::outgoing(l2, 13, 9)}};
    a.create();
    for (int it = 0; it < iters; ++it) {
      if (it == b_from) b.create();
      if (it == a_until) a.free(chk, it);
      Set c;
      if (it >= a_until) {
        c.msgs = {p2p::incoming(l1, 14, 5), p2p::outgoing(r1, 14, 5)};
        c.create();
      }
      // Persistent messages, receives before sends within each set.
      std::vector<p2p::Message*> persistent;
      for (Set* s : {&a, &b, &c})
        if (s->live)
          for (p2p::Message& m : s->msgs) persistent.push_back(&m);
      std::vector<MPI_Request> reqs;
      for (p2p::Message* m : persistent) {
        m->prepare(it);
        reqs.push_back(m->req);
      }
      if (me % 2 == 0) {
        MPI_Startall(static_cast<int>(reqs.size()), reqs.data());
      } else {
        for (MPI_Request& q : reqs) MPI_Start(&q);
      }
      std::vector<p2p::Message> once;
      if (it % 2 == 1) once = {p2p::incoming(r1, 15, 3), p2p::outgoing(l1, 15, 3)};
      for (p2p::Message& m : once) {
        m.post(it);
        reqs.push_back(m.req);
      }
      std::vector<MPI_Status> st(reqs.size());
      if ((it / 2) % 2 == 0) {
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      } else {
        p2p::Poll poll(chk, it, "MPI_Testall loop");
        for (int flag = 0; !flag; poll.tick())
          MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &flag, st.data());
      }
      for (std::size_t i = 0; i < reqs.size(); ++i) {
        const bool is_persistent = i < persistent.size();
        p2p::Message& m = is_persistent ? *persistent[i] : once[i - persistent.size()];
        if (is_persistent) {
          chk.same(reqs[i] == m.req, 1, it, "completed persistent request", "handle kept");
        } else {
          chk.same(reqs[i] == MPI_REQUEST_NULL, 1, it, "completed request", "freed");
        }
        m.check(chk, &st[i], it);
        if (!m.send) chk.expect_messages(1);
      }
      check_inactive(chk, *persistent.front(), it);
      if (c.live) c.free(chk, it);
    }
    if (a.live) a.free(chk, iters);
    if (b.live) b.free(chk, iters);
  });
}
