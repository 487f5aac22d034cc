// alltoall_check: every MPI_Alltoall (intercepted when libcommsched is preloaded) is compared
// byte for byte with PMPI_Alltoall (never intercepted) on the same inputs. Each case repeats its
// call often enough for the library to learn the pattern and run it optimised: counts of 1 to
// 1000 integers, in place, a strided derived type sent and received as a contiguous one, zero
// counts, and a sub-communicator. Per call: fresh send data, a canary-filled receive buffer, the
// reference on a separate buffer; bytes no block covers must keep the canary.
//
// Prints one line per failing case and rank, then from rank 0
// "alltoall_check: N passed, M failed"; exits 1 on any failure. Runs on any rank count.
#define OMPI_SKIP_MPICXX 1  // C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

using mpi_test::mix64;

constexpr int kCalls = 12;  // enough for learning at call 3 and a forced strategy's runs
constexpr std::uint8_t kCanary = 0xA5;

struct Case {
  std::string name;
  MPI_Comm comm;
  int count;            // elements of `type` per peer
  MPI_Datatype type;    // send type (and receive type unless `recv_type` is set)
  MPI_Datatype recv_type = MPI_DATATYPE_NULL;
  int recv_count = -1;  // receive count when it differs (same type signature)
  bool in_place = false;
};

// Fills `buf` with values that name the rank, the call and the byte.
void fill(std::vector<std::uint8_t>& buf, int rank, int call) {
  for (std::size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<std::uint8_t>(mix64((static_cast<std::uint64_t>(rank) << 40) ^
                                             (static_cast<std::uint64_t>(call) << 32) ^ i));
}

// Runs one case kCalls times; returns the number of calls whose bytes differed on this rank.
int run_case(const Case& c) {
  int rank = 0, n = 1;
  MPI_Comm_rank(c.comm, &rank);
  MPI_Comm_size(c.comm, &n);
  const MPI_Datatype rtype = c.recv_type == MPI_DATATYPE_NULL ? c.type : c.recv_type;
  const int rcount = c.recv_count < 0 ? c.count : c.recv_count;
  MPI_Aint lb = 0, sext = 0, rext = 0;
  MPI_Type_get_extent(c.type, &lb, &sext);
  MPI_Type_get_extent(rtype, &lb, &rext);
  const auto send_bytes = static_cast<std::size_t>(sext) * static_cast<std::size_t>(c.count) *
                          static_cast<std::size_t>(n);
  const auto recv_bytes = static_cast<std::size_t>(rext) * static_cast<std::size_t>(rcount) *
                          static_cast<std::size_t>(n);
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<std::uint8_t> send(send_bytes + 1), got(recv_bytes + 1, kCanary),
        want(recv_bytes + 1, kCanary);
    fill(send, rank, call);
    int rc_got = MPI_SUCCESS, rc_want = MPI_SUCCESS;
    if (c.in_place) {
      fill(got, rank, call);
      want = got;
      rc_got = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got.data(), rcount, rtype, c.comm);
      rc_want = PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want.data(), rcount, rtype, c.comm);
    } else {
      const std::vector<std::uint8_t> before = send;
      rc_got = MPI_Alltoall(send.data(), c.count, c.type, got.data(), rcount, rtype, c.comm);
      rc_want = PMPI_Alltoall(send.data(), c.count, c.type, want.data(), rcount, rtype, c.comm);
      if (send != before) ++wrong;  // the send buffer must come back unchanged
    }
    if (rc_got != rc_want || got != want) {
      ++wrong;
      std::size_t at = 0;
      while (at < got.size() && got[at] == want[at]) ++at;
      std::printf("alltoall_check: %s rank %d call %d: rc %d/%d, first difference at byte %zu\n",
                  c.name.c_str(), rank, call, rc_got, rc_want, at);
    }
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  // Every other integer of two: extent 3 ints, 2 of them data; received as 2 contiguous ints.
  MPI_Datatype strided = MPI_DATATYPE_NULL, pair = MPI_DATATYPE_NULL;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, n - rank, &half);  // reversed order inside

  std::vector<Case> cases = {
      {"int x1", MPI_COMM_WORLD, 1, MPI_INT},
      {"int x3", MPI_COMM_WORLD, 3, MPI_INT},
      {"int x64", MPI_COMM_WORLD, 64, MPI_INT},
      {"int x1000", MPI_COMM_WORLD, 1000, MPI_INT},
      {"byte x0", MPI_COMM_WORLD, 0, MPI_BYTE},
      {"double x17 in place", MPI_COMM_WORLD, 17, MPI_DOUBLE, MPI_DATATYPE_NULL, -1, true},
      {"strided x5 as pairs", MPI_COMM_WORLD, 5, strided, pair, 5},
      {"pairs x5 as ints", MPI_COMM_WORLD, 5, pair, MPI_INT, 10},
      {"int x40 on half", half, 40, MPI_INT},
  };
  int passed = 0, failed = 0;
  for (const Case& c : cases) {
    const int mine = run_case(c);
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    (any ? failed : passed) += 1;
  }
  MPI_Comm_free(&half);
  MPI_Type_free(&strided);
  MPI_Type_free(&pair);
  if (rank == 0) std::printf("alltoall_check: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
