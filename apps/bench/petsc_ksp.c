/* petsc_ksp: a PETSc KSP solve on an unstructured-looking matrix, for the application tier
 * (apps/bench/apps.py, "petsc" and "petsc-neighbor"). Written only against PETSc's public API.
 *
 * The matrix is the 2-D 5-point Laplacian (Dirichlet) of an n x n grid whose unknowns are
 * renumbered: the grid is cut into rectangular tiles of pseudo-random widths and heights
 * (-tile_min to -tile_max points), the tiles are shuffled (fixed seed: every run builds the same
 * matrix) and the points of each tile are numbered row by row. The rows are split into
 * contiguous blocks, one per rank (PETSc's default layout), so a rank owns pieces of tiles all
 * over the grid and MatMult's ghost exchange reaches most other ranks with uneven sizes, as on a
 * partitioned unstructured mesh.
 *
 * The ghost exchange of every product:
 *   -exchange sf         PETSc's own MatMult (MPIAIJ) and its PetscSF; -sf_type basic (default,
 *                        persistent point-to-point) or -sf_type neighbor
 *                        (MPI_Ineighbor_alltoallv). PETSc's -sf_type alltoall only serves graphs
 *                        set with PetscSFSetGraphWithPattern (one unit to every rank): on
 *                        MatMult's general graph it moves the wrong data, so it is refused.
 *   -exchange alltoallv  the same arithmetic (MPIAIJ's diagonal block times the owned values plus
 *                        its off-diagonal block times the ghosts, in PETSc's ghost order) with the
 *                        ghosts fetched by one blocking MPI_Alltoallv per product, as codes with
 *                        their own halo exchange do.
 *
 * CG with Jacobi solves A x = b (b = 1) for exactly -its iterations (relative tolerance 1e-30: it
 * never stops early). Output: the sizes, the exchange's shape (ghosts and peers per rank), one
 * checksum line (iterations, 2-norm and sum of the solution, final residual, 15 digits: the same
 * for every exchange whenever each delivers the same data), the solve's own time (PetscTime,
 * between barriers), and "petsc_ksp ok" when the solve ran its iterations and the numbers are
 * finite. Every PETSc option passes through (-ksp_*, -pc_*, -sf_*, -log_view).
 *
 *   mpirun -np P petsc_ksp [-n 1000] [-its 1000] [-tile_min 4] [-tile_max 32]
 *                          [-exchange sf|alltoallv] [-sf_type basic|neighbor]
 */
#include <petscksp.h>
#include <petscbt.h>

/* -exchange alltoallv: a shell operator around the assembled MPIAIJ matrix. Same data, same
 * operations as MatMult_MPIAIJ: the solution is bit-identical to PETSc's own product. */
typedef struct {
  Mat          A, Ad, Ao; /* the matrix, its diagonal and off-diagonal blocks */
  Vec          xloc, yloc, ghost;
  PetscMPIInt *scount, *sdispl, *rcount, *rdispl;
  PetscInt    *sidx, nsend; /* local offsets of the values each peer needs, peer after peer */
  PetscScalar *sbuf;
} Exchange;

static PetscErrorCode ExchangeMult(Mat S, Vec x, Vec y) {
  Exchange          *e;
  const PetscScalar *xa;
  PetscScalar       *ya, *ga;
  PetscInt           k;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(S, &e));
  PetscCall(VecGetArrayRead(x, &xa));
  for (k = 0; k < e->nsend; k++) e->sbuf[k] = xa[e->sidx[k]];
  PetscCall(VecGetArrayWrite(e->ghost, &ga));
  PetscCallMPI(MPI_Alltoallv(e->sbuf, e->scount, e->sdispl, MPIU_SCALAR, ga, e->rcount, e->rdispl,
                             MPIU_SCALAR, PetscObjectComm((PetscObject)S)));
  PetscCall(VecRestoreArrayWrite(e->ghost, &ga));
  PetscCall(VecGetArray(y, &ya));
  PetscCall(VecPlaceArray(e->xloc, xa));
  PetscCall(VecPlaceArray(e->yloc, ya));
  PetscCall(MatMult(e->Ad, e->xloc, e->yloc));
  PetscCall(MatMultAdd(e->Ao, e->ghost, e->yloc, e->yloc));
  PetscCall(VecResetArray(e->xloc));
  PetscCall(VecResetArray(e->yloc));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExchangeCreate(Mat A, Exchange *e, Mat *S) {
  MPI_Comm        comm = PetscObjectComm((PetscObject)A);
  const PetscInt *garray, *ranges;
  PetscInt        m, ng, k, rstart;
  PetscMPIInt     size, r;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  e->A = A;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &e->Ad, &e->Ao, &garray));
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCall(MatGetOwnershipRanges(A, &ranges));
  PetscCall(MatGetLocalSize(e->Ao, NULL, &ng));
  PetscCall(
      PetscCalloc4(size, &e->scount, size + 1, &e->sdispl, size, &e->rcount, size + 1, &e->rdispl));
  for (k = 0, r = 0; k < ng; k++) {
    PetscCheck(k == 0 || garray[k] > garray[k - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "ghost columns not sorted");
    while (garray[k] >= ranges[r + 1]) r++;
    e->rcount[r]++;
  }
  PetscCallMPI(MPI_Alltoall(e->rcount, 1, MPI_INT, e->scount, 1, MPI_INT, comm));
  for (r = 0; r < size; r++) {
    e->sdispl[r + 1] = e->sdispl[r] + e->scount[r];
    e->rdispl[r + 1] = e->rdispl[r] + e->rcount[r];
  }
  e->nsend = e->sdispl[size];
  PetscCall(PetscMalloc2(e->nsend, &e->sidx, e->nsend, &e->sbuf));
  PetscCallMPI(MPI_Alltoallv(garray, e->rcount, e->rdispl, MPIU_INT, e->sidx, e->scount, e->sdispl,
                             MPIU_INT, comm));
  for (k = 0; k < e->nsend; k++) e->sidx[k] -= rstart;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, ng, &e->ghost));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, m, NULL, &e->xloc));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, m, NULL, &e->yloc));
  PetscCall(MatCreateShell(comm, m, m, PETSC_DETERMINE, PETSC_DETERMINE, e, S));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT, (void (*)(void))ExchangeMult));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExchangeDestroy(Exchange *e) {
  PetscFunctionBeginUser;
  PetscCall(VecDestroy(&e->ghost));
  PetscCall(VecDestroy(&e->xloc));
  PetscCall(VecDestroy(&e->yloc));
  PetscCall(PetscFree2(e->sidx, e->sbuf));
  PetscCall(PetscFree4(e->scount, e->sdispl, e->rcount, e->rdispl));
  PetscFunctionReturn(0);
}

