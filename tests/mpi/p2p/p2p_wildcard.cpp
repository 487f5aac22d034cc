// Wildcard receives (which must leave a burst native) next to named ones in the same burst. Each
// iteration, with D = min(n-1, 3):
//   A  world, tag 40: rank s sends the D ranks to its right 3 + (5s mod 11) ints; each rank posts
//      D receives from MPI_ANY_SOURCE (room for 20) and identifies each message by its status
//   B  communicator b, MPI_ANY_TAG from the right neighbour, which sends tag 50 + (its rank mod 4)
//   C  communicator c, MPI_ANY_SOURCE and MPI_ANY_TAG: the same senders as A, tag 60 + (s mod 5)
//   D  world, named: the ring halo, tags 70 and 71
// Every wildcard status must name a sender that really sent to this rank (once), with the tag
// and MPI_Get_count that sender uses; the elements past the message must stay untouched.
// Completion: MPI_Waitall with statuses on even iterations, an MPI_Waitany loop on odd ones; an
// MPI_Barrier ends each iteration.
//   p2p_wildcard [--iterations N] [--inject-fault]
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kRoom = 20;
int count_a(int src) { return 3 + (5 * src) % 11; }
int tag_b(int src) { return 50 + src % 4; }
int tag_c(int src) { return 60 + src % 5; }

// What a wildcard receive must hold: one of `senders` (each at most once), sending with
// tag_of(sender) and count_of(sender).
struct Wildcard {
  const char* what;
  std::vector<int> senders;  // world ranks that send this rank one message each
  int (*tag_of)(int);
  int (*count_of)(int);
  std::vector<bool> seen;

  void check(p2p::Checker& chk, const p2p::Message& m, const MPI_Status& st, int it,
             MPI_Comm comm) {
    const auto pos = std::find(senders.begin(), senders.end(), st.MPI_SOURCE);
    if (pos == senders.end()) {
      chk.fail(it, "%s: MPI_SOURCE %d did not send this rank a message", what, st.MPI_SOURCE);
      return;
    }
    const std::size_t i = static_cast<std::size_t>(pos - senders.begin());
    if (seen[i]) chk.fail(it, "%s: two messages with MPI_SOURCE %d", what, st.MPI_SOURCE);
    seen[i] = true;
    const int src = st.MPI_SOURCE, tag = tag_of(src), n = count_of(src);
    chk.status(st, src, tag, n, MPI_INT, it, what);
    chk.data(m.buf.data(), n, p2p::world_rank(comm, src), it, tag);
    for (int k = n; k < kRoom; ++k)
      if (!chk.same(m.buf[static_cast<std::size_t>(k)], -1, it, what, "element past the message"))
        break;
  }
};

int ten_plus_tag_b(int src) { return 10 + tag_b(src) % 4; }

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_wildcard", 40, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int depth = std::min(n - 1, 3);
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    MPI_Comm comm_b, comm_c;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_b);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_c);
    for (int it = 0; it < chk.iterations(); ++it) {
      // Receives first (wildcards interleaved with named ones), then sends.
      std::vector<p2p::Message> burst;
      std::vector<int> kind;  // 'A', 'B', 'C', 'D' for each message
      auto add = [&](p2p::Message m, int k) {
        burst.push_back(std::move(m));
        kind.push_back(k);
      };
      Wildcard wa{"A: MPI_ANY_SOURCE receive", {}, [](int) { return 40; }, count_a, {}};
      Wildcard wb{"B: MPI_ANY_TAG receive", {right}, tag_b, ten_plus_tag_b, {}};
      Wildcard wc{"C: MPI_ANY_SOURCE+MPI_ANY_TAG receive", {}, tag_c, count_a, {}};
      for (int d = 1; d <= depth; ++d) {
        wa.senders.push_back(p2p::ring(me, -d, n));
        wc.senders.push_back(p2p::ring(me, -d, n));
        add(p2p::incoming(MPI_ANY_SOURCE, 40, 0, MPI_COMM_WORLD, kRoom), 'A');
        if (d == 1) add(p2p::incoming(left, 70, 12), 'D');
        add(p2p::incoming(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, comm_c, kRoom), 'C');
      }
      wa.seen.assign(wa.senders.size(), false);
      wb.seen.assign(1, false);
      wc.seen.assign(wc.senders.size(), false);
      add(p2p::incoming(right, MPI_ANY_TAG, 0, comm_b, kRoom), 'B');
      add(p2p::incoming(right, 71, 5), 'D');
      for (int d = 1; d <= depth; ++d) {
        const int to = p2p::ring(me, d, n);
        add(p2p::outgoing(to, 40, count_a(me)), 'A');
        add(p2p::outgoing(to, tag_c(me), count_a(me), comm_c), 'C');
      }
      add(p2p::outgoing(left, tag_b(me), ten_plus_tag_b(me), comm_b), 'B');
      add(p2p::outgoing(right, 70, 12), 'D');
      add(p2p::outgoing(left, 71, 5), 'D');

      std::vector<MPI_Request> reqs;
      p2p::post_all(burst, it, reqs);
      std::vector<MPI_Status> st;
      p2p::complete_all(chk, it, it % 2 == 0, reqs, st);
      for (std::size_t i = 0; i < burst.size(); ++i) {
        const p2p::Message& m = burst[i];
        if (m.send || kind[i] == 'D') {
          m.check(chk, &st[i], it);
        } else if (kind[i] == 'A') {
          wa.check(chk, m, st[i], it, MPI_COMM_WORLD);
        } else if (kind[i] == 'B') {
          wb.check(chk, m, st[i], it, comm_b);
        } else {
          wc.check(chk, m, st[i], it, comm_c);
        }
        if (!m.send) chk.expect_messages(1);
      }
      // Without it a rank could send its next iteration's messages while a receiver still has
      // wildcard receives of this one open, which could then match them (MPI allows that).
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&comm_b);
    MPI_Comm_free(&comm_c);
  });
}
