#!/usr/bin/env python3
"""Isend/Irecv bursts never slower than native: runs apps/p2p_bench, which times the same bursts
through MPI_* (the preloaded library's entry points) and through PMPI_* (MPI's own) in
alternating blocks of one run, so a loaded host slows both alike. Runs it with libcommsched
preloaded (default settings unless --set) and, as a control of the method, without (both ways
are then MPI's own: its ratio shows the noise). Prints per case, ranks and size the median over
runs of PMPI_time / MPI_time (>= 1: the library's path is as fast as native). One rank runs
the self-message case on this thread's CPU time (what the entry points cost, unaffected by a
loaded host); two and more run the bandwidth and exchange cases on wall time.

  apps/bench/bench_p2p.py [--build DIR] [--ranks 1,2,4] [--repeats 3] [--seconds 0.5]
                          [--set KEY=VALUE ...] [--mpirun mpirun.openmpi]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

CASES = [  # (label, program arguments)
    ("self-cpu", ["--mode", "self", "--window", "64", "--clock", "cpu"]),
    ("bw", ["--mode", "bw", "--window", "64"]),
    ("exchange-shift", ["--mode", "exchange", "--order", "shift"]),
    ("exchange-reverse", ["--mode", "exchange", "--order", "reverse"]),
]


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    return {int(m.group(1)): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"size=(\d+) mpi=(\S+) pmpi=(\S+) ratio=", out)}


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--build", default=os.path.join(here, "..", "..", "build"))
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", default="0.5")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--mpirun", default="mpirun.openmpi")
    a = ap.parse_args()
    app = os.path.join(a.build, "apps", "p2p_bench")
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    if not (os.path.exists(app) and os.path.exists(lib)):
        sys.exit("bench_p2p: build p2p_bench and commsched first")
    print("case ranks size mpi_s pmpi_s ratio_preloaded ratio_control")
    for ranks in [int(r) for r in a.ranks.split(",")]:
        launcher = [a.mpirun, "--oversubscribe", "-np", str(ranks)]
        if ranks > (os.cpu_count() or 1):  # oversubscribed: busy polling would starve a rank
            launcher += ["--mca", "mpi_yield_when_idle", "1"]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
        preload = ["-x", "LD_PRELOAD=" + lib] + [x for kv in a.set for x in ("-x", kv)]
        for label, args in CASES:
            if label.startswith("self") != (ranks == 1):  # self: one rank only
                continue
            prog = [app] + args + ["--seconds", a.seconds]
            pre, ctl, times = {}, {}, {}
            for _ in range(a.repeats):
                for size, (m, p) in run(launcher + preload + prog).items():
                    pre.setdefault(size, []).append(p / m)
                    times.setdefault(size, []).append((m, p))
                for size, (m, p) in run(launcher + prog).items():
                    ctl.setdefault(size, []).append(p / m)
            for size in sorted(pre):
                m = statistics.median(t[0] for t in times[size])
                p = statistics.median(t[1] for t in times[size])
                print(f"{label} {ranks} {size} {m:.4g} {p:.4g} "
                      f"{statistics.median(pre[size]):.3f} "
                      f"{statistics.median(ctl.get(size, [0])):.3f}", flush=True)


if __name__ == "__main__":
    main()
