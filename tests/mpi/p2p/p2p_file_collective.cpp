// A collective MPI-IO call in the middle of a burst. Every iteration each rank posts its
// receives from the left neighbour (tags 91 and 92) and its first send to the right (tag 91);
// then odd ranks wait for their tag-91 message before the file call, even ranks go straight
// into it; then each posts its second send (tag 92) and completes the rest. The file call is
// collective: an even rank stays in it until its odd neighbour arrives, and that neighbour waits
// for the even rank's first send. A library that held that send (a learned burst's sends are
// held until its last post) across the file call would deadlock the job; every collective file
// call releases the held sends first. The file calls rotate through MPI_File_write_at_all, the
// split MPI_File_write_at_all_begin/end and MPI_File_read_at_all, which reads back and checks
// what the previous iteration wrote.
//   p2p_file_collective [--iterations N] [--inject-fault]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "p2p_util.hpp"

namespace {

constexpr int kBlock = 4;    // ints each rank writes per iteration
constexpr int kFileKey = 7;  // value()'s key for file contents

// A file name every rank agrees on: rank 0's directory (TMPDIR or /tmp) and process id.
std::string shared_file_name() {
  char name[512] = {};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    const char* dir = std::getenv("TMPDIR");
    std::snprintf(name, sizeof name, "%s/commsched_p2p_file_%ld.bin",
                  dir && *dir ? dir : "/tmp", static_cast<long>(getpid()));
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  return name;
}

MPI_Offset block_offset(int iter, int rank, int size) {
  return static_cast<MPI_Offset>((iter * size + rank) * kBlock) *
         static_cast<MPI_Offset>(sizeof(int));
}

}  // namespace

int main(int argc, char** argv) {
  return p2p::run(argc, argv, "p2p_file_collective", 30, [](p2p::Checker& chk) {
    const int me = chk.rank(), n = chk.size();
    const int left = p2p::ring(me, -1, n), right = p2p::ring(me, 1, n);
    MPI_File fh = MPI_FILE_NULL;
    const std::string name = shared_file_name();
    if (MPI_File_open(MPI_COMM_WORLD, name.c_str(),
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
      chk.fail(0, "MPI_File_open %s failed", name.c_str());
      return;
    }
    for (int it = 0; it < chk.iterations(); ++it) {
      p2p::Message first_in = p2p::incoming(left, 91, 5);
      p2p::Message second_in = p2p::incoming(left, 92, 3);
      p2p::Message first_out = p2p::outgoing(right, 91, 5);
      p2p::Message second_out = p2p::outgoing(right, 92, 3);
      first_in.post(it);
      second_in.post(it);
      first_out.post(it);
      MPI_Status first_status;
      if (me % 2 == 1) MPI_Wait(&first_in.req, &first_status);

      std::vector<int> block(kBlock), back(kBlock, -1);
      p2p::fill(block.data(), kBlock, me, -1, it, kFileKey);
      MPI_Status io;
      switch (it % 3) {
        case 0:
          MPI_File_write_at_all(fh, block_offset(it, me, n), block.data(), kBlock, MPI_INT, &io);
          break;
        case 1:
          MPI_File_write_at_all_begin(fh, block_offset(it, me, n), block.data(), kBlock, MPI_INT);
          MPI_File_write_at_all_end(fh, block.data(), &io);
          break;
        default:
          MPI_File_read_at_all(fh, block_offset(it - 1, me, n), back.data(), kBlock, MPI_INT, &io);
          for (int k = 0; k < kBlock; ++k)
            if (!chk.same(back[static_cast<std::size_t>(k)], p2p::value(me, -1, it - 1, kFileKey, k),
                          it, "file block read back"))
              break;
          break;
      }

      second_out.post(it);
      const bool waited = me % 2 == 1;  // first_in completed before the file call
      std::vector<MPI_Request> reqs{second_in.req, first_out.req, second_out.req};
      if (!waited) reqs.push_back(first_in.req);
      std::vector<MPI_Status> st;
      p2p::complete_all(chk, it, it % 2 == 0, reqs, st);
      first_in.check(chk, waited ? &first_status : &st[3], it);
      second_in.check(chk, &st[0], it);
      first_out.check(chk, &st[1], it);
      second_out.check(chk, &st[2], it);
      chk.expect_messages(2);
    }
    MPI_File_close(&fh);
  });
}
