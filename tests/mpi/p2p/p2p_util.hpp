#pragma once
// Shared by the point-to-point corpus (tests/mpi/p2p): the contents every message must have, a
// checker that compares each received element and status field with its definition and prints
// the program's one result line, and a watchdog for polling loops.
//
// Every program runs unchanged natively and with libcommsched preloaded; it must print
// "<name>: ok checksum=<16 hex digits> messages=<n>" on rank 0, with the same checksum in both
// runs (the checksum sums hashes of what was received, so it does not depend on completion
// order), or "<name>: FAIL ..." and exit 1. `--inject-fault` makes the checker see one wrong
// element on the last rank in the last iteration: the FAIL path is exercised by its own tests.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_test_util.hpp"

namespace p2p {

/// Element k of the message `src` sends `dst` in iteration `iter` under `key` (its tag, or a
/// number that tells apart messages of one tag).
inline int value(int src, int dst, int iter, int key, int k) {
  auto u = [](int v) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)); };
  const std::uint64_t h = (((u(src) * 1009U + u(dst)) * 65537U + u(iter)) * 131U + u(key));
  return static_cast<int>(mpi_test::mix64(h * 1000003U + u(k)) & 0x7fffffffU);
}

/// Writes the n elements of that message into buf.
inline void fill(int* buf, int n, int src, int dst, int iter, int key) {
  for (int k = 0; k < n; ++k) buf[k] = value(src, dst, iter, key, k);
}

/// Ring neighbour of `rank` at signed distance `d` among `size` ranks.
inline int ring(int rank, int d, int size) { return ((rank + d) % size + size) % size; }

