// Deadlock traps for a library that defers sends: in each step a rank posts an MPI_Isend and
// then blocks (or polls) in a call that can only return once a neighbour got a message, so a
// deferred send must be released by that call. Every iteration runs five steps:
//   a  MPI_Isend right (tag 90) and left (89), then blocking MPI_Recv from the right (89) and
//      from the left (90; MPI_ANY_SOURCE on odd iterations), then MPI_Waitall on the sends;
//   b  pairs (0,1), (2,3), ...: one partner posts MPI_Isend, enters a collective, then waits on
//      the send; the other waits on its receive before entering the collective. Roles swap
//      every iteration; the collective rotates: MPI_Barrier, MPI_Allreduce, MPI_Alltoallv (which
//      the library intercepts), MPI_Ibarrier + MPI_Wait, MPI_Bcast;
//   c  MPI_Isend right (tag 92, a count the receiver learns by probing), then, on communicator
//      c: an MPI_Iprobe loop + MPI_Recv; MPI_Probe(MPI_ANY_SOURCE) + MPI_Recv; an MPI_Improbe
//      loop + MPI_Mrecv; MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Imrecv + MPI_Wait;
//   d  MPI_Irecv left and MPI_Isend right on tag 93, then MPI_Sendrecv right/left on the same
//      tag (its receive must get the second message: the MPI_Irecv was posted first) and
//      MPI_Sendrecv left/right on tag 94, then MPI_Waitall;
//   e  pairs again: one partner sends MPI_Isend (tag 96) then a blocking MPI_Ssend (tag 97);
//      the other receives 96 then 97 with MPI_Recv: the MPI_Ssend returns only after the
//      partner got the deferred message.
//   p2p_traps [--iterations N] [--inject-fault]
#include <vector>

#include "p2p_util.hpp"

namespace {

struct Ctx {
  p2p::Checker& chk;
  int me, n, left, right, partner;  // partner: -1 for the last rank of an odd count
  MPI_Comm comm_c;
};

void blocking_receive(Ctx& c, int it) {
  p2p::Message to_right = p2p::outgoing(c.right, 90, 50), to_left = p2p::outgoing(c.left, 89, 20);
  p2p::Message from_right = p2p::incoming(c.right, 89, 20),
               from_left = p2p::incoming(c.left, 90, 50);
  MPI_Request reqs[2];
  to_right.post(it);
  to_left.post(it);
  reqs[0] = to_right.req;
  reqs[1] = to_left.req;
  MPI_Status st;
  MPI_Recv(from_right.buf.data(), 20, MPI_INT, c.right, 89, MPI_COMM_WORLD, &st);
  from_right.check(c.chk, &st, it);
  MPI_Recv(from_left.buf.data(), 50, MPI_INT, it % 2 ? MPI_ANY_SOURCE : c.left, 90, MPI_COMM_WORLD,
           &st);
  from_left.check(c.chk, &st, it);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  to_right.check(c.chk, nullptr, it);
  to_left.check(c.chk, nullptr, it);
  c.chk.expect_messages(2);
}

// The collective of step b in iteration it, with its own result checked.
void collective(Ctx& c, int it) {
  switch (it % 5) {
    case 0:
      MPI_Barrier(MPI_COMM_WORLD);
      break;
    case 1: {
      long mine = c.me + it, sum = 0;
      MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      c.chk.same(sum, static_cast<long>(c.n) * (c.n - 1) / 2 + static_cast<long>(c.n) * it, it,
                 "MPI_Allreduce", "sum");
      break;
    }
    case 2: {
      std::vector<int> counts(c.n, 1), displs(c.n), out(c.n), in(c.n, -1);
      for (int j = 0; j < c.n; ++j) {
        displs[j] = j;
        out[j] = p2p::value(c.me, j, it, 200, 0);
      }
      MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), counts.data(),
                    displs.data(), MPI_INT, MPI_COMM_WORLD);
      for (int j = 0; j < c.n; ++j)
        c.chk.same(in[j], p2p::value(j, c.me, it, 200, 0), it, "MPI_Alltoallv");
      break;
    }
    case 3: {
      MPI_Request barrier;
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      MPI_Wait(&barrier, MPI_STATUS_IGNORE);
      break;
    }
    default: {
      const int root = it % c.n;
      int v = c.me == root ? p2p::value(root, root, it, 201, 0) : -1;
      MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD);
      c.chk.same(v, p2p::value(root, root, it, 201, 0), it, "MPI_Bcast");
    }
  }
}

void send_then_collective(Ctx& c, int it) {
  if (c.partner < 0) {
    collective(c, it);
    return;
  }
  if (c.me % 2 == it % 2) {
    p2p::Message m = p2p::outgoing(c.partner, 91, 30);
    m.post(it);
    collective(c, it);
    MPI_Wait(&m.req, MPI_STATUS_IGNORE);
    m.check(c.chk, nullptr, it);
  } else {
    p2p::Message m = p2p::incoming(c.partner, 91, 30);
    m.post(it);
    MPI_Status st;
    MPI_Wait(&m.req, &st);
    m.check(c.chk, &st, it);
    c.chk.expect_messages(1);
    collective(c, it);
  }
}

