#include "intercept/drs.hpp"

#include <algorithm>
#include <list>
#include <random>
#include <vector>

namespace commsched::intercept {
namespace {

// Tags on the private communicator, apart from the executor's phase tags (< 32000).
constexpr int kDataTag = 32002;
constexpr int kSelfTag = 32003;
constexpr int kAskTag = 32004;    // "may I send to you?" carries the call number
constexpr int kAnswerTag = 32005; // 1: yes, 0: busy (or not in that call yet)

char* message_at(const Side& s, int peer) {
  return s.base + s.displs[static_cast<std::size_t>(peer)] * s.extent;
}

// Where an outgoing message is: the user's buffer with its datatype, or (in place) its packed
// copy, sent as MPI_PACKED, which matches any receive datatype of the same signature.
struct Outgoing {
  void* buf;
  int count;
  MPI_Datatype type;
};
Outgoing outgoing(Side& s, int peer) {
  const auto u = static_cast<std::size_t>(peer);
  if (s.packed)
    return {s.packed_bytes.data() + s.packed_offset[u], s.counts[u] * s.type_size, MPI_PACKED};
  return {message_at(s, peer), s.counts[u], s.type};
}

class Drs {
 public:
  Drs(Side& send, Side& recv, MPI_Comm comm, int rank, int size, std::uint64_t call)
      : send_(send), recv_(recv), comm_(comm), rank_(rank), size_(size),
        call_(static_cast<long long>(call)), data_(static_cast<std::size_t>(size), MPI_REQUEST_NULL) {}

  int run(std::uint64_t seed) {
    // Pre-allocate receiving buffers: post every receive first (Fig. 5).
    for (int j = 0; j < size_; ++j)
      if (j != rank_ && recv_.counts[j] != 0) {
        check(PMPI_Irecv(message_at(recv_, j), recv_.counts[j], recv_.type, j, kDataTag, comm_,
                         &data_[static_cast<std::size_t>(j)]));
        ++expected_;
      }
    check(PMPI_Irecv(&asked_, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, kAskTag, comm_, &ask_));
    if (send_.counts[rank_] != 0) {  // the message to self needs no lock
      const Outgoing o = outgoing(send_, rank_);
      check(PMPI_Sendrecv(o.buf, o.count, o.type, rank_, kSelfTag, message_at(recv_, rank_),
                          recv_.counts[rank_], recv_.type, rank_, kSelfTag, comm_,
                          MPI_STATUS_IGNORE));
    }
    std::vector<int> pending;
    for (int j = 0; j < size_; ++j)
      if (j != rank_ && send_.counts[j] != 0) pending.push_back(j);
    std::mt19937_64 rng(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(rank_ + 1)));
    std::shuffle(pending.begin(), pending.end(), rng);
    std::size_t next = 0;  // round-robin over the destinations still pending
    while (error_ == MPI_SUCCESS && (!pending.empty() || arrived_ < expected_)) {
      if (!pending.empty()) {
        next %= pending.size();
        if (try_send(pending[next])) {
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(next));
          continue;
        }
        ++next;
      }
      serve();
    }
    // Nobody asks for this call any more (every sender to us is done), but a rank already in
    // the next call may have: if the cancel loses that race, refuse it, and the rank asks again.
    check(PMPI_Cancel(&ask_));
    MPI_Status st;
    check(PMPI_Wait(&ask_, &st));
    int cancelled = 0;
    check(PMPI_Test_cancelled(&st, &cancelled));
    if (!cancelled) answer(st.MPI_SOURCE, 0);
    // Our answers complete: every asker posted its receive for the answer before asking.
    for (Answer& a : answers_) check(PMPI_Wait(&a.req, MPI_STATUS_IGNORE));
    return error_;
  }

 private:
  void check(int rc) {
    if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  }

  // Answers requests and frees our lock when the locked sender's message has arrived.
  void serve() {
    if (busy_ >= 0) {
      int done = 0;
      check(PMPI_Test(&data_[static_cast<std::size_t>(busy_)], &done, MPI_STATUS_IGNORE));
      if (done) {
        busy_ = -1;
        ++arrived_;
      }
    }
    int flag = 0;
    MPI_Status st;
    check(PMPI_Test(&ask_, &flag, &st));
    if (!flag || error_ != MPI_SUCCESS) return;
    const int from = st.MPI_SOURCE;
    // Grant only a request of this call, while no other sender holds the lock.
    const int yes = (busy_ < 0 && asked_ == call_) ? 1 : 0;
    if (yes) busy_ = from;
    answer(from, yes);
    check(PMPI_Irecv(&asked_, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, kAskTag, comm_, &ask_));
  }

  // Control messages never block: with synchronous small sends (SMPI, some MPIs), two ranks
  // each blocked sending to the other would wait forever. Finished answers are recycled.
  void answer(int to, int yes) {
    auto it = std::find_if(answers_.begin(), answers_.end(), [this](Answer& a) {
      int done = 1;
      if (a.req != MPI_REQUEST_NULL) check(PMPI_Test(&a.req, &done, MPI_STATUS_IGNORE));
      return done != 0;
    });
    if (it == answers_.end()) it = answers_.emplace(answers_.end());
    it->value = yes;
    check(PMPI_Isend(&it->value, 1, MPI_INT, to, kAnswerTag, comm_, &it->req));
  }

  // Test-and-set `dst`'s lock; on success send the whole message. Serves others while waiting.
  bool try_send(int dst) {
    int granted = 0;
    MPI_Request reply, ask;
    check(PMPI_Irecv(&granted, 1, MPI_INT, dst, kAnswerTag, comm_, &reply));
    check(PMPI_Isend(&call_, 1, MPI_LONG_LONG, dst, kAskTag, comm_, &ask));
    wait_serving(reply);
    wait_serving(ask);  // answered, so it was received
    if (!granted || error_ != MPI_SUCCESS) return false;
    const Outgoing o = outgoing(send_, dst);
    MPI_Request req;
    check(PMPI_Isend(o.buf, o.count, o.type, dst, kDataTag, comm_, &req));
    wait_serving(req);
    return true;
  }

  void wait_serving(MPI_Request& req) {
    int done = 0;
    while (error_ == MPI_SUCCESS) {
      check(PMPI_Test(&req, &done, MPI_STATUS_IGNORE));
      if (done) return;
      serve();
    }
  }

  Side& send_;
  Side& recv_;
  MPI_Comm comm_;
  int rank_, size_;
  long long call_;
  std::vector<MPI_Request> data_;  // by source
  MPI_Request ask_ = MPI_REQUEST_NULL;
  long long asked_ = -1;
  int busy_ = -1;  // the sender holding our lock
  struct Answer {
    MPI_Request req = MPI_REQUEST_NULL;
    int value = 0;
  };
  std::list<Answer> answers_;  // answers in flight (a list: their buffers must not move)
  int expected_ = 0, arrived_ = 0;
  int error_ = MPI_SUCCESS;
};

}  // namespace

int drs_alltoallv(Side& send, Side& recv, MPI_Comm comm, int rank, int size, std::uint64_t call,
                  std::uint64_t seed) {
  return Drs(send, recv, comm, rank, size, call).run(seed);
}

}  // namespace commsched::intercept
