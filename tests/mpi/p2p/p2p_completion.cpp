// Messages processed as they arrive. Every iteration receives from the D = min(n-1, 3) ranks to
// the left (from rank-d: tag 40+d, one of them 10 KB) and sends to the D ranks to the right, then
// completes them in one of five ways, changing every 5 iterations and differing between
// neighbouring ranks:
//   0  MPI_Waitany over the receives, then MPI_Waitall over the sends
//   1  MPI_Testsome over everything
//   2  MPI_Testany over the receives, then MPI_Test on each send until it completes
//   3  MPI_Test round-robin over the receives only, then MPI_Waitall over the sends
//   4  MPI_Waitsome over everything
// Ways 2 and 3 never block on a send before every receive arrived: a library that deferred the
// sends until a blocking completion would leave every rank polling forever.
// The request array holds MPI_REQUEST_NULL at [0] and between receives and sends; every index
// reported must be an active one reported once, and a last call on an array with nothing active
// must answer MPI_UNDEFINED (with an empty status where it returns one).
//   p2p_completion [--iterations N] [--inject-fault]
#include <algorithm>
#include <vector>

#include "p2p_util.hpp"

namespace {

int count_from(int d) { return d == 2 ? 2500 : 4 + 9 * d; }

class Iteration {
 public:
  Iteration(p2p::Checker& chk, int it, int depth) : chk_(chk), it_(it), depth_(depth) {
    const int me = chk.rank(), n = chk.size();
    // Layout: [null, receives d=1..D, null, sends d=1..D]
    msgs_.resize(static_cast<std::size_t>(2 * depth + 2));
    for (int d = 1; d <= depth; ++d) {
      msgs_[slot_recv(d)] = p2p::incoming(p2p::ring(me, -d, n), 40 + d, count_from(d));
      msgs_[slot_send(d)] = p2p::outgoing(p2p::ring(me, d, n), 40 + d, count_from(d));
    }
    reqs_.assign(msgs_.size(), MPI_REQUEST_NULL);
    done_.assign(msgs_.size(), false);
    for (int d = 1; d <= depth; ++d) post(slot_recv(d));
    for (int d = 1; d <= depth; ++d) post(slot_send(d));
  }