/// Compares what this rank received with its definition, counts mismatches and checked
/// messages, and prints the program's result line (one per program, on every rank).
class Checker {
 public:
  /// Reads `--iterations N` (else `default_iterations`) and `--inject-fault` from argv.
  Checker(const char* name, int argc, char** argv, int default_iterations)
      : name_(name), iterations_(default_iterations) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    for (int a = 1; a < argc; ++a) {
      if (std::strcmp(argv[a], "--iterations") == 0 && a + 1 < argc) {
        iterations_ = std::atoi(argv[++a]);
      } else if (std::strcmp(argv[a], "--inject-fault") == 0) {
        fault_armed_ = true;
      }
    }
  }
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int iterations() const { return iterations_; }
  const char* name() const { return name_; }

  /// This rank must check `n` more messages with data() before finish().
  void expect_messages(long n) { expected_ += n; }

  /// `got` holds the n elements this rank received from `src` in `iter` under `key` (the tag,
  /// or a number that tells messages of one tag apart); each must equal
  /// value(src, rank, iter, key, k). Counts one checked message.
  void data(const int* got, int n, int src, int iter, int key) {
    ++messages_;
    for (int k = 0; k < n; ++k) {
      int g = got[k];
      if (fault_armed_ && rank_ == size_ - 1 && iter >= iterations_ - 1) {
        g ^= 1;  // --inject-fault: as if one element arrived wrong
        fault_armed_ = false;
      }
      const int want = value(src, rank_, iter, key, k);
      sum_ += mpi_test::mix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(g)) << 20) ^
                              (static_cast<std::uint64_t>(k) << 4));
      if (g != want)
        fail(iter, "from %d key %d element %d of %d: got %d, want %d", src, key, k, n, g, want);
    }
  }

  /// A send buffer after completion: still the n elements this rank sent `dst` (the library must
  /// never write into it).
  void intact(const int* buf, int n, int dst, int iter, int key) {
    for (int k = 0; k < n; ++k)
      if (buf[k] != value(rank_, dst, iter, key, k)) {
        fail(iter, "send buffer to %d key %d changed at element %d", dst, key, k);
        return;
      }
  }

  /// A receive's status: source, tag, MPI_Get_count in `type` units, and not cancelled.
  void status(const MPI_Status& st, int source, int tag, int count, MPI_Datatype type, int iter,
              const char* what) {
    int cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    same(cancelled, 0, iter, what, "MPI_Test_cancelled");
    envelope(st, source, tag, count, type, iter, what);
  }

  /// MPI_SOURCE, MPI_TAG and MPI_Get_count in `type` units only (MPI_Probe's status: MPICH
  /// leaves its cancelled flag unset).
  void envelope(const MPI_Status& st, int source, int tag, int count, MPI_Datatype type, int iter,
                const char* what) {
    int n = -1;
    MPI_Get_count(&st, type, &n);
    same(st.MPI_SOURCE, source, iter, what, "MPI_SOURCE");
    same(st.MPI_TAG, tag, iter, what, "MPI_TAG");
    same(n, count, iter, what, "MPI_Get_count");
    sum_ += mpi_test::mix64(
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(st.MPI_SOURCE)) << 40) ^
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(st.MPI_TAG)) << 20) ^
        static_cast<std::uint64_t>(n));
  }

  /// The empty status MPI defines for null and inactive requests: MPI_ANY_SOURCE, MPI_ANY_TAG,
  /// count 0, not cancelled.
  void empty_status(const MPI_Status& st, int iter, const char* what) {
    int n = -1, cancelled = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    MPI_Test_cancelled(&st, &cancelled);
    same(st.MPI_SOURCE, MPI_ANY_SOURCE, iter, what, "empty MPI_SOURCE");
    same(st.MPI_TAG, MPI_ANY_TAG, iter, what, "empty MPI_TAG");
    same(n, 0, iter, what, "empty MPI_Get_count");
    same(cancelled, 0, iter, what, "empty MPI_Test_cancelled");
  }

  /// Compares one value; returns whether it matched.
  bool same(long got, long want, int iter, const char* what, const char* field = "value") {
    if (got == want) return true;
    fail(iter, "%s %s: got %ld, want %ld", what, field, got, want);
    return false;
  }

  /// Records a mismatch (printed on stderr for the first few).
  [[gnu::format(printf, 3, 4)]] void fail(int iter, const char* fmt, ...) {
    if (++errors_ > 10) return;
    char text[400];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    std::fprintf(stderr, "%s: FAIL rank %d iteration %d: %s\n", name_, rank_, iter, text);
  }

  /// Collective over MPI_COMM_WORLD: prints the result line on rank 0 and returns main's exit
  /// status (the same on every rank).
  int finish() {
    if (messages_ != expected_)
      fail(iterations_, "checked %ld messages, expected %ld", messages_, expected_);
    long local[2] = {errors_, messages_};
    long total[2] = {0, 0};
    MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    std::uint64_t sum = 0;
    MPI_Allreduce(&sum_, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) {
      if (total[0] == 0) {
        std::printf("%s: ok checksum=%016llx messages=%ld\n", name_,
                    static_cast<unsigned long long>(sum), total[1]);
      } else {
        std::printf("%s: FAIL %ld mismatches\n", name_, total[0]);
      }
      std::fflush(stdout);
    }
    return total[0] == 0 ? 0 : 1;
  }

 private:
  const char* name_;
  int rank_ = 0;
  int size_ = 1;
  int iterations_;
  bool fault_armed_ = false;
  long errors_ = 0;
  long messages_ = 0;
  long expected_ = 0;
  std::uint64_t sum_ = 0;
};