void probes(Ctx& c, int it) {
  const int mine = 10 + c.me % 5, theirs = 10 + c.left % 5;
  p2p::Message out = p2p::outgoing(c.right, 92, mine, c.comm_c);
  out.post(it);
  p2p::Message in = p2p::incoming(c.left, 92, theirs, c.comm_c);
  MPI_Status probed, st;
  int flag = 0, count = -1;
  MPI_Message msg = MPI_MESSAGE_NULL;
  const int way = it % 4;
  if (way == 0 || way == 2) {
    p2p::Poll poll(c.chk, it, way == 0 ? "MPI_Iprobe loop" : "MPI_Improbe loop");
    for (; !flag; poll.tick()) {
      if (way == 0) {
        MPI_Iprobe(c.left, 92, c.comm_c, &flag, &probed);
      } else {
        MPI_Improbe(c.left, 92, c.comm_c, &flag, &msg, &probed);
      }
    }
  } else if (way == 1) {
    MPI_Probe(MPI_ANY_SOURCE, 92, c.comm_c, &probed);
  } else {
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c.comm_c, &msg, &probed);
  }
  c.chk.envelope(probed, c.left, 92, theirs, MPI_INT, it, "probe");
  MPI_Get_count(&probed, MPI_INT, &count);
  if (count < 0 || count > theirs) count = theirs;  // already reported; keep the buffer safe
  if (way == 0 || way == 1) {
    MPI_Recv(in.buf.data(), count, MPI_INT, probed.MPI_SOURCE, probed.MPI_TAG, c.comm_c, &st);
  } else if (way == 2) {
    MPI_Mrecv(in.buf.data(), count, MPI_INT, &msg, &st);
  } else {
    MPI_Request req;
    MPI_Imrecv(in.buf.data(), count, MPI_INT, &msg, &req);
    MPI_Wait(&req, &st);
  }
  c.chk.same(msg == MPI_MESSAGE_NULL, 1, it, "matched message", "handle nulled");
  in.check(c.chk, &st, it);
  c.chk.expect_messages(1);
  MPI_Wait(&out.req, MPI_STATUS_IGNORE);
  out.check(c.chk, nullptr, it);
}

void sendrecv_inside(Ctx& c, int it) {
  // The first message on tag 93 (15 ints) is the MPI_Isend's, the second (16) the MPI_Sendrecv's.
  p2p::Message first_in = p2p::incoming(c.left, 93, 15, MPI_COMM_WORLD, 16);
  p2p::Message first_out = p2p::outgoing(c.right, 93, 15);
  p2p::Message second_in = p2p::incoming(c.left, 93, 16);
  p2p::Message second_out = p2p::outgoing(c.right, 93, 16);
  second_in.key = second_out.key = 93 * 8 + 1;
  p2p::Message third_in = p2p::incoming(c.right, 94, 9), third_out = p2p::outgoing(c.left, 94, 9);
  first_in.post(it);
  first_out.post(it);
  second_out.prepare(it);
  third_out.prepare(it);
  MPI_Status st[2];
  MPI_Sendrecv(second_out.buf.data(), 16, MPI_INT, c.right, 93, second_in.buf.data(), 16, MPI_INT,
               c.left, 93, MPI_COMM_WORLD, &st[0]);
  second_in.check(c.chk, &st[0], it);
  MPI_Sendrecv(third_out.buf.data(), 9, MPI_INT, c.left, 94, third_in.buf.data(), 9, MPI_INT,
               c.right, 94, MPI_COMM_WORLD, &st[0]);
  third_in.check(c.chk, &st[0], it);
  MPI_Request reqs[2] = {first_in.req, first_out.req};
  MPI_Waitall(2, reqs, st);
  first_in.check(c.chk, &st[0], it);
  first_out.check(c.chk, nullptr, it);
  c.chk.expect_messages(3);
}

void send_then_ssend(Ctx& c, int it) {
  if (c.partner < 0) return;
  if (c.me % 2 == it % 2) {
    p2p::Message first = p2p::outgoing(c.partner, 96, 12), second = p2p::outgoing(c.partner, 97, 3);
    first.post(it);
    second.prepare(it);
    MPI_Ssend(second.buf.data(), 3, MPI_INT, c.partner, 97, MPI_COMM_WORLD);
    MPI_Wait(&first.req, MPI_STATUS_IGNORE);
    first.check(c.chk, nullptr, it);
  } else {
    p2p::Message first = p2p::incoming(c.partner, 96, 12), second = p2p::incoming(c.partner, 97, 3);
    MPI_Status st;
    MPI_Recv(first.buf.data(), 12, MPI_INT, c.partner, 96, MPI_COMM_WORLD, &st);
    first.check(c.chk, &st, it);
    MPI_Recv(second.buf.data(), 3, MPI_INT, c.partner, 97, MPI_COMM_WORLD, &st);
    second.check(c.chk, &st, it);
    c.chk.expect_messages(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_traps", 30, [](p2p::Checker& chk) {
    Ctx c{chk, chk.rank(), chk.size(), 0, 0, -1, MPI_COMM_NULL};
    c.left = p2p::ring(c.me, -1, c.n);
    c.right = p2p::ring(c.me, 1, c.n);
    const int partner = c.me ^ 1;
    c.partner = partner < c.n ? partner : -1;
    MPI_Comm_dup(MPI_COMM_WORLD, &c.comm_c);
    for (int it = 0; it < chk.iterations(); ++it) {
      blocking_receive(c, it);
      send_then_collective(c, it);
      probes(c, it);
      sendrecv_inside(c, it);
      send_then_ssend(c, it);
    }
    MPI_Comm_free(&c.comm_c);
  });
}