  void run(int way) {
    const int all = static_cast<int>(reqs_.size()), recv_end = depth_ + 1;
    const int active = 2 * depth_;
    std::vector<int> idx(reqs_.size());
    std::vector<MPI_Status> st(reqs_.size());
    MPI_Status one;
    int index = 0, flag = 0, out = 0;
    switch (way) {
      case 0:
        for (int k = 0; k < depth_; ++k) {
          MPI_Waitany(recv_end, reqs_.data(), &index, &one);
          finish(index, &one);
        }
        MPI_Waitany(recv_end, reqs_.data(), &index, &one);
        chk_.same(index, MPI_UNDEFINED, it_, "MPI_Waitany with no active request", "index");
        chk_.empty_status(one, it_, "MPI_Waitany with no active request");
        MPI_Waitall(all - recv_end, reqs_.data() + recv_end, st.data());
        for (int s = recv_end; s < all; ++s) finish_null(s, &st[s - recv_end]);
        break;
      case 1:
      case 4: {
        p2p::Poll poll(chk_, it_, way == 1 ? "MPI_Testsome loop" : "MPI_Waitsome loop");
        for (int finished = 0; finished < active; poll.tick()) {
          if (way == 1) {
            MPI_Testsome(all, reqs_.data(), &out, idx.data(), st.data());
          } else {
            MPI_Waitsome(all, reqs_.data(), &out, idx.data(), st.data());
          }
          if (!chk_.same(out != MPI_UNDEFINED, 1, it_, "MPI_Testsome/Waitsome", "outcount defined"))
            return;
          for (int k = 0; k < out; ++k) finish(idx[k], &st[k]);
          finished += out;
        }
        if (way == 1) {
          MPI_Testsome(all, reqs_.data(), &out, idx.data(), st.data());
        } else {
          MPI_Waitsome(all, reqs_.data(), &out, idx.data(), st.data());
        }
        chk_.same(out, MPI_UNDEFINED, it_, "MPI_Testsome/Waitsome with no active request",
                  "outcount");
        break;
      }
      case 2: {
        p2p::Poll poll(chk_, it_, "MPI_Testany loop");
        for (int finished = 0; finished < depth_; poll.tick()) {
          MPI_Testany(recv_end, reqs_.data(), &index, &flag, &one);
          if (flag && chk_.same(index != MPI_UNDEFINED, 1, it_, "MPI_Testany", "index defined")) {
            finish(index, &one);
            ++finished;
          } else if (flag) {
            return;
          }
        }
        MPI_Testany(recv_end, reqs_.data(), &index, &flag, &one);
        chk_.same(flag, 1, it_, "MPI_Testany with no active request", "flag");
        chk_.same(index, MPI_UNDEFINED, it_, "MPI_Testany with no active request", "index");
        chk_.empty_status(one, it_, "MPI_Testany with no active request");
        for (int s = recv_end + 1; s < all; ++s) {
          p2p::Poll send_poll(chk_, it_, "MPI_Test loop on a send");
          for (flag = 0; !flag; send_poll.tick()) MPI_Test(&reqs_[s], &flag, &one);
          finish_null(s, &one);
        }
        break;
      }
      default: {
        p2p::Poll poll(chk_, it_, "MPI_Test round-robin over the receives");
        for (int finished = 0; finished < depth_; poll.tick()) {
          for (int s = 1; s < recv_end; ++s) {
            if (reqs_[s] == MPI_REQUEST_NULL) continue;
            MPI_Test(&reqs_[s], &flag, &one);
            if (flag) {
              finish_null(s, &one);
              ++finished;
            }
          }
        }
        MPI_Test(&reqs_[0], &flag, &one);
        chk_.same(flag, 1, it_, "MPI_Test on MPI_REQUEST_NULL", "flag");
        chk_.empty_status(one, it_, "MPI_Test on MPI_REQUEST_NULL");
        MPI_Waitall(all - recv_end, reqs_.data() + recv_end, st.data());
        for (int s = recv_end; s < all; ++s) finish_null(s, &st[s - recv_end]);
      }
    }
    for (std::size_t s = 0; s < msgs_.size(); ++s)
      if (msgs_[s].peer != MPI_PROC_NULL)
        chk_.same(done_[s], 1, it_, "every request", "reported complete");
  }

 private:
  std::size_t slot_recv(int d) const { return static_cast<std::size_t>(d); }
  std::size_t slot_send(int d) const { return static_cast<std::size_t>(depth_ + 1 + d); }

  void post(std::size_t s) {
    msgs_[s].post(it_);
    reqs_[s] = msgs_[s].req;
    if (!msgs_[s].send) chk_.expect_messages(1);
  }

  // Request s was reported complete with status st.
  void finish(int s, const MPI_Status* st) {
    if (s < 0 || s >= static_cast<int>(msgs_.size()) || msgs_[s].peer == MPI_PROC_NULL) {
      chk_.fail(it_, "completion reported index %d, which was never active", s);
      return;
    }
    if (done_[s]) {
      chk_.fail(it_, "completion reported index %d twice", s);
      return;
    }
    done_[s] = true;
    chk_.same(reqs_[s] == MPI_REQUEST_NULL, 1, it_, "completed request", "freed");
    msgs_[s].check(chk_, msgs_[s].send ? nullptr : st, it_);
  }
  // Request s was completed by a call on it alone (MPI_Test, MPI_Waitall): only if it was active.
  void finish_null(int s, const MPI_Status* st) {
    if (msgs_[s].peer != MPI_PROC_NULL) finish(s, st);
  }

  p2p::Checker& chk_;
  int it_;
  int depth_;
  std::vector<p2p::Message> msgs_;  // default Messages (peer MPI_PROC_NULL) in the null slots
  std::vector<MPI_Request> reqs_;
  std::vector<bool> done_;
};

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_completion", 40, [](p2p::Checker& chk) {
    const int depth = std::min(chk.size() - 1, 3);
    for (int it = 0; it < chk.iterations(); ++it) {
      Iteration iteration(chk, it, depth);
      iteration.run((it / 5 + chk.rank()) % 5);
    }
  });
}
