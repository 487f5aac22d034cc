// Two irregular patterns alternating on one communicator (an FFT's forward and backward
// transposes): both must be learned and run optimised, and every call must equal
// PMPI_Alltoallv byte for byte.
//   alternating [calls]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpi_test_util.hpp"

namespace {

// Pattern `which` (0 or 1): rank i sends (1 + (i*7 + j*3 + which*5) % 4) * 16 bytes to j when
// (i + j + which) % 3 != 0, else nothing.
int count_of(int i, int j, int which) {
  return (i + j + which) % 3 == 0 ? 0 : (1 + (i * 7 + j * 3 + which * 5) % 4) * 16;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  mpi_test::rank_and_size(MPI_COMM_WORLD, rank, size);
  const int calls = argc > 1 ? std::atoi(argv[1]) : 40;
  int failures = 0;
  for (int call = 0; call < calls; ++call) {
    const int which = call % 2;
    if (!mpi_test::alltoallv_as_pmpi(
            MPI_COMM_WORLD, [&](int i, int j) { return count_of(i, j, which); },
            [&](int k) { return static_cast<unsigned char>(rank * 31 + k * 7 + call); })) {
      std::printf("alternating: rank %d call %d differs from PMPI_Alltoallv\n", rank, call);
      ++failures;
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("alternating: %d calls, %d mismatches\n", calls, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