/* A small deterministic generator (splitmix64): the same sequence on every rank and run. */
static PetscInt64 next_u64(unsigned long long *s) {
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (PetscInt64)((z ^ (z >> 31)) >> 1);
}

/* Cuts [0, n) into pieces of lo..hi points (the last may be shorter); returns their count and
 * the cut positions in cuts[0..count]. */
static PetscInt make_cuts(PetscInt n, PetscInt lo, PetscInt hi, unsigned long long *seed,
                          PetscInt *cuts) {
  PetscInt k = 0, x = 0;
  cuts[k++] = 0;
  while (x < n) {
    x += lo + (PetscInt)(next_u64(seed) % (hi - lo + 1));
    if (x > n) x = n;
    cuts[k++] = x;
  }
  return k - 1;
}

int main(int argc, char **argv) {
  PetscInt           n = 1000, its = 1000, tmin = 4, tmax = 32, nx, ny, ntiles, *xc, *yc, *tiles;
  PetscInt           N, *old2new, *new2old, rstart, rend, next, i, t, col[5], ncol, done;
  PetscInt64         ghosts = 0, nbrs = 0, g[4], gmin[4], gmax[4];
  const PetscInt    *ranges;
  PetscScalar        val[5], sum;
  PetscReal          xnorm, rnorm;
  PetscMPIInt        size, r;
  unsigned long long seed = 20240527ULL;
  PetscLogDouble     t0, t1;
  Mat                A, op, S = NULL;
  Exchange           ex;
  char               exchange[64] = "sf";
  Vec                x, b, res;
  KSP                ksp;
  PC                 pc;
  KSPConvergedReason reason;
  char               sftype[64] = "basic";

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-its", &its, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-tile_min", &tmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-tile_max", &tmax, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-sf_type", sftype, sizeof sftype, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-exchange", exchange, sizeof exchange, NULL));
  PetscCheck(!strcmp(exchange, "sf") || !strcmp(exchange, "alltoallv"), PETSC_COMM_WORLD,
             PETSC_ERR_ARG_OUTOFRANGE, "-exchange sf|alltoallv");
  PetscCheck(strcmp(sftype, "alltoall"), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-sf_type alltoall is for pattern SFs only; -exchange alltoallv puts MatMult's ghost "
             "exchange on MPI_Alltoallv");
  PetscCheck(n > 1 && its > 0 && tmin > 0 && tmax >= tmin, PETSC_COMM_WORLD,
             PETSC_ERR_ARG_OUTOFRANGE, "need -n > 1, -its > 0, 0 < -tile_min <= -tile_max");
  N = n * n;

  /* The renumbering, built identically on every rank. */
  PetscCall(PetscMalloc2(n + 2, &xc, n + 2, &yc));
  nx = make_cuts(n, tmin, tmax, &seed, xc);
  ny = make_cuts(n, tmin, tmax, &seed, yc);
  ntiles = nx * ny;
  PetscCall(PetscMalloc1(ntiles, &tiles));
  for (t = 0; t < ntiles; t++) tiles[t] = t;
  for (t = ntiles - 1; t > 0; t--) { /* Fisher-Yates */
    PetscInt j = (PetscInt)(next_u64(&seed) % (t + 1)), tmp = tiles[t];
    tiles[t] = tiles[j];
    tiles[j] = tmp;
  }
  PetscCall(PetscMalloc2(N, &old2new, N, &new2old));
  next = 0;
  for (t = 0; t < ntiles; t++) {
    PetscInt tx = tiles[t] % nx, ty = tiles[t] / nx, gx, gy;
    for (gy = yc[ty]; gy < yc[ty + 1]; gy++)
      for (gx = xc[tx]; gx < xc[tx + 1]; gx++) {
        old2new[gy * n + gx] = next;
        new2old[next++] = gy * n + gx;
      }
  }
  PetscCheck(next == N, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
             "renumbering covers %" PetscInt_FMT " of %" PetscInt_FMT " points", next, N);

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 5, NULL, 4, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetOwnershipRanges(A, &ranges));
  for (i = rstart; i < rend; i++) {
    PetscInt o = new2old[i], gx = o % n, gy = o / n;
    ncol = 0;
    col[ncol] = i;
    val[ncol++] = 4.0;
    if (gx > 0) {
      col[ncol] = old2new[o - 1];
      val[ncol++] = -1.0;
    }
    if (gx < n - 1) {
      col[ncol] = old2new[o + 1];
      val[ncol++] = -1.0;
    }
    if (gy > 0) {
      col[ncol] = old2new[o - n];
      val[ncol++] = -1.0;
    }
    if (gy < n - 1) {
      col[ncol] = old2new[o + n];
      val[ncol++] = -1.0;
    }
    PetscCall(MatSetValues(A, 1, &i, ncol, col, val, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

  /* The exchange's shape: ghost columns of this rank and the ranks that own them. */
  {
    PetscBT seen, peer;
    PetscCall(PetscBTCreate(N, &seen));
    PetscCall(PetscBTCreate(size, &peer));
    for (i = rstart; i < rend; i++) {
      PetscInt o = new2old[i], gx = o % n, gy = o / n, k, c[4];
      ncol = 0;
      if (gx > 0) c[ncol++] = old2new[o - 1];
      if (gx < n - 1) c[ncol++] = old2new[o + 1];
      if (gy > 0) c[ncol++] = old2new[o - n];
      if (gy < n - 1) c[ncol++] = old2new[o + n];
      for (k = 0; k < ncol; k++) {
        if (c[k] >= rstart && c[k] < rend) continue;
        if (PetscBTLookupSet(seen, c[k])) continue;
        ghosts++;
        for (r = 0; r < size && !(c[k] >= ranges[r] && c[k] < ranges[r + 1]); r++) {}
        if (!PetscBTLookupSet(peer, r)) nbrs++;
      }
    }
    PetscCall(PetscBTDestroy(&seen));
    PetscCall(PetscBTDestroy(&peer));
  }
  g[0] = ghosts, g[1] = nbrs, g[2] = -ghosts, g[3] = -nbrs;
  PetscCallMPI(MPI_Allreduce(g, gmax, 4, MPIU_INT64, MPI_MAX, PETSC_COMM_WORLD));
  for (i = 0; i < 4; i++) gmin[i] = -gmax[(i + 2) % 4];
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc_ksp grid=%" PetscInt_FMT "x%" PetscInt_FMT " rows=%" PetscInt_FMT
                        " tiles=%" PetscInt_FMT " ranks=%d\n",
                        n, n, N, ntiles, size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc_ksp exchange ghosts_per_rank=%" PetscInt64_FMT "..%" PetscInt64_FMT
                        " peers_per_rank=%" PetscInt64_FMT "..%" PetscInt64_FMT "\n",
                        gmin[0], gmax[0], gmin[1], gmax[1]));
  PetscCall(PetscFree2(old2new, new2old));
  PetscCall(PetscFree(tiles));
  PetscCall(PetscFree2(xc, yc));

  op = A;
  if (!strcmp(exchange, "alltoallv")) {
    PetscCall(ExchangeCreate(A, &ex, &S));
    op = S;
  }
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &res));
  PetscCall(VecSet(b, 1.0));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, op, A)); /* Jacobi takes the diagonal of A */
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, 1e-30, 1e-300, PETSC_DEFAULT, its));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t1));

  PetscCall(KSPGetIterationNumber(ksp, &done));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(VecNorm(x, NORM_2, &xnorm));
  PetscCall(VecSum(x, &sum));
  PetscCall(MatMult(op, x, res));
  PetscCall(VecAYPX(res, -1.0, b));
  PetscCall(VecNorm(res, NORM_2, &rnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc_ksp checksum iterations=%" PetscInt_FMT
                        " reason=%s norm_x=%.15e sum_x=%.15e residual=%.15e\n",
                        done, KSPConvergedReasons[reason], (double)xnorm,
                        (double)PetscRealPart(sum), (double)rnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "petsc_ksp exchange=%s sf_type=%s solve_s=%.6f per_iteration_ms=%.4f\n",
                        exchange, !strcmp(exchange, "sf") ? sftype : "-", t1 - t0,
                        1e3 * (t1 - t0) / (done > 0 ? done : 1)));
  if (done == its && !PetscIsInfOrNanReal(xnorm) && !PetscIsInfOrNanReal(rnorm) && rnorm > 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc_ksp ok\n"));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&res));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  if (S) {
    PetscCall(MatDestroy(&S));
    PetscCall(ExchangeDestroy(&ex));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
