/* fftw3d_mpi: repeated 3-D complex transforms with FFTW 3's MPI interface, as a spectral code
 * runs them. Written only against FFTW's public API (fftw3-mpi.h); it never links commsched.
 * FFTW distributes the N x N x N array by slabs of the first dimension and its MPI plans
 * transpose between slab decompositions with MPI_Alltoall (MPI_Alltoallv where the slabs are
 * uneven), so every forward and backward transform repeats the same exchange.
 *
 *   mpirun -np P fftw3d_mpi [n] [repetitions] [wisdom-file]
 *
 * Plans are made with FFTW_MEASURE (FFTW_ESTIMATE never picks the MPI_Alltoall transpose; in
 * place or keeping the input, neither does FFTW_MEASURE). With a wisdom file that exists, rank 0
 * imports it and every rank plans from it, so every run of the same size and rank count
 * executes the same plan and prints the same numbers; without one, the plans are measured and
 * written to that file. Each repetition transforms forward, scales the
 * spectrum by a smooth filter and transforms back. The program prints the time of the
 * repetitions (slowest rank), a checksum of the final field (16 digits: a run with a library
 * preloaded that moves the same bytes must print the same one), and the residual of one plain
 * forward/backward round trip against the input; "fftw3d ok" when that residual is below 1e-10.
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double initial(ptrdiff_t i, ptrdiff_t j, ptrdiff_t k) {
  return sin(0.1 * (double)i + 0.2) * cos(0.3 * (double)j) + 0.01 * (double)((i * 7 + j * 3 + k) % 11);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const ptrdiff_t n = argc > 1 ? atol(argv[1]) : 64;
  const int reps = argc > 2 ? atoi(argv[2]) : 20;

  ptrdiff_t local_n0 = 0, local_0 = 0;
  const ptrdiff_t alloc = fftw_mpi_local_size_3d(n, n, n, MPI_COMM_WORLD, &local_n0, &local_0);
  fftw_complex *data = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  fftw_complex *spec = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  fftw_complex *orig = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  const char *wisdom = argc > 3 ? argv[3] : NULL;
  int have = 0;
  if (wisdom && rank == 0) have = fftw_import_wisdom_from_filename(wisdom);
  MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (have) fftw_mpi_broadcast_wisdom(MPI_COMM_WORLD);
  /* Out of place with the input destroyed: the MPI_Alltoall transpose is then a candidate. */
  const unsigned flags = FFTW_MEASURE | FFTW_DESTROY_INPUT;
  fftw_plan fwd = fftw_mpi_plan_dft_3d(n, n, n, data, spec, MPI_COMM_WORLD, FFTW_FORWARD, flags);
  fftw_plan bwd = fftw_mpi_plan_dft_3d(n, n, n, spec, data, MPI_COMM_WORLD, FFTW_BACKWARD, flags);
  /* Which transposes the plan runs, from FFTW's own description of it. */
  char *desc = fftw_sprint_plan(fwd);
  const char *kind = strstr(desc, "transpose-alltoall")   ? "alltoall"
                     : strstr(desc, "transpose-pairwise") ? "pairwise"
                                                          : "other";
  if (wisdom && !have) {
    fftw_mpi_gather_wisdom(MPI_COMM_WORLD);
    if (rank == 0) fftw_export_wisdom_to_filename(wisdom);
  }
  const ptrdiff_t local = local_n0 * n * n;
  for (ptrdiff_t i = 0; i < local_n0; ++i)
    for (ptrdiff_t j = 0; j < n; ++j)
      for (ptrdiff_t k = 0; k < n; ++k) {
        const ptrdiff_t x = (i * n + j) * n + k;
        orig[x][0] = initial(local_0 + i, j, k);
        orig[x][1] = 0.0;
      }
  const double scale = 1.0 / ((double)n * n * n);

  /* Residual of one round trip. */
  for (ptrdiff_t x = 0; x < local; ++x) { data[x][0] = orig[x][0]; data[x][1] = orig[x][1]; }
  fftw_execute(fwd);
  fftw_execute(bwd);
  double err = 0.0;
  for (ptrdiff_t x = 0; x < local; ++x) {
    err = fmax(err, fabs(data[x][0] * scale - orig[x][0]));
    err = fmax(err, fabs(data[x][1] * scale - orig[x][1]));
  }
  double maxerr = 0.0;
  MPI_Allreduce(&err, &maxerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  /* Timed repetitions: forward, filter, backward. */
  for (ptrdiff_t x = 0; x < local; ++x) { data[x][0] = orig[x][0]; data[x][1] = orig[x][1]; }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int r = 0; r < reps; ++r) {
    fftw_execute(fwd);
    for (ptrdiff_t x = 0; x < local; ++x) {
      const double f = scale * (1.0 - 0.5 * (double)(x % 5) / (double)(5 * (r + 1)));
      spec[x][0] *= f;
      spec[x][1] *= f;
    }
    fftw_execute(bwd);
  }
  double t = MPI_Wtime() - t0, tmax = 0.0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  double sum[2] = {0.0, 0.0}, total[2] = {0.0, 0.0};
  for (ptrdiff_t x = 0; x < local; ++x) {
    sum[0] += data[x][0] * (double)(local_0 * n * n + x + 1);
    sum[1] += fabs(data[x][1]);
  }
  MPI_Reduce(sum, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("fftw3d n=%td ranks=%d repetitions=%d transposes=%s transforms_s=%.6f\n", n, size,
           reps, kind, tmax);
    printf("fftw3d residual=%.3e checksum=%.15e %.15e\n", maxerr, total[0], total[1]);
    printf("fftw3d %s\n", maxerr < 1e-10 ? "ok" : "FAILED");
  }
  free(desc);
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(bwd);
  fftw_free(data);
  fftw_free(spec);
  fftw_free(orig);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return maxerr < 1e-10 ? 0 : 1;
}
