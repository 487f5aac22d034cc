// Status fields the application reads, exactly as MPI fills them. Every iteration:
//   1  the ring halo (tags 10 and 11 with both neighbours, plus tag 12 with the ranks at
//      distance 2) completed by MPI_Waitall with real statuses (pre-filled with garbage, so
//      each must be written) on even iterations and MPI_STATUSES_IGNORE on odd ones; receive
//      statuses: MPI_SOURCE, MPI_TAG, MPI_Get_count in MPI_INT and in MPI_BYTE, MPI_Get_elements,
//      MPI_Test_cancelled false; send statuses: MPI_Test_cancelled false;
//   2  MPI_Irecv left and MPI_Isend right (tag 20), polled with MPI_Request_get_status, the
//      receive first on odd iterations and the send first on even ones, until each says done.
//      The handles must be unchanged (MPI_Request_get_status frees nothing), the receive's
//      status complete; MPI_Wait afterwards must give the same status and null the handles;
//   3  the halo again, completed by MPI_Waitsome (statuses[i] must belong to indices[i]) on
//      even iterations and an MPI_Testall loop on odd ones; then MPI_Wait with
//      MPI_STATUS_IGNORE on a last receive.
// Polling only receives while the sends sit deferred would hang: MPI_Request_get_status must
// release them like any completion call.
//   p2p_status [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

MPI_Status garbage() {
  MPI_Status s;
  std::memset(&s, 0x5a, sizeof s);
  s.MPI_SOURCE = -77;
  s.MPI_TAG = -77;
  return s;
}

// The extra fields step 1 reads from a receive's status (Checker::status covers the rest).
void extra_fields(p2p::Checker& chk, const p2p::Message& m, const MPI_Status& st, int it) {
  int bytes = -1, elements = -1;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  MPI_Get_elements(&st, MPI_INT, &elements);
  chk.same(bytes, 4L * m.count, it, "receive status", "MPI_Get_count in MPI_BYTE");
  chk.same(elements, m.count, it, "receive status", "MPI_Get_elements");
}

std::vector<p2p::Message> halo(int me, int n) {
  const int l1 = p2p::ring(me, -1, n), r1 = p2p::ring(me, 1, n);
  const int l2 = p2p::ring(me, -2, n), r2 = p2p::ring(me, 2, n);
  return {p2p::incoming(l1, 10, 33), p2p::incoming(r1, 11, 2), p2p::incoming(l2, 12, 1500),
          p2p::outgoing(r1, 10, 33), p2p::outgoing(l1, 11, 2), p2p::outgoing(r2, 12, 1500)};
}

void step_waitall(p2p::Checker& chk, int it) {
  std::vector<p2p::Message> burst = halo(chk.rank(), chk.size());
  std::vector<MPI_Request> reqs;
  p2p::post_all(burst, it, reqs);
  const bool real = it % 2 == 0;
  std::vector<MPI_Status> st(burst.size(), garbage());
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), real ? st.data() : MPI_STATUSES_IGNORE);
  p2p::check_all(chk, burst, real ? st.data() : nullptr, it);
  for (std::size_t i = 0; real && i < burst.size(); ++i) {
    if (burst[i].send) {
      int cancelled = -1;
      MPI_Test_cancelled(&st[i], &cancelled);
      chk.same(cancelled, 0, it, "send status", "MPI_Test_cancelled");
    } else {
      extra_fields(chk, burst[i], st[i], it);
    }
  }
  chk.expect_messages(p2p::receives(burst));
}

// Polls m with MPI_Request_get_status until it is done; the handle must survive.
void poll_until_done(p2p::Checker& chk, p2p::Message& m, MPI_Status* st, int it) {
  const MPI_Request handle = m.req;
  p2p::Poll poll(
      chk, it, m.send ? "MPI_Request_get_status on a send" : "MPI_Request_get_status on a receive");
  for (int flag = 0; !flag; poll.tick())
    MPI_Request_get_status(m.req, &flag, st ? st : MPI_STATUS_IGNORE);
  chk.same(m.req == handle, 1, it, "MPI_Request_get_status", "handle unchanged");
}

void step_get_status(p2p::Checker& chk, int it) {
  const int me = chk.rank(), n = chk.size();
  p2p::Message in = p2p::incoming(p2p::ring(me, -1, n), 20, 14);
  p2p::Message out = p2p::outgoing(p2p::ring(me, 1, n), 20, 14);
  in.post(it);
  out.post(it);
  MPI_Status polled = garbage(), waited = garbage();
  if (it % 2 == 1) {
    poll_until_done(chk, in, &polled, it);
    poll_until_done(chk, out, nullptr, it);
  } else {
    poll_until_done(chk, out, nullptr, it);
    poll_until_done(chk, in, &polled, it);
  }
  in.check(chk, &polled, it);
  MPI_Wait(&in.req, &waited);
  chk.status(waited, in.peer, 20, 14, MPI_INT, it, "MPI_Wait after MPI_Request_get_status");
  MPI_Wait(&out.req, MPI_STATUS_IGNORE);
  chk.same(in.req == MPI_REQUEST_NULL && out.req == MPI_REQUEST_NULL, 1, it, "MPI_Wait",
           "handles nulled");
  chk.expect_messages(1);
}

void step_some(p2p::Checker& chk, int it) {
  std::vector<p2p::Message> burst = halo(chk.rank(), chk.size());
  p2p::Message last = p2p::incoming(p2p::ring(chk.rank(), 1, chk.size()), 13, 6);
  p2p::Message last_out = p2p::outgoing(p2p::ring(chk.rank(), -1, chk.size()), 13, 6);
  std::vector<MPI_Request> reqs;
  p2p::post_all(burst, it, reqs);
  last.post(it);
  last_out.post(it);
  const int count = static_cast<int>(reqs.size());
  std::vector<MPI_Status> st(reqs.size(), garbage());
  if (it % 2 == 0) {
    std::vector<int> idx(reqs.size());
    std::vector<MPI_Status> some(reqs.size(), garbage());
    for (int finished = 0; finished < count;) {
      int out = 0;
      MPI_Waitsome(count, reqs.data(), &out, idx.data(), some.data());
      if (out == MPI_UNDEFINED) {
        chk.fail(it, "MPI_Waitsome answered MPI_UNDEFINED with requests active");
        break;
      }
      for (int k = 0; k < out; ++k) st[idx[k]] = some[k];
      finished += out;
    }
  } else {
    p2p::Poll poll(chk, it, "MPI_Testall loop");
    for (int flag = 0; !flag; poll.tick()) MPI_Testall(count, reqs.data(), &flag, st.data());
  }
  p2p::check_all(chk, burst, st.data(), it);
  MPI_Wait(&last.req, MPI_STATUS_IGNORE);
  last.check(chk, nullptr, it);
  MPI_Wait(&last_out.req, MPI_STATUS_IGNORE);
  chk.expect_messages(p2p::receives(burst) + 1);
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_status", 40, [](p2p::Checker& chk) {
    for (int it = 0; it < chk.iterations(); ++it) {
      step_waitall(chk, it);
      step_get_status(chk, it);
      step_some(chk, it);
    }
  });
}
