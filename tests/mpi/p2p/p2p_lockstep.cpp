// The lockstep exchange level collective is for, and the trap it must not fall into. Every
// iteration: a reverse-ring burst (receive from the right, send 17 ints to the left), one
// MPI_Waitall, one MPI_Allreduce; the library learns the burst and the Allreduce between bursts,
// every rank votes yes, and the bursts run as collective exchanges. Halfway (3 ranks or more)
// rank 0 blocks in MPI_Recv from rank 1 before its burst, and rank 1 sends that message only
// after its own burst, which natively completes without rank 0 (it receives from rank 2, and its
// eager send to rank 0 needs no receive). A library that made rank 1's burst wait for rank 0
// would deadlock here; it must settle the promised burst natively, leave the level, and finish
// the remaining iterations correctly. --on dup runs the bursts on a duplicate of
// MPI_COMM_WORLD, --on split on a communicator made by MPI_Comm_split with one colour (both
// congruent to it), --on parity on each rank's half of a split by rank parity (the ring runs
// within each half): level collective runs bursts on all three. --on part runs them on a split
// that leaves the last rank out: that rank makes no burst, so none can run collectively, and the
// others must still finish. The trap stays on MPI_COMM_WORLD.
//   p2p_lockstep [--iterations N] [--inject-fault] [--on world|dup|split|parity|part]
#include <cstring>
#include <string>
#include <vector>

#include "p2p_util.hpp"

int main(int argc, char** argv) {
  std::string on = "world";
  for (int a = 1; a + 1 < argc; ++a)
    if (std::strcmp(argv[a], "--on") == 0) on = argv[a + 1];
  return p2p::run(argc, argv, "p2p_lockstep", 40, [&on](p2p::Checker& chk) {
    MPI_Comm comm = MPI_COMM_WORLD;
    if (on == "dup") MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (on == "split") MPI_Comm_split(MPI_COMM_WORLD, 0, chk.rank(), &comm);
    if (on == "parity") MPI_Comm_split(MPI_COMM_WORLD, chk.rank() % 2, chk.rank(), &comm);
    if (on == "part")
      MPI_Comm_split(MPI_COMM_WORLD, chk.rank() + 1 < chk.size() ? 0 : MPI_UNDEFINED, chk.rank(),
                     &comm);
    std::vector<p2p::Message> burst;
    constexpr int kCount = 17, kTag = 20, kTrapTag = 99;
    if (comm != MPI_COMM_NULL) {
      int rank = 0, size = 1;
      MPI_Comm_rank(comm, &rank);
      MPI_Comm_size(comm, &size);
      burst = {p2p::incoming(p2p::ring(rank, 1, size), kTag, kCount, comm),
               p2p::outgoing(p2p::ring(rank, -1, size), kTag, kCount, comm)};
    }
    std::vector<MPI_Request> reqs;
    std::vector<MPI_Status> st(burst.size());
    const int trap = chk.size() >= 3 ? chk.iterations() / 2 : -1;
    for (int it = 0; it < chk.iterations(); ++it) {
      if (it == trap && chk.rank() == 0) {
        int got[kCount];
        MPI_Status rs;
        MPI_Recv(got, kCount, MPI_INT, 1, kTrapTag, MPI_COMM_WORLD, &rs);
        chk.data(got, kCount, 1, it, kTrapTag);
        chk.status(rs, 1, kTrapTag, kCount, MPI_INT, it, "trap MPI_Recv");
        chk.expect_messages(1);
      }
      p2p::post_all(burst, it, reqs);
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data());
      p2p::check_all(chk, burst, st.data(), it);
      chk.expect_messages(p2p::receives(burst));
      if (it == trap && chk.rank() == 1) {
        int out[kCount];
        p2p::fill(out, kCount, 1, 0, it, kTrapTag);
        MPI_Send(out, kCount, MPI_INT, 0, kTrapTag, MPI_COMM_WORLD);
      }
      long mine = it + chk.rank(), sum = 0;
      MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      const long n = chk.size();
      chk.same(sum, n * it + n * (n - 1) / 2, it, "MPI_Allreduce");
    }
    if (comm != MPI_COMM_WORLD && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  });
}