/// Guards a polling loop (MPI_Test, MPI_Iprobe, ...): a loop that makes no progress for
/// kLimitSeconds is a deadlock the library caused; say so and end the job rather than wait for
/// the launcher's timeout. The only MPI_Abort in the corpus: the test program's own.
class Poll {
 public:
  static constexpr double kLimitSeconds = 30.0;
  Poll(const Checker& chk, int iter, const char* what)
      : chk_(chk), iter_(iter), what_(what), start_(std::chrono::steady_clock::now()) {}
  void tick() {
    if (++ticks_ % 64 != 0) return;
    std::this_thread::yield();  // oversubscribed: let the rank we wait for run
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start_;
    if (waited.count() < kLimitSeconds) return;
    std::printf("%s: FAIL rank %d iteration %d: %s made no progress in %.0f s\n", chk_.name(),
                chk_.rank(), iter_, what_, kLimitSeconds);
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

 private:
  const Checker& chk_;
  int iter_;
  const char* what_;
  std::chrono::steady_clock::time_point start_;
  long ticks_ = 0;
};

/// World rank of `rank` in `comm` (its remote group for an intercommunicator).
inline int world_rank(MPI_Comm comm, int rank) {
  if (rank < 0 || comm == MPI_COMM_WORLD) return rank;  // MPI_PROC_NULL, MPI_ANY_SOURCE
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Group group, world;
  if (inter) {
    MPI_Comm_remote_group(comm, &group);
  } else {
    MPI_Comm_group(comm, &group);
  }
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int out = MPI_UNDEFINED;
  MPI_Group_translate_ranks(group, 1, &rank, world, &out);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}

/// The status native MPI gives a nonblocking receive from MPI_PROC_NULL, asked through PMPI so
/// the library is not involved. MPI says source MPI_PROC_NULL and tag MPI_ANY_TAG (Open MPI);
/// MPICH 4.0's ch4 device answers 0 and 0. The library must answer as native MPI does.
inline const MPI_Status& proc_null_status() {
  static const MPI_Status native = [] {
    int unused = 0;
    MPI_Request req;
    MPI_Status st;
    PMPI_Irecv(&unused, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req);
    PMPI_Wait(&req, &st);
    return st;
  }();
  return native;
}

/// How a Message is sent.
enum class Mode { standard, sync, ready, buffered };

/// One message of a burst as one rank sees it: a send to or a receive from `peer` (a rank of
/// `comm`, or MPI_PROC_NULL). Its contents are value(sender, receiver, iter, tag, k) with world
/// ranks, so a message that lands in the wrong receive is caught.
struct Message {
  bool send = false;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  int key = 0;       // value()'s key: the tag unless messages of one tag must differ
  int count = 0;     // elements sent
  int capacity = 0;  // elements a receive accepts (>= count)
  MPI_Comm comm = MPI_COMM_WORLD;
  int sender = MPI_PROC_NULL;
  int receiver = MPI_PROC_NULL;
  Mode mode = Mode::standard;
  std::vector<int> buf;
  MPI_Request req = MPI_REQUEST_NULL;

  /// Fills a send's buffer for `iter` (a receive's with -1) and posts it.
  void post(int iter) {
    prepare(iter);
    if (!send) {
      MPI_Irecv(buf.data(), capacity, MPI_INT, peer, tag, comm, &req);
      return;
    }
    switch (mode) {
      case Mode::standard:
        MPI_Isend(buf.data(), count, MPI_INT, peer, tag, comm, &req);
        break;
      case Mode::sync:
        MPI_Issend(buf.data(), count, MPI_INT, peer, tag, comm, &req);
        break;
      case Mode::ready:
        MPI_Irsend(buf.data(), count, MPI_INT, peer, tag, comm, &req);
        break;
      case Mode::buffered:
        MPI_Ibsend(buf.data(), count, MPI_INT, peer, tag, comm, &req);
        break;
    }
  }

  /// Creates the persistent request (MPI_Send_init, MPI_Recv_init) over this message's buffer;
  /// each MPI_Start sends or receives what prepare() last put there.
  void init_persistent() {
    if (send) {
      MPI_Send_init(buf.data(), count, MPI_INT, peer, tag, comm, &req);
    } else {
      MPI_Recv_init(buf.data(), capacity, MPI_INT, peer, tag, comm, &req);
    }
  }

  /// Sets the buffer up for `iter` without posting (persistent requests are started instead).
  void prepare(int iter) {
    if (send) {
      fill(buf.data(), count, sender, receiver, iter, key);
    } else {
      std::fill(buf.begin(), buf.end(), -1);
    }
  }

