/* A tiny MPI program that repeats one irregular MPI_Alltoallv: every rank sends q % 4 + 1
 * integers to each other rank q (nothing to itself). Linked with commsched (see
 * link_cmake/ and link_pkgconfig/) it is intercepted exactly as when preloaded: run it with
 * COMMSCHED_REPORT=report.json and the report lists the pattern. Prints "exchange ok" when every
 * received integer is the one sent. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int* scount = calloc((size_t)n, sizeof(int));
  int* rcount = calloc((size_t)n, sizeof(int));
  int* sdispl = calloc((size_t)n, sizeof(int));
  int* rdispl = calloc((size_t)n, sizeof(int));
  for (int d = 1; d < n; ++d) {
    scount[(rank + d) % n] = (rank + d) % n % 4 + 1;   /* what rank sends to rank + d */
    rcount[(rank - d + n) % n] = (rank) % 4 + 1;       /* what rank - d sends to rank */
  }
  int stotal = 0, rtotal = 0;
  for (int p = 0; p < n; ++p) {
    sdispl[p] = stotal;
    rdispl[p] = rtotal;
    stotal += scount[p];
    rtotal += rcount[p];
  }
  int* sbuf = malloc(sizeof(int) * (size_t)(stotal + 1));
  int* rbuf = malloc(sizeof(int) * (size_t)(rtotal + 1));
  int errors = 0;
  for (int it = 0; it < 20; ++it) {
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < scount[p]; ++k) sbuf[sdispl[p] + k] = it * 1000000 + rank * 1000 + k;
    MPI_Alltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < rcount[p]; ++k)
        if (rbuf[rdispl[p] + k] != it * 1000000 + p * 1000 + k) ++errors;
  }
  int total = 0;
  MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf(total == 0 ? "exchange ok\n" : "exchange FAILED: %d errors\n", total);
  free(scount); free(rcount); free(sdispl); free(rdispl); free(sbuf); free(rbuf);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
