"""mpi4py_check: a Python program as mpi4py users write it (mpi4py initialises MPI with
MPI_THREAD_MULTIPLE by default). It repeats Alltoallv, Alltoall, Alltoallw and
Neighbor_alltoallv on numpy arrays often enough for the library to learn each, and compares
every result with the values each rank must receive. Prints "mpi4py_check: N calls, M wrong,
thread level L"; exits 1 on any wrong value.

  mpirun -n 4 python3 mpi4py_check.py [CALLS]"""
import sys
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, n = comm.Get_rank(), comm.Get_size()
calls = int(sys.argv[1]) if len(sys.argv) > 1 else 12
wrong = 0
total = 0


def value(src, dst, it, k):
    return (src * 1000003 + dst * 10007 + it * 101 + k) % 2147483647


def counts(src, dst):
    return (src * 3 + dst) % 4 + 1


for it in range(calls):
    # Alltoallv: irregular int32 blocks.
    sc = np.array([counts(rank, j) for j in range(n)], dtype="i")
    rc = np.array([counts(j, rank) for j in range(n)], dtype="i")
    sd = np.concatenate(([0], np.cumsum(sc)[:-1])).astype("i")
    rd = np.concatenate(([0], np.cumsum(rc)[:-1])).astype("i")
    send = np.concatenate([[value(rank, j, it, k) for k in range(sc[j])] for j in range(n)]).astype("i")
    recv = np.full(int(rc.sum()), -1, dtype="i")
    comm.Alltoallv([send, (sc, sd), MPI.INT], [recv, (rc, rd), MPI.INT])
    want = np.concatenate([[value(j, rank, it, k) for k in range(rc[j])] for j in range(n)]).astype("i")
    wrong += int(not np.array_equal(recv, want))
    # Alltoall: 3 doubles with every rank.
    a = np.array([[value(rank, j, it, k) for k in range(3)] for j in range(n)], dtype="d")
    b = np.full((n, 3), -1.0)
    comm.Alltoall(a, b)
    wrong += int(not np.array_equal(b, np.array([[value(j, rank, it, k) for k in range(3)]
                                                 for j in range(n)], dtype="d")))
    # Alltoallw: the Alltoallv blocks with byte displacements.
    recv2 = np.full(int(rc.sum()), -1, dtype="i")
    comm.Alltoallw([send, (sc, sd * 4), [MPI.INT] * n], [recv2, (rc, rd * 4), [MPI.INT] * n])
    wrong += int(not np.array_equal(recv2, want))
    total += 3

# Neighbor_alltoallv on a directed ring (a distributed graph).
ring = comm.Create_dist_graph_adjacent([(rank - 1) % n], [(rank + 1) % n])
for it in range(calls):
    m = rank % 5 + 1
    got = np.full((rank - 1) % n % 5 + 1, -1, dtype="i")
    ring.Neighbor_alltoallv([np.array([value(rank, 0, it, k) for k in range(m)], dtype="i"),
                             ([m], [0]), MPI.INT], [got, ([got.size], [0]), MPI.INT])
    wrong += int(not np.array_equal(got, np.array([value((rank - 1) % n, 0, it, k)
                                                   for k in range(got.size)], dtype="i")))
    total += 1
ring.Free()
wrong = comm.allreduce(wrong, op=MPI.SUM)
if rank == 0:
    print(f"mpi4py_check: {total} calls, {wrong} wrong, thread level {MPI.Query_thread()}")
sys.exit(1 if wrong else 0)