  /// After completion: a receive's status (unless `st` is null) and data, a send's buffer intact.
  void check(Checker& chk, const MPI_Status* st, int iter) const {
    if (send) {
      if (peer != MPI_PROC_NULL) chk.intact(buf.data(), count, receiver, iter, key);
      return;
    }
    char what[80];
    std::snprintf(what, sizeof what, "receive from %d tag %d", peer, tag);
    if (peer == MPI_PROC_NULL) {
      // Whatever native MPI answers (see proc_null_status), and an untouched buffer.
      if (st) {
        const MPI_Status& want = proc_null_status();
        chk.envelope(*st, want.MPI_SOURCE, want.MPI_TAG, 0, MPI_INT, iter, what);
      }
      for (std::size_t k = 0; k < buf.size(); ++k)
        if (!chk.same(buf[k], -1, iter, what, "untouched element")) break;
      chk.data(buf.data(), 0, sender, iter, key);
      return;
    }
    if (st) chk.status(*st, peer, tag, count, MPI_INT, iter, what);
    chk.data(buf.data(), count, sender, iter, key);
    for (int k = count; k < capacity; ++k)
      if (!chk.same(buf[static_cast<std::size_t>(k)], -1, iter, what, "element past the message"))
        break;
  }
};

/// This rank's send of `count` elements to `peer` of `comm` with `tag`.
inline Message outgoing(int peer, int tag, int count, MPI_Comm comm = MPI_COMM_WORLD,
                        Mode mode = Mode::standard) {
  Message m;
  m.send = true;
  m.peer = peer;
  m.tag = tag;
  m.key = tag;
  m.count = count;
  m.capacity = count;
  m.comm = comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &m.sender);
  m.receiver = world_rank(comm, peer);
  m.mode = mode;
  m.buf.assign(static_cast<std::size_t>(count > 0 ? count : 1), 0);
  return m;
}

/// This rank's receive of `count` elements (into room for `capacity`, at least `count`) from
/// `peer` of `comm` with `tag`.
inline Message incoming(int peer, int tag, int count, MPI_Comm comm = MPI_COMM_WORLD,
                        int capacity = 0) {
  Message m;
  m.peer = peer;
  m.tag = tag;
  m.key = tag;
  m.count = peer == MPI_PROC_NULL ? 0 : count;
  m.capacity = capacity > count ? capacity : count;
  m.comm = comm;
  m.sender = world_rank(comm, peer);
  MPI_Comm_rank(MPI_COMM_WORLD, &m.receiver);
  m.buf.assign(static_cast<std::size_t>(m.capacity > 0 ? m.capacity : 1), -1);
  return m;
}

/// Posts every message of `burst` for `iter` in order and gathers their requests into `reqs`.
inline void post_all(std::vector<Message>& burst, int iter, std::vector<MPI_Request>& reqs) {
  reqs.clear();
  for (Message& m : burst) {
    m.post(iter);
    reqs.push_back(m.req);
  }
}

/// Checks every message of `burst` after completion; `st` is null (statuses ignored) or one
/// status per message.
inline void check_all(Checker& chk, const std::vector<Message>& burst, const MPI_Status* st,
                      int iter) {
  for (std::size_t i = 0; i < burst.size(); ++i) burst[i].check(chk, st ? &st[i] : nullptr, iter);
}

/// Number of receives in `burst` (each is one message data() counts).
inline long receives(const std::vector<Message>& burst) {
  long n = 0;
  for (const Message& m : burst) n += m.send ? 0 : 1;
  return n;
}

/// Completes every request of `reqs`: one MPI_Waitall when `waitall`, else MPI_Waitany until
/// none is active. Either way st[i] ends as the status of reqs[i].
inline void complete_all(Checker& chk, int iter, bool waitall, std::vector<MPI_Request>& reqs,
                         std::vector<MPI_Status>& st) {
  const int count = static_cast<int>(reqs.size());
  st.resize(reqs.size());
  if (waitall) {
    MPI_Waitall(count, reqs.data(), st.data());
    return;
  }
  for (int k = 0; k < count; ++k) {
    int index = MPI_UNDEFINED;
    MPI_Status one;
    MPI_Waitany(count, reqs.data(), &index, &one);
    if (index == MPI_UNDEFINED) {
      chk.fail(iter, "MPI_Waitany answered MPI_UNDEFINED with requests active");
      return;
    }
    st[static_cast<std::size_t>(index)] = one;
  }
}

/// MPI_Init, a Checker, `body(chk)`, the result line, MPI_Finalize: a corpus program's main.
template <typename Body>
int run(int argc, char** argv, const char* name, int default_iterations, Body body) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Checker chk(name, argc, argv, default_iterations);
    body(chk);
    status = chk.finish();
  }
  MPI_Finalize();
  return status;
}

}  // namespace p2p
