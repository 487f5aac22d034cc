#!/usr/bin/env python3
"""The benchmark harness of issue 4: irregular_exchange under every strategy on two tiers.

  apps/bench/bench.py netns [--set smoke|default|full|paper000|paper002|alltoall] [--out FILE] ...
      Emulated cluster (real Open MPI over TCP between network namespaces, tbf-shaped links;
      apps/bench/netns_cluster.sh). Needs root; otherwise prints one SKIPPED line, exits 0.
  apps/bench/bench.py smpi [--set smoke|default|full|table5|table11|alltoall] [--out FILE] ...
      SimGrid SMPI (the library linked into irregular_exchange built with smpicxx, see
      cmake/smpi.cmake) on the platforms of config/platforms/. Deterministic: one run per point.
      Without SimGrid or without the SMPI build: one SKIPPED line, exit 0.
  apps/bench/bench.py e2e [--machines shm,flat,shallow,two_clusters] [--pairs 5] ...
      The whole-job tier (apps/bench/e2e.py): whole programs natively and preloaded with
      default settings, A/B interleaved, learning and trial included; the headline table.
  apps/bench/bench.py apps [--machines shm,flat,shallow,two_clusters] [--pairs 3] [--smoke] ...
      The application tier (apps/bench/apps.py): LAMMPS, FFTW 3 MPI, HPCC, Quantum ESPRESSO,
      PETSc and a Fortran FFT, unmodified, natively and preloaded with default settings, A/B
      interleaved, whole wall time, correctness from each program's own output.
  apps/bench/bench.py smpi --set bursts [--ranks 64,256] [--platforms flat] ...
      Issue 6: halo_exchange and cg_solver (Isend/Irecv bursts, built for SMPI with METIS)
      natively and linked with COMMSCHED_BURSTS=off and =local; see smpi_bursts_main.

Writes one JSON object per line and point (tier, platform, ranks, workload, params, strategy,
time_s, spread, lower_bound_s, native_s, ...) to --out (default results/<tier>-<set>.jsonl under
the build tree) and a short table to stdout. apps/bench/report.py turns the lines into Markdown
tables and figures.

A point that gives no time (a run's non-zero exit status, no result line, wrong bytes) is not
left out: its line carries "failed" (the reason) and time_s null, the table shows FAILED, and
bench.py exits 1 once every point has run.

The alltoall sets time MPI_Alltoall and MPI_Neighbor_alltoallv (irregular_exchange --call);
paper000 and paper002 the orderings of paper 000's Table 5 and paper 002's Table 11 on the
emulated cluster with shallow queues.

native: the MPI library's own MPI_Alltoallv (netns: the program without the library; SMPI: the
library linked but disabled, COMMSCHED_ENABLE=0). Every other strategy: COMMSCHED_STRATEGY=<id>.
lower_bound_s: bytes through the busiest port divided by its bandwidth (host ports; in the
two-cluster setups also the inter-cluster link, each direction); intra-node bytes are free. A
bound for bandwidth-bound workloads only: it ignores latency and protocol overhead.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from harness import NETNS_CONFIGS, git_commit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FALLBACK_STRATEGIES = ["ac", "lex", "lp_xor", "lp_shift", "pex", "bex", "greedy", "rs_n",
                       "rs_n_sort", "rs_nh", "color"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def skip(msg):
    print(f"SKIPPED: {msg}", flush=True)
    sys.exit(0)


def default_build():
    for b in (os.path.join(os.path.dirname(REPO), "build-bench"), os.path.join(REPO, "build")):
        if os.path.isdir(b):
            return b
    return os.path.join(REPO, "build")


def strategy_ids(build, info=None):
    """Every registered strategy (commsched-info --strategies), plus auto; native first."""
    info = info or os.path.join(build, "apps", "commsched-info")
    ids = []
    try:
        out = subprocess.run([info, "--strategies"], capture_output=True, text=True,
                             timeout=30).stdout
        ids = re.findall(r"^\| `([a-z0-9_]+)`", out, flags=re.M)
    except (OSError, subprocess.SubprocessError):
        pass
    ids = [s for s in ids if s not in ("native", "auto")] or FALLBACK_STRATEGIES
    return ["native"] + ids + ["auto"]


def run_cmd(cmd, env, timeout):
    """Runs cmd in its own process group; on timeout kills the whole group (smpirun and
    mpirun leave children behind otherwise). Returns (rc, stdout, stderr)."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return 124, out, err + f"\n[bench] timed out after {timeout} s"


def parse_output(out):
    r = {}
    for line in out.splitlines():
        if "=" not in line or line.startswith("["):
            continue
        for kv in line.split():
            if "=" in kv:
                k, v = kv.split("=", 1)
                r[k] = v
    if "time_stats_s" in r:
        vals = [float(x) for x in r["time_stats_s"].split(",")]
        r["stats"] = dict(zip(["min", "p10", "p25", "median", "p75", "p90", "max"], vals))
    return r


def read_matrix(path):
    m = []
    with open(path) as f:
        for line in f:
            if line.startswith("n "):  # the rank count line of the analyzer's format
                continue
            s, d, b = line.split()
            m.append((int(s), int(d), int(b)))
    return m


def bandwidth_bound(matrix, node_of, port_bps, cluster_of=None, inter_bps=None, burst=0):
    """Seconds for the busiest port: host ports (bytes leaving or entering a node, intra-node
    bytes excluded) and, with clusters, the inter-cluster link in each direction. A token
    bucket passes at most burst + rate*T bytes in T, so each port's bytes less one burst."""
    out, inn, cross = {}, {}, {}
    for s, d, b in matrix:
        ns, nd = node_of(s), node_of(d)
        if ns == nd:
            continue
        out[ns] = out.get(ns, 0) + b
        inn[nd] = inn.get(nd, 0) + b
        if cluster_of is not None and cluster_of(ns) != cluster_of(nd):
            key = (cluster_of(ns), cluster_of(nd))
            cross[key] = cross.get(key, 0) + b
    t = max(0, max([0] + list(out.values()) + list(inn.values())) - burst) / port_bps
    if cross and inter_bps:
        t = max(t, max(0, max(cross.values()) - burst) / inter_bps)
    return t


def rate_to_bytes_per_s(rate):
    m = re.fullmatch(r"([0-9.]+)\s*([kmg]?)(bit|bps)", rate.lower())
    if not m:
        raise ValueError(f"cannot read rate {rate!r} (e.g. 100mbit)")
    v = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return v / 8 if m.group(3) == "bit" else v


# ------------------------------------------------------------------------------------------
# Workloads. Each: (name, pattern args, params for the JSON line). Units follow the papers:
# 000 Tables 5-7 (msg_unit 16 B ... 8 KiB), 002 Table 11 (density 10-75 %, 256/512 B),
# 004 Tables 3-4 (3-D FFT transpose, low/high variance), 004 Figs. 10-11 (neighbors, 76/476 B),
# 001 §9 (transportation: fan-out k, non-uniformity l).

def wl(name, pattern, degree, unit, nonuniformity=None, **extra):
    args = ["--pattern", pattern, "--degree", str(degree), "--unit", str(unit)]
    params = {"pattern": pattern, "degree": degree, "unit": unit}
    if nonuniformity is not None:
        args += ["--nonuniformity", repr(nonuniformity)]
        params["nonuniformity"] = nonuniformity
    params.update(extra)
    return {"workload": name, "args": args, "params": params}


def unit_sweep(units, degree=8, pattern="uniform"):
    return [wl(f"{pattern}_d{degree}", pattern, degree, u) for u in units]


def density_sweep(n, densities, unit):
    return [wl(f"density_{int(d * 100)}pct", "density", max(1, round(d * (n - 1))), unit,
               density=d) for d in densities]


def fft3d(n, unit):
    return [wl("fft3d_low_variance", "fft3d", n, unit, receivers=n),
            wl("fft3d_high_variance", "fft3d", max(1, n // 8), unit, receivers=max(1, n // 8))]


def transport(n, k, l_values, traffic):
    return [wl(f"transport_k{k}", "transport", min(k, n - 1), traffic, l, k=k) for l in l_values]


# ------------------------------------------------------------------------------------------
# SMPI tier

SMPI_PLATFORMS = {
    # name: file, host names for n ranks (one rank per host), port bandwidth (B/s), clusters,
    # the machine file (config/machines) fitted to the platform for the cost model's predictions
    "flat": {"file": "flat.xml", "hosts": lambda n: [f"flat-{i}" for i in range(n)],
             "port": 1.25e9, "machine": "smpi_flat.toml"},
    "fattree": {"file": "fattree.xml", "hosts": lambda n: [f"ft-{i}" for i in range(n)],
                "port": 1.25e9, "machine": "smpi_fattree.toml"},
    # ranks alternate clusters: rank r on cluster r % 2
    "two_clusters": {"file": "two_clusters.xml",
                     "hosts": lambda n: [f"{'ca' if r % 2 == 0 else 'cb'}-{r // 2}" for r in range(n)],
                     "port": 1.25e9, "cluster": lambda r: r % 2, "inter": 1.25e9,
                     "machine": "smpi_two_clusters.toml"},
    "cm5": {"file": "cm5.xml", "hosts": lambda n: [f"cm5-{i}" for i in range(n)], "port": 20e6,
            "machine": "smpi_cm5.toml"},
}

# Bench-only variants of a strategy: (strategy id, extra settings). 000 Table 5's RS_NH columns.
SMPI_VARIANTS = {"rs_nh+l1": ("rs_nh", {"COMMSCHED_RSNH_LAMBDA": "one"}),
                 "rs_nh+fixed": ("rs_nh", {"COMMSCHED_RSNH_LAMBDA": "fixed"})}
# The paper tables' columns (ids as commsched names them; native and auto for reference).
TABLE5_STRATEGIES = ["native", "ac", "lp_xor", "rs_n", "rs_n_sort", "rs_nh", "rs_nh+l1",
                     "rs_nh+fixed", "auto"]
TABLE11_STRATEGIES = ["native", "lex", "pex", "bex", "greedy", "auto"]
# Issue 5 at 1024 ranks: the direct references and every indirect route of 004.
ISSUE5_1024_STRATEGIES = ["native", "ac", "color", "mesh2d", "grid3d", "hypercube", "auto"]
# auto's trial: candidates it runs (the 3 best predicted and native), calls each in SMPI
# (deterministic: COMMSCHED_TRIAL_CALLS=1, i.e. 2 calls, the first discarded).
# COMMSCHED_TRIAL_SECONDS=0: no extra rounds for short calls, which a simulation has no noise
# to need (and would pay dearly for at 1024 ranks). COMMSCHED_TRIAL_BUDGET=1: the steady state
# after learning and trial is what the column shows, so neither waits for a budget.
AUTO_TRIAL_CANDIDATES, AUTO_TRIAL_CALLS = 4, 1
# The trial pairs each candidate's calls with native calls and decides at checkpoints of 1, 2,
# 4, 8 and 16 pairs (src/learn/trial.hpp, kMaxRoundsPerCall), a candidate's first call
# discarded and a switch-in call before a measured one that follows the other side: the most
# calls it can take for `tried` candidates, with the learning call and the call that takes the
# decision.
AUTO_TRIAL_MAX_PAIRS = 16


# After its decision the trial runs the other side again every this many calls (the re-check,
# kRecheckEvery in src/intercept/intercept.cpp): a warm-up below it keeps the timed call off a
# re-check.
AUTO_RECHECK_EVERY = 200


def auto_trial_calls(tried, pairs=AUTO_TRIAL_MAX_PAIRS):
    return min(1 + tried * (1 + 4 * pairs * AUTO_TRIAL_CALLS) + 1, AUTO_RECHECK_EVERY - 1)


def auto_decided(rep):
    """Whether auto's trial has chosen: the first candidate to convince wins, so the others
    may stay unmeasured."""
    return rep.get("strategy") not in (None, "undecided")


# A pattern running native agrees once every this many calls (kNativeAgreeEvery in
# src/intercept/intercept.cpp) and skips the agreement on the others.
NATIVE_AGREE_EVERY = 256
# Up to this many ranks, auto's native column is simulated over one agreement cycle
# (auto_native_cycle); above, a cycle of calls takes too long to simulate.
AUTO_CYCLE_MAX_RANKS = 256
# Strategies without a plan (scheduled at run time, or MPI's own call in step): no prediction.
PLANLESS = ("drs", "native_sync")


def alltoall_wl(unit):
    """MPI_Alltoall of `unit` bytes with every rank (irregular_exchange --call alltoall)."""
    w = wl(f"mpi_alltoall_{unit}", "uniform", 1, unit, call="alltoall")
    w["args"] += ["--call", "alltoall"]
    return w


# MPI_Alltoall (issue 26): SMPI's own algorithm (Open MPI's decision rules) against the indirect
# routes of paper 004 and a direct order.
ALLTOALL_STRATEGIES = ["native", "ac", "mesh2d", "grid3d", "hypercube", "two_stage", "auto"]


def smpi_points(set_name, strategies, explicit=False):
    """(platform, ranks, workload, strategies) tuples of a set. `explicit`: the user named the
    strategies (--strategies), so the paper tables do not restrict them."""
    pts = []
    lp = list(strategies)
    if set_name == "alltoall":
        cols = lp if explicit else ALLTOALL_STRATEGIES
        return [("flat", n, alltoall_wl(64), cols) for n in (64, 256, 1024)]
    if set_name == "smoke":
        return [("cm5", 32, wl("uniform_d8", "uniform", 8, 256), ["native", "color", "rs_nh"])]
    if set_name == "table5":
        # 000 Table 5: uniform d = 8 (and 16) on the CM-5-like machine, 32 ranks, msg_unit
        # 16 B ... 16 KiB (COM 1..32 x unit); the paper's columns.
        cols = lp if explicit else TABLE5_STRATEGIES
        for d in (8, 16):
            for w in unit_sweep([16, 64, 256, 1024, 4096, 16384], d):
                pts.append(("cm5", 32, w, cols))
        return pts
    if set_name == "table11":
        # 002 Table 11: 32 ranks, density 10/25/50/75 %, 256 and 512 B; the paper's columns.
        cols = lp if explicit else TABLE11_STRATEGIES
        for unit in (256, 512):
            for w in density_sweep(32, [0.10, 0.25, 0.50, 0.75], unit):
                pts.append(("cm5", 32, w, cols))
        return pts
    if set_name in ("default", "full"):
        # 000 Table 5 rows and 002 Table 11 densities on the CM-5-like machine, 32 ranks.
        for w in unit_sweep([16, 256, 4096]) + density_sweep(32, [0.10, 0.25, 0.50, 0.75], 256):
            pts.append(("cm5", 32, w, lp))
        # Every platform at 64 ranks: many small messages and fewer large ones.
        for plat in ("flat", "fattree", "two_clusters"):
            ws = [wl("uniform_d8", "uniform", 8, 64), wl("uniform_d8", "uniform", 8, 4096)]
            if set_name == "full":
                ws += [wl("skewed", "skewed", 8, 1024), wl("hotspot", "hotspot", 8, 1024),
                       wl("random", "random", 8, 256)] + fft3d(64, 640) + \
                      transport(64, 32, [1 / 32, 1 / 2], 65536)
            pts += [(plat, 64, w, lp) for w in ws]
    if set_name in ("issue5", "full"):
        # Issue 5's rows (004 §4): neighbors delta = 64 with 76 B and 476 B (Figs. 10-11), the
        # all-to-all with 64 B (Fig. 5), the 3-D FFT transpose with low and high variance
        # (Tables 3-4), the two-cluster platform (003 §5). Dense patterns (all-to-all, FFT low
        # variance) at 64 ranks only: at 256 one simulated call of a 256-phase schedule takes
        # minutes per strategy.
        for u in (76, 476):
            pts.append(("flat", 256, wl("neighbors_d64", "neighbors", 64, u), lp))
        pts.append(("flat", 256, fft3d(256, 640)[1], lp))
        pts.append(("flat", 64, wl("alltoall", "fft3d", 64, 64), lp))
        pts += [("flat", 64, w, lp) for w in fft3d(64, 640)]
        pts += [("two_clusters", 64, w, lp) for w in [fft3d(64, 640)[1]]]
        pts += [("two_clusters", 256, w, lp) for w in [wl("uniform_d8", "uniform", 8, 64)]]
        # 1024 ranks: the strategies named by --strategies, else a stated subset (every
        # strategy takes minutes of simulation here; native's linear call the longest, see
        # --native-max-ranks).
        cols = lp if explicit else ISSUE5_1024_STRATEGIES
        for u in (76, 476):
            pts.append(("flat", 1024, wl("neighbors_d64", "neighbors", 64, u), cols))
        # The all-to-all with 64 B (004 Fig. 5) at 256 and 1024 ranks, with the same subset.
        # At 1024 every simulated rank gathers the 1M-entry matrix and plans it, all in one
        # process (19 GB; mesh2d's run took about half an hour, native's linear call 46
        # minutes), and ac and color send a million messages per call: name the strategies.
        for n in (256, 1024):
            pts.append(("flat", n, wl("alltoall", "fft3d", n, 64), cols))
    return pts


def smpi_cfg(a, native_alltoallv):
    """The simulation options every run gets, whatever the strategy."""
    cfg = ["--cfg=smpi/simulate-computation:no",
           # SMPI's detached (eager) sends make its request matching quadratic per rank;
           # rendezvous sends keep 256-1024-rank runs to minutes.
           "--cfg=smpi/send-is-detached-thresh:0",
           # Open MPI's decision rules for the collectives (the library's agreement and gather,
           # recursive doubling and the like); SMPI's own default ones are linear ("not to be
           # trusted for performance evaluations", SimGrid says) and quadratic to simulate.
           "--cfg=smpi/coll-selector:ompi",
           # ... but MPI_Alltoallv itself stays SMPI's default, Open MPI's basic_linear: every
           # rank posts a receive and a send to every peer, zero bytes included.
           f"--cfg=smpi/alltoallv:{native_alltoallv}",
           # SimGrid's sharing solver compares link usage (bytes/s) against this precision; the
           # default 1e-5 lets rounding over many flows on dense two-cluster points abort the
           # run ("Cannot saturate more a constraint"). 1e-3 B/s is 1e-12 of a 1 GB/s link.
           f"--cfg=maxmin/precision:{a.maxmin_precision:g}",
           "--log=root.thres:critical"]
    if a.overhead_us > 0:
        # LogGP-like software overhead per message: blocking send (os), receive (or) and
        # non-blocking send (ois), the same for every message of every strategy.
        o = a.overhead_us * 1e-6
        cfg += [f"--cfg=smpi/os:0:{o:g}:0", f"--cfg=smpi/or:0:{o:g}:0",
                f"--cfg=smpi/ois:0:{o:g}:0"]
    return cfg


def auto_native_cycle(a, cmd, env, w, warmup, t_skip, rep, n):
    """Seconds per call of auto once it settled on native, averaged over one agreement cycle:
    up to AUTO_CYCLE_MAX_RANKS ranks measured (calls NATIVE_AGREE_EVERY - 1 and
    NATIVE_AGREE_EVERY timed: one without, one with the agreement); above, the trial's own
    figure for native, which times a call from its entry to the next one's, so that it also
    holds the program's barrier between calls.
    Returns (seconds, basis): basis "cycle", "trial", or "call" (the timed call alone, its
    agreement's share left out) when the cycle could not be simulated within --timeout."""
    if n > AUTO_CYCLE_MAX_RANKS:
        won = next((c for c in rep.get("candidates", []) if c["strategy"] == "native"), None)
        if won and won["measured_s"] > 0:
            return max(t_skip, won["measured_s"]), "trial"
        return t_skip, "call"
    i = cmd.index("--warmup")
    cmd2 = cmd[:i] + ["--warmup", str(NATIVE_AGREE_EVERY - 2)] + cmd[i + 2:]
    j = cmd2.index("--iterations")
    cmd2[j + 1] = "2"
    rc, so, _ = run_cmd(cmd2, env, a.timeout)
    r2 = parse_output(so)
    if rc != 0 or "stats" not in r2:
        return t_skip, "call"
    lo, hi = r2["stats"]["min"], r2["stats"]["max"]
    return ((NATIVE_AGREE_EVERY - 1) * lo + hi) / NATIVE_AGREE_EVERY, "cycle"


def read_report(path):
    """The library's JSON report (COMMSCHED_REPORT): its first pattern, or None."""
    try:
        with open(path) as f:
            pats = json.load(f).get("patterns") or []
        return pats[0] if pats else None
    except (OSError, ValueError):
        return None


def model_fields(rep, sid):
    """What the library's report says about strategy `sid` on this point: the cost model's
    prediction for it and for native, the model's bound, the strategy it ran and, for auto,
    every candidate with its predicted and measured time."""
    cands = rep.get("candidates", [])
    mine = next((c for c in cands if c["strategy"] == sid), None)
    nat = next((c for c in cands if c["strategy"] == "native"), None)
    # drs and native_sync have no plan: the model gives them native's figure, none of their own.
    out = {"predicted_s": mine["predicted_s"] if mine and sid not in ("auto",) + PLANLESS
           else None,
           "native_predicted_s": nat["predicted_s"] if nat else None,
           "model_lower_bound_s": rep.get("lower_bound_s"), "chosen": rep.get("strategy"),
           "calls_optimised": rep.get("calls_optimised")}
    if sid == "auto":
        out["auto_candidates"] = [
            {k: c[k] for k in ("strategy", "predicted_s", "measured_s", "rejected")}
            for c in cands]
        out["auto_decided"] = auto_decided(rep)
    return out


def smpi_select(points, a):
    """The points of a set that --ranks and --platforms keep (points: (platform, ranks, ...))."""
    if a.ranks:
        keep = {int(x) for x in a.ranks.split(",")}
        points = [p for p in points if p[1] in keep]
    if a.platforms:
        keep = set(a.platforms.split(","))
        points = [p for p in points if p[0] in keep]
    return points


def smpi_hostfile(work, plat, n):
    """A hostfile placing n ranks on platform plat, one per host."""
    path = os.path.join(work, f"hosts-{plat}-{n}")
    with open(path, "w") as f:
        f.write("\n".join(SMPI_PLATFORMS[plat]["hosts"](n)) + "\n")
    return path


def smpi_machine(a, plat):
    """The machine file (under config/machines) of a platform: with --overhead-us O the one
    fitted with that overhead (smpi_<platform>_o<O>us.toml) where there is one."""
    name = SMPI_PLATFORMS[plat]["machine"]
    if a.overhead_us > 0:
        fitted = name.replace(".toml", f"_o{a.overhead_us:g}us.toml")
        if os.path.exists(os.path.join(REPO, "config", "machines", fitted)):
            return fitted
        log(f"[bench] no config/machines/{fitted}: predicting with {name}, which has no "
            "per-message overhead")
    return name


def smpi_run(a, smpirun, plat, n, hostfile, cfg, argv, env):
    """One simulation of argv (program and arguments) on n ranks. Returns (cmd, rc, stdout,
    stderr, wall seconds, parsed stdout)."""
    cmd = [smpirun, "-np", str(n), "-platform",
           os.path.join(REPO, "config", "platforms", SMPI_PLATFORMS[plat]["file"]), "-hostfile",
           hostfile] + cfg + argv
    t0 = time.time()
    rc, so, se = run_cmd(cmd, env, a.timeout)
    return cmd, rc, so, se, time.time() - t0, parse_output(so)


def smpi_main(a):
    smpirun = shutil.which("smpirun")
    if not smpirun:
        skip("SimGrid SMPI: no smpirun (Debian: apt-get install libsimgrid-dev)")
    ver = subprocess.run([smpirun, "--version"], capture_output=True, text=True).stdout.strip()
    if a.set == "bursts":
        smpi_bursts_main(a, smpirun, ver)
        return
    app = os.path.join(a.build, "smpi", "irregular_exchange")
    if not os.access(app, os.X_OK):
        skip(f"SimGrid SMPI: {app} not built (configure with -DCOMMSCHED_SMPI=ON and build "
             "target irregular_exchange_smpi)")
    strategies = a.strategies.split(",") if a.strategies else strategy_ids(a.build)
    points = smpi_select(smpi_points(a.set, strategies, explicit=bool(a.strategies)), a)
    if a.units:
        keep = {int(x) for x in a.units.split(",")}
        points = [p for p in points if p[2]["params"]["unit"] in keep]
    work = tempfile.mkdtemp(prefix="cs-smpi-")
    out = open_out(a, "smpi")
    t_start = time.time()
    suffix = f"+o{a.overhead_us:g}us" if a.overhead_us > 0 else ""
    try:
        for plat, n, w, strats in points:
            p = SMPI_PLATFORMS[plat]
            hostfile = smpi_hostfile(work, plat, n)
            matrix_file = os.path.join(work, "matrix.txt")
            if os.path.exists(matrix_file):
                os.remove(matrix_file)
            machine_name = smpi_machine(a, plat)
            machine = os.path.join(REPO, "config", "machines", machine_name)
            native = None
            rows = []
            for s in strats:
                if s == "native" and n > a.native_max_ranks:
                    log(f"[bench] {plat} n={n}: native not simulated above "
                        f"--native-max-ranks {a.native_max_ranks} (see BENCHMARKS.md)")
                    continue
                env = dict(os.environ, COMMSCHED_LOG_LEVEL="warn")
                report = os.path.join(work, "report.json")
                if os.path.exists(report):
                    os.remove(report)
                learn = None
                if s == "native":
                    env["COMMSCHED_ENABLE"] = "0"
                    cfg = smpi_cfg(a, "default")
                    warmup = 0
                else:
                    sid, extra = SMPI_VARIANTS.get(s, (s, {}))
                    env.update(COMMSCHED_STRATEGY=sid, COMMSCHED_LEARN_CALLS="1",
                               COMMSCHED_MACHINE=machine, COMMSCHED_REPORT=report, **extra)
                    if sid == "auto":
                        # Every native call of auto (learning, trial) is the native column's
                        # algorithm while that is simulated, else the cheap pairwise one.
                        learn = "default" if n <= a.auto_native_max_ranks else "pair"
                        env["COMMSCHED_TRIAL_CALLS"] = str(AUTO_TRIAL_CALLS)
                        env["COMMSCHED_TRIAL_SECONDS"] = "0"
                        env["COMMSCHED_TRIAL_BUDGET"] = "1"
                        # A simulation's ranks have no skew of their own between calls for a
                        # barrier to take out, and the in-step gauge's agreements (the 14th
                        # and 15th calls) would land in the timed call: the column is the
                        # schedule's steady state.
                        env["COMMSCHED_IN_STEP"] = "off"
                        # 1 learning call, one pair per candidate, 1 call to take the
                        # decision: the timed call runs auto's final choice (checked against
                        # the report below; a trial that needs more pairs runs again).
                        warmup = auto_trial_calls(AUTO_TRIAL_CANDIDATES, pairs=1)
                    else:
                        # The untimed learning call: from 256 ranks an algorithm cheaper to
                        # simulate; the learned plan runs from the next call on.
                        learn = a.learn_alltoallv
                        if learn == "auto":
                            learn = "pair" if n >= 256 else "default"
                        warmup = a.smpi_warmup
                    cfg = smpi_cfg(a, learn)
                args = w["args"] + ["--iterations", "1", "--warmup", str(warmup),
                                    "--clock", "monotonic"]
                if not os.path.exists(matrix_file):
                    args += ["--matrix-out", matrix_file]
                cmd, rc, so, se, wall, r = smpi_run(a, smpirun, plat, n, hostfile, cfg,
                                                    [app] + args, env)
                rep = read_report(report) if s != "native" and rc == 0 else None
                if rep and SMPI_VARIANTS.get(s, (s, {}))[0] == "auto" and \
                        not auto_decided(rep):
                    # The trial needed more pairs than the first guess: again, with room for
                    # the longest trial of the candidates it runs.
                    tried = sum(1 for c in rep.get("candidates", []) if not c["rejected"])
                    warmup = auto_trial_calls(max(tried, AUTO_TRIAL_CANDIDATES))
                    i = args.index("--warmup")
                    args[i + 1] = str(warmup)
                    cmd, rc, so, se, wall2, r = smpi_run(a, smpirun, plat, n, hostfile, cfg,
                                                         [app] + args, env)
                    wall += wall2
                    rep = read_report(report) if rc == 0 else None
                if rc != 0 or "stats" not in r:
                    log(f"[bench] {plat} n={n} {w['workload']} {s}: failed rc={rc} "
                        f"after {wall:.0f} s\n{se[-1500:]}")
                    rows.append(fail_point(out, "smpi", plat + suffix, n, w, s,
                                           failure_reason(rc, se)))
                    continue
                lb = None
                if os.path.exists(matrix_file):
                    lb = bandwidth_bound(read_matrix(matrix_file), lambda r_: r_, p["port"],
                                         p.get("cluster"), p.get("inter"))
                t = r["stats"]["median"]
                if s == "native":
                    native = t
                extra = {"simgrid": ver, "platform_file": "config/platforms/" + p["file"],
                         "machine_file": "config/machines/" + machine_name, "repetitions": 1,
                         "warmup": warmup, "alltoallv_untimed": learn,
                         "overhead_us": a.overhead_us, "maxmin_precision": a.maxmin_precision}
                if s != "native" and not rep:
                    log(f"[bench] WARNING: {plat} n={n} {w['workload']} {s}: no learned pattern "
                        f"in the library's report (it ran native):\n{se[-800:]}")
                if rep:
                    sid = SMPI_VARIANTS.get(s, (s, {}))[0]
                    extra.update(model_fields(rep, sid))
                    if sid == "auto":
                        if rep.get("strategy") == "native":
                            # auto runs native and agrees 1 call in NATIVE_AGREE_EVERY: the
                            # timed call skipped the agreement. Report the mean over a cycle.
                            extra["time_call_s"] = t
                            t, extra["time_basis"] = auto_native_cycle(a, cmd, env, w, warmup,
                                                                       t, rep, n)
                            r["stats"] = {k: t for k in r["stats"]}
                        if not extra["auto_decided"]:
                            log(f"[bench] WARNING: {plat} n={n} {w['workload']}: auto's trial "
                                "had not decided before the timed call")
                rec = record("smpi", plat + suffix, n, w, s, r, lb, native, wall, extra)
                rows.append(rec)
                emit(out, rec)
            check_checksums(rows)
        log(f"[bench] smpi set '{a.set}': {len(points)} points in {time.time() - t_start:.0f} s "
            f"wall")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        out.close()


# ------------------------------------------------------------------------------------------
# SMPI, issue 6: Isend/Irecv bursts of halo_exchange and cg_solver

# (platform, ranks, app, mesh vertices). Every simulated rank builds the whole mesh (only rank 0
# partitions it), about 28 MB and 0.2 s of CPU per rank at 256000 vertices, all in the one
# SMPI process: the 1024-rank points use a quarter of the mesh to stay within memory.
BURSTS_APPS = ["halo_exchange", "cg_solver"]
BURSTS_POINTS = [(plat, n, app, v) for plat, n, v in
                 [("flat", 64, 256000), ("flat", 256, 256000), ("two_clusters", 64, 256000),
                  ("flat", 1024, 65536)] for app in BURSTS_APPS]
# native: the library linked but disabled; off: intercepting, every call passed through;
# local: a learned burst's sends released in shift order; collective: a burst every rank votes
# for runs as one exchange through the Alltoallv path (auto chooses its schedule).
BURSTS_LEVELS = ["native", "off", "local", "collective"]
# collective runs every exchange after the first through the Alltoallv path: auto settles on
# SMPI's linear MPI_Alltoallv, slow to simulate (see the SMPI section of BENCHMARKS.md); a
# 256-rank halo_exchange run did not finish in 10 minutes before level collective had its trial.
# Above CS_BURSTS_COLLECTIVE_MAX_RANKS (default 64), not simulated.
BURSTS_COLLECTIVE_MAX_RANKS = int(os.environ.get("CS_BURSTS_COLLECTIVE_MAX_RANKS", "64"))
# Bytes per ghost vertex: halo_exchange's default 4 components, cg_solver's 1.
BURSTS_VALUE_BYTES = {"halo_exchange": 32, "cg_solver": 8}
BURST_REPORT_RE = re.compile(r"burst pattern \d+ \(bursts=\w+\): \d+ rank\(s\), up to \d+ posts, "
                             r"(\d+) bursts, (\d+) substituted(?: \((\d+) as collective "
                             r"exchanges\))?, (\d+) fell back")


def smpi_bursts_main(a, smpirun, ver):
    """Each point: the app natively (COMMSCHED_ENABLE=0) and with COMMSCHED_BURSTS=off, =local and
    =collective (COMMSCHED_LEARN_CALLS=1: the first exchange learns, the others are substituted;
    collective also runs auto's trial, COMMSCHED_TRIAL_CALLS=1, on a few exchanges), --iterations
    exchanges each timed after a barrier (--time --clock monotonic, SMPI's simulated clock);
    time_s is the median over the exchanges (the default 20 leaves learning and trial out). lower_bound_s: the most bytes one rank sends per
    exchange (the app's max_rank_bytes) over its host link; it leaves out the receive side and,
    on two_clusters, the shared inter-cluster link, so it is a bound, not always a tight one.
    The result lines (checksum, sum, traffic) must be identical across the levels."""
    apps = {app: os.path.join(a.build, "smpi", app) for app in BURSTS_APPS}
    missing = [p for p in apps.values() if not os.access(p, os.X_OK)]
    if missing:
        skip(f"SimGrid SMPI: {missing[0]} not built (configure with -DCOMMSCHED_SMPI=ON with METIS, "
             "Debian libmetis-dev, and build targets halo_exchange_smpi cg_solver_smpi)")
    points = smpi_select(BURSTS_POINTS, a)
    if a.apps:
        keep = set(a.apps.split(","))
        points = [p for p in points if p[2] in keep]
    work = tempfile.mkdtemp(prefix="cs-smpi-bursts-")
    out = open_out(a, "smpi")
    t_start = time.time()
    suffix = f"+o{a.overhead_us:g}us" if a.overhead_us > 0 else ""
    mismatches = []
    try:
        for plat, n, app, vertices in points:
            p = SMPI_PLATFORMS[plat]
            hostfile = smpi_hostfile(work, plat, n)
            w = {"workload": app,
                 "params": {"app": app, "vertices": vertices, "iterations": a.burst_iterations,
                            "unit": BURSTS_VALUE_BYTES[app]}}
            native, rows = None, []
            for level in BURSTS_LEVELS:
                if level == "collective" and n > BURSTS_COLLECTIVE_MAX_RANKS:
                    log(f"[bench] {plat} n={n} {app}: collective not simulated above "
                        f"{BURSTS_COLLECTIVE_MAX_RANKS} ranks")
                    continue
                env = dict(os.environ)
                report = os.path.join(work, "report.json")
                if os.path.exists(report):
                    os.remove(report)
                if level == "native":
                    env["COMMSCHED_ENABLE"] = "0"
                else:
                    env.update(COMMSCHED_BURSTS=level, COMMSCHED_LEARN_CALLS="1",
                               COMMSCHED_TRIAL_CALLS="1", COMMSCHED_TRIAL_SECONDS="0",
                               COMMSCHED_REPORT=report,
                               COMMSCHED_MACHINE=os.path.join(REPO, "config", "machines",
                                                              smpi_machine(a, plat)))
                argv = [apps[app], "--vertices", str(vertices), "--iterations",
                        str(a.burst_iterations), "--time", "--clock", "monotonic"]
                _, rc, so, se, wall, r = smpi_run(a, smpirun, plat, n, hostfile,
                                                  smpi_cfg(a, "default"), argv, env)
                if rc != 0 or "stats" not in r:
                    log(f"[bench] {plat} n={n} {app} {level}: failed rc={rc} after {wall:.0f} s\n"
                        f"{se[-1500:]}")
                    rows.append(fail_point(out, "smpi", plat + suffix, n, w, level,
                                           failure_reason(rc, se)))
                    continue
                t = r["stats"]["median"]
                if level == "native":
                    native = t
                lb = int(r["max_rank_bytes"]) / p["port"] if "max_rank_bytes" in r else None
                bursts = [tuple(int(x or 0) for x in m) for m in BURST_REPORT_RE.findall(so + se)]
                extra = {"simgrid": ver, "platform_file": "config/platforms/" + p["file"],
                         "repetitions": 1, "bursts": level, "overhead_us": a.overhead_us,
                         "maxmin_precision": a.maxmin_precision,
                         "sum": r.get("sum"), "messages_per_iter": int(r["messages_per_iteration"]),
                         "max_peers": int(r["max_peers"]),
                         "max_rank_bytes": int(r["max_rank_bytes"]),
                         "bursts_seen": sum(b[0] for b in bursts) if bursts else None,
                         "bursts_substituted": sum(b[1] for b in bursts) if bursts else None,
                         "bursts_as_collective": sum(b[2] for b in bursts) if bursts else None,
                         "bursts_fell_back": sum(b[3] for b in bursts) if bursts else None}
                rep = read_report(report) if level == "collective" else None
                if rep:  # the exchange's pattern: auto's choice and its trial
                    extra.update(model_fields(rep, "auto"))
                r["bytes_per_iter"] = r.get("bytes_per_iteration", 0)
                r["errors"] = 0  # the apps check nothing themselves; the checksums are compared
                rec = record("smpi", plat + suffix, n, w, level, r, lb, native, wall, extra)
                rows.append(rec)
                emit(out, rec)
            mismatches += check_burst_results(rows)
        log(f"[bench] smpi set 'bursts': {len(points)} points in {time.time() - t_start:.0f} s "
            "wall")
        if mismatches:
            log("[bench] result lines differ between levels:\n  " + "\n  ".join(mismatches))
            FAILURES.extend(mismatches)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        out.close()


def check_burst_results(rows):
    """The result lines (checksum, sum, traffic) of every level of one point must be identical;
    returns one description per point where they are not, or where a level failed."""
    done = [r for r in rows if r and not r.get("failed")]
    if not done:
        return []
    key = lambda r: (r["checksum"], r["sum"], r["messages_per_iter"], r["bytes_per_iter"])
    r0 = done[0]
    where = f"{r0['platform']} n={r0['ranks']} {r0['workload']}"
    if len(done) < len(rows):
        return [f"{where}: {len(rows) - len(done)} level(s) failed"]
    if len({key(r) for r in done}) > 1:
        return [f"{where}: " + ", ".join(f"{r['strategy']} {key(r)}" for r in done)]
    return []


# ------------------------------------------------------------------------------------------
# netns tier

# The default set's strategies: native and auto, the direct schedules of papers 000/002 (ac,
# rs_nh, color), the optimal preemptive one (bvn), and the indirect routes of 004/003 and ours
# (mesh2d, hypercube, two_level, node_aware).
NETNS_DEFAULT_STRATEGIES = ["native", "ac", "rs_nh", "color", "bvn", "mesh2d", "hypercube",
                            "two_level", "node_aware", "auto"]


def neighbor_wl(unit):
    """A random sparse pattern as MPI_Neighbor_alltoallv on its distributed graph."""
    w = wl("mpi_neighbor_random_d4", "random", 4, unit, call="neighbor")
    w["args"] += ["--call", "neighbor"]
    return w


# netns sets whose strategies are fixed unless --strategies names others.
NETNS_SET_STRATEGIES = {
    # Paper 000 Table 5's orderings (AC, LP, RS_NH against native) where receiver contention is
    # modelled: shallow switch queues.
    "paper000": ["native", "ac", "lp_xor", "rs_n", "rs_nh"],
    # Paper 002 Table 11's columns (linear, pairwise, balanced, greedy) there too.
    "paper002": ["native", "lex", "pex", "bex", "greedy"],
    "alltoall": ALLTOALL_STRATEGIES,
}


def netns_points(set_name, n):
    """{config: [workloads]} for n ranks."""
    if set_name == "smoke":
        return {"flat": [wl("uniform_d4", "uniform", 4, 1024)]}
    if set_name == "paper000":
        return {"shallow": unit_sweep([256, 1024, 4096], 8)}
    if set_name == "paper002":
        return {"shallow": [w for unit in (256, 512)
                            for w in density_sweep(n, [0.10, 0.25, 0.50, 0.75], unit)]}
    if set_name == "alltoall":
        # MPI_Alltoall and MPI_Neighbor_alltoallv (issue 26) on both queue depths.
        ws = [alltoall_wl(64), alltoall_wl(4096), neighbor_wl(4096)]
        return {"flat": ws, "shallow": ws}
    if set_name == "issue5":
        # Issue 5's node-aware row: run with --nodes 4 --ranks-per-node 4 (four ranks share
        # each emulated node's link): many small messages between nodes, and the all-to-all.
        return {"flat": unit_sweep([256, 4096], 8) + [wl("alltoall", "fft3d", n, 1024)]}
    pts = {"flat": unit_sweep([16, 256, 4096], 4) +
           [wl("skewed", "skewed", 4, 1024), wl("hotspot", "hotspot", 4, 2048),
            wl("neighbors_d4", "neighbors", 4, 16384)] +
           density_sweep(n, [0.25, 0.75], 4096) + transport(n, 8, [1 / 8], 262144) +
           fft3d(n, 16384),
           "shallow": [wl("hotspot", "hotspot", 4, 8192)] + fft3d(n, 16384)[1:],
           "two_clusters": unit_sweep([4096], 4)}
    if set_name == "full":
        pts["flat"] += unit_sweep([64, 1024, 8192], 4) + [wl("random", "random", 4, 1024)] + \
            density_sweep(n, [0.10, 0.50], 4096) + transport(n, 8, [1 / 2], 262144)
        pts["shallow"] += unit_sweep([4096], 4)
        pts["two_clusters"] += [wl("random", "random", 4, 4096)] + fft3d(n, 16384)
    return pts


def netns_main(a):
    """Outer: one emulated cluster per configuration, this script inside each (netns-inner)."""
    if os.geteuid() != 0:
        skip("emulated cluster: needs root to create network namespaces")
    app = os.path.join(a.build, "apps", "irregular_exchange")
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    if not (os.access(app, os.X_OK) and os.path.exists(lib)):
        skip(f"emulated cluster: build {a.build} first (irregular_exchange, libcommsched.so)")
    n = a.nodes * a.ranks_per_node
    configs = netns_points(a.set, n)
    if a.configs:
        configs = {c: w for c, w in configs.items() if c in a.configs.split(",")}
    out_path = out_file(a, "netns")
    if os.path.exists(out_path) and not a.append:
        os.remove(out_path)
    t_start = time.time()
    failed_configs = []
    for cfg, _ in configs.items():
        cmd = ["bash", os.path.join(HERE, "netns_cluster.sh"), "--nodes", str(a.nodes),
               "--ranks-per-node", str(a.ranks_per_node), "--rate", a.rate,
               "--build", a.build, "--timeout", str(a.timeout * 40 * a.launches)] + \
              NETNS_CONFIGS[cfg] + \
              ["--", sys.executable, os.path.abspath(__file__), "netns-inner", "--config", cfg,
               "--set", a.set, "--build", a.build, "--out", out_path, "--append",
               "--repetitions", str(a.repetitions), "--warmup", str(a.warmup),
               "--launches", str(a.launches),
               "--timeout", str(a.timeout)]
        if a.strategies:
            cmd += ["--strategies", a.strategies]
        rc = subprocess.run(cmd).returncode
        if rc != 0:  # its points are in the table; the other configurations still run
            log(f"[bench] netns config {cfg}: exit status {rc}")
            failed_configs.append(cfg)
    log(f"[bench] netns set '{a.set}': results in {out_path}, {time.time() - t_start:.0f} s")
    FAILURES.extend(f"netns configuration {c}: a point failed (see its table)"
                    for c in failed_configs)


def netns_inner(a):
    mpirun = os.environ.get("CS_MPIRUN")
    if not mpirun:
        sys.exit("bench.py netns-inner runs inside apps/bench/netns_cluster.sh")
    nodes, rpn = int(os.environ["CS_NODES"]), int(os.environ["CS_RANKS_PER_NODE"])
    two = os.environ.get("CS_TWO_CLUSTERS") == "1"
    port = rate_to_bytes_per_s(os.environ["CS_RATE"])
    inter = rate_to_bytes_per_s(os.environ["CS_INTER_RATE"])
    burst = int(os.environ.get("CS_BURST", "0"))
    n = nodes * rpn
    app = os.path.join(a.build, "apps", "irregular_exchange")
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    strategies = a.strategies.split(",") if a.strategies else strategy_ids(a.build)
    if a.set == "smoke" and not a.strategies:
        strategies = ["native", "color", "rs_nh"]
    if a.set in NETNS_SET_STRATEGIES and not a.strategies:
        strategies = NETNS_SET_STRATEGIES[a.set]
    if a.set == "default" and not a.strategies:
        # One or two of each family, so the default set fits 10 minutes here (a run costs
        # 1-4 s); `--set full` or --strategies runs every registered one.
        strategies = [s for s in strategies if s in NETNS_DEFAULT_STRATEGIES]
    workloads = netns_points(a.set, n)[a.config]
    out = open_out(a, "netns")
    work = tempfile.mkdtemp(prefix="cs-netns-")
    os.chmod(work, 0o755)
    node_of = lambda r: r // rpn
    cluster_of = (lambda nd: int(nd >= nodes // 2)) if two else None
    platform = {"flat": "netns_flat", "shallow": "netns_shallow",
                "two_clusters": "netns_two_clusters"}[a.config]
    if (nodes, rpn) != (8, 2):  # not the default layout: say which
        platform += f"_{nodes}x{rpn}"
    # The cost model's machine for this configuration (config/machines/).
    machine = "netns100_two_clusters" if two else "netns100"
    extra = {"nodes": nodes, "ranks_per_node": rpn, "rate": os.environ["CS_RATE"],
             "mtu": int(os.environ["CS_MTU"]), "queue_bytes": int(os.environ["CS_QUEUE"]),
             "rto_min": os.environ.get("CS_RTO_MIN") or None,
             "inter_rate": os.environ["CS_INTER_RATE"] if two else None,
             "tbf_burst_bytes": burst, "repetitions": a.repetitions, "warmup": a.warmup,
             "machine_file": f"config/machines/{machine}.toml"}
    try:
        for w in workloads:
            matrix_file = os.path.join(work, "matrix.txt")
            runs = {s: [] for s in strategies}  # (parsed output, wall, report) per launch
            failed = {}  # strategy: why its last failed launch failed
            lb = None
            # --launches K: K rounds, each launching every strategy once, so that the machine's
            # drift between launches (several percent here) touches every strategy alike; a
            # strategy's figures are then the median over its launches.
            for launch in range(a.launches):
                for s in strategies:
                    cmd = [mpirun, "-np", str(n)]
                    report = os.path.join(work, "report.json")
                    if os.path.exists(report):
                        os.remove(report)
                    if s != "native":
                        cmd += ["-x", f"LD_PRELOAD={lib}", "-x", f"COMMSCHED_STRATEGY={s}",
                                "-x", "COMMSCHED_LOG_LEVEL=warn", "-x",
                                f"COMMSCHED_MACHINE={machine}", "-x", f"COMMSCHED_REPORT={report}"]
                    if s == "auto":
                        # The column is auto's steady state after its learning and trial
                        # (the whole-job tier measures what a job pays): no budget to wait
                        # for, and no in-step gauge or trial among the timed calls.
                        cmd += ["-x", "COMMSCHED_TRIAL_BUDGET=1", "-x", "COMMSCHED_IN_STEP=off"]
                    warmup = netns_warmup(a, s)
                    args = w["args"] + ["--iterations", str(a.repetitions), "--warmup",
                                        str(warmup), "--clock", "monotonic"]
                    if launch == 0 and s == strategies[0]:
                        args += ["--matrix-out", matrix_file]
                    t0 = time.time()
                    rc, so, se = run_cmd(cmd + [app] + args, dict(os.environ), a.timeout)
                    wall = time.time() - t0
                    r = parse_output(so)
                    if rc != 0 or "stats" not in r:
                        log(f"[bench] {platform} {w['workload']} {s}: failed rc={rc}\n"
                            f"{se[-2000:]}")
                        failed[s] = failure_reason(rc, se)
                        continue
                    if lb is None and os.path.exists(matrix_file):
                        lb = bandwidth_bound(read_matrix(matrix_file), node_of, port, cluster_of,
                                             inter, burst)
                    rep = read_report(report) if s != "native" else None
                    if s == "auto" and rep and not auto_decided(rep):
                        log(f"[bench] WARNING: {platform} {w['workload']}: auto's trial had not "
                            f"decided after {warmup} untimed calls (launch {launch + 1})")
                    r["warmup"] = warmup
                    runs[s].append((r, wall, rep))
            native, rows = None, []
            for s in strategies:
                if s in failed:  # one failed launch fails the point, whatever the others gave
                    rows.append(fail_point(out, "netns", platform, n, w, s, failed[s]))
                    continue
                r, wall, rep = merge_launches(runs[s])
                if s == "native":
                    native = r["stats"]["median"]
                point = dict(extra, warmup=r["warmup"], launches=len(runs[s]))
                if len(runs[s]) > 1:
                    point["launch_medians_s"] = [x[0]["stats"]["median"] for x in runs[s]]
                    if s == "auto":
                        point["auto_chose_per_launch"] = [x[2].get("strategy") if x[2] else None
                                                          for x in runs[s]]
                        point["auto_decided_per_launch"] = [bool(x[2]) and auto_decided(x[2])
                                                            for x in runs[s]]
                if rep:
                    point.update(model_fields(rep, s))
                rec = record("netns", platform, n, w, s, r, lb, native, wall, point)
                rows.append(rec)
                emit(out, rec)
            check_checksums(rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        out.close()


# ------------------------------------------------------------------------------------------

def record(tier, platform, n, w, strategy, r, lb, native, wall, extra):
    st = r["stats"]
    t = st["median"]
    rec = {"tier": tier, "platform": platform, "ranks": n, "workload": w["workload"],
           "params": w["params"], "strategy": strategy, "time_s": t,
           "spread_s": {k: st[k] for k in ("min", "p10", "p25", "p75", "p90", "max")},
           "lower_bound_s": lb, "native_s": native,
           "time_over_lower_bound": (t / lb) if lb else None,
           "native_over_time": (native / t) if native and t > 0 else None,
           "bytes_per_iter": int(r.get("bytes_per_iter", 0)), "errors": int(r.get("errors", -1)),
           "checksum": r.get("checksum"), "wall_s": round(wall, 2),
           "commit": git_commit(), "date": datetime.datetime.now().isoformat(timespec="seconds")}
    rec.update(extra)
    if rec["errors"] != 0:  # irregular_exchange checks every byte; -1: it printed no count
        rec["failed"] = (f"{rec['errors']} wrong bytes" if rec["errors"] > 0
                         else "no error count in the output")
    return rec


# Every failed point or check of this run, one description each: main() exits 1 when any.
FAILURES = []


def failure_reason(rc, stderr):
    """A run's failure in one short line: its exit status and the last line it wrote."""
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    why = "timed out" if rc == 124 else f"exit status {rc}" if rc != 0 else "no result line"
    return f"{why}: {last[:160]}" if last else why


def fail_point(out, tier, platform, n, w, strategy, why):
    """The line and table row of a point that gave no time."""
    rec = {"tier": tier, "platform": platform, "ranks": n, "workload": w["workload"],
           "params": w["params"], "strategy": strategy, "time_s": None, "failed": why,
           "commit": git_commit(), "date": datetime.datetime.now().isoformat(timespec="seconds")}
    emit(out, rec)
    return rec


def netns_warmup(a, s):
    """Untimed calls before the timed ones: for auto, as many as keep the timed calls clear of
    the re-check after a decision (auto_trial_calls), which hold any clear decision; a
    near-tie may run longer (up to 16 times COMMSCHED_TRIAL_CALLS pairs per candidate), and
    the report says whether the trial decided in time."""
    if s != "auto":
        return a.warmup
    return max(a.warmup, auto_trial_calls(AUTO_TRIAL_CANDIDATES))


def merge_launches(launches):
    """One strategy's launches as one: each statistic the median over the launches (min and
    max the extremes), the summed wall time, the last launch's report."""
    if len(launches) == 1:
        return launches[0]
    r = dict(launches[-1][0])
    stats = [x[0]["stats"] for x in launches]
    r["stats"] = {k: statistics.median(st[k] for st in stats) for k in stats[0]}
    r["stats"]["min"] = min(st["min"] for st in stats)
    r["stats"]["max"] = max(st["max"] for st in stats)
    errors = [int(x[0].get("errors", -1)) for x in launches]
    r["errors"] = max(errors) if min(errors) >= 0 else -1
    return r, sum(x[1] for x in launches), launches[-1][2]


def check_checksums(rows):
    """irregular_exchange verifies every byte itself (errors=0); the checksum also covers the
    warm-up calls, so compare it only between runs with the same call count (the library's)."""
    done = [r for r in rows if r and not r.get("failed")]  # wrong bytes already failed in emit
    by_calls = {}
    for r in done:
        if r["strategy"] != "native":
            by_calls.setdefault(r.get("warmup"), {}).setdefault(r["checksum"], []).append(
                r["strategy"])
    for calls, sums in by_calls.items():
        if len(sums) > 1:
            r0 = done[0]
            why = (f"{r0['platform']} n={r0['ranks']} {r0['workload']}: checksums differ "
                   f"between strategies: {sums}")
            log(f"[bench] {why}")
            FAILURES.append(why)


def out_file(a, tier):
    return a.out or os.path.join(a.build, "results", f"{tier}-{a.set}.jsonl")


def open_out(a, tier):
    path = out_file(a, tier)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return open(path, "a" if a.append else "w")


_printed_header = False


def emit(out, rec):
    global _printed_header
    out.write(json.dumps(rec, sort_keys=False) + "\n")
    out.flush()
    if not _printed_header:
        print(f"{'tier':6} {'platform':18} {'ranks':>5} {'workload':22} {'unit':>7} "
              f"{'strategy':10} {'time_ms':>10} {'t/LB':>6} {'nat/t':>6}", flush=True)
        _printed_header = True
    f = lambda x: f"{x:6.2f}" if x is not None else "     -"
    row = (f"{rec['tier']:6} {rec['platform']:18} {rec['ranks']:5d} {rec['workload']:22} "
           f"{rec['params']['unit']:7d} {rec['strategy']:10} ")
    if rec.get("failed"):
        FAILURES.append(f"{rec['platform']} n={rec['ranks']} {rec['workload']} "
                        f"unit={rec['params']['unit']} {rec['strategy']}: {rec['failed']}")
        print(row + f"{'FAILED':>10} {rec['failed']}", flush=True)
    else:
        print(row + f"{rec['time_s'] * 1e3:10.3f} {f(rec['time_over_lower_bound'])} "
              f"{f(rec['native_over_time'])}", flush=True)


def finish():
    """Exit status 1, and the failures listed, when any point or check failed."""
    if FAILURES:
        log(f"[bench] {len(FAILURES)} failure(s):\n  " + "\n  ".join(FAILURES))
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tier", choices=["netns", "smpi", "netns-inner", "e2e", "e2e-inner", "apps",
                                     "apps-inner"])
    ap.add_argument("--set", default="default",
                    choices=["smoke", "default", "full", "table5", "table11", "issue5", "bursts",
                             "alltoall", "paper000", "paper002"])
    ap.add_argument("--build", default=None, help="build tree (smpi: the COMMSCHED_SMPI=ON one)")
    ap.add_argument("--out", default=None, help="JSON lines file")
    ap.add_argument("--append", action="store_true", help="append to --out")
    ap.add_argument("--strategies", default=None, help="comma-separated ids (default: all)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    # netns
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--ranks-per-node", type=int, default=2)
    ap.add_argument("--rate", default="100mbit")
    ap.add_argument("--repetitions", type=int, default=20, help="timed calls per run (netns)")
    ap.add_argument("--warmup", type=int, default=6, help="untimed calls first (netns)")
    ap.add_argument("--launches", type=int, default=1,
                    help="netns: launch every strategy this many times, in rounds, and take "
                         "the median over launches (the machine drifts between launches)")
    ap.add_argument("--config", default="flat", choices=list(NETNS_CONFIGS))
    ap.add_argument("--configs", default=None,
                    help="netns: only these configurations (comma-separated: flat,shallow,"
                         "two_clusters)")
    # smpi
    ap.add_argument("--smpi-warmup", type=int, default=1,
                    help="untimed calls before the timed one (smpi, forced strategies: the one "
                         "learning call; the simulation is deterministic). auto gets enough "
                         "for its trial")
    ap.add_argument("--overhead-us", type=float, default=0,
                    help="smpi: per-message software overhead in microseconds (SMPI's os, or, "
                         "ois), the same for every strategy; 0: SimGrid's default (none)")
    ap.add_argument("--ranks", default=None, help="smpi: only the points with these rank counts")
    ap.add_argument("--units", default=None, help="smpi: only the points with these units")
    ap.add_argument("--auto-native-max-ranks", type=int, default=256,
                    help="smpi: above this many ranks auto's native calls (learning, trial) use "
                         "SMPI's pairwise alltoallv, cheap to simulate, not the linear one")
    ap.add_argument("--platforms", default=None, help="smpi: only these platforms")
    import apps  # the application tier's names (it imports this module only in its functions)
    ap.add_argument("--apps", default=None,
                    help="smpi --set bursts: only these programs (halo_exchange,cg_solver); "
                         f"apps: only these applications ({','.join(apps.APPS)}; without it all "
                         "but lammps-fine)")
    ap.add_argument("--burst-iterations", type=int, default=20,
                    help="smpi --set bursts: exchanges per run, each timed (the first learns)")
    ap.add_argument("--learn-alltoallv", default="auto",
                    help="SMPI alltoallv algorithm for the library runs' untimed learning calls; "
                         "auto: pair from 256 ranks (cheap to simulate), else SMPI's default")
    ap.add_argument("--maxmin-precision", type=float, default=1e-3,
                    help="smpi: SimGrid's maxmin/precision in bytes/s (its default 1e-5 can "
                         "abort dense points: 'Cannot saturate more a constraint')")
    ap.add_argument("--native-max-ranks", type=int, default=256,
                    help="simulate native (SMPI's linear alltoallv) only up to this many ranks")
    # e2e
    ap.add_argument("--machines", default=None,
                    help="e2e, apps: shm,flat,shallow,two_clusters (default shm)")
    ap.add_argument("--pairs", type=int, default=5, help="e2e, apps: A/B pairs per point")
    ap.add_argument("--workloads", default=None, help="e2e: only these workloads")
    ap.add_argument("--e2e-ranks", type=int, default=8, help="e2e: ranks in shared memory")
    # apps (--machines, --pairs as e2e)
    ap.add_argument("--app-ranks", type=int, default=4, help="apps: ranks in shared memory")
    ap.add_argument("--predict", default=None, metavar="MACHINE_FILE",
                    help="apps: also trace one run and predict the saving with "
                         "commsched-analyze on this machine file (e.g. config/machines/"
                         "netns100.toml)")
    ap.add_argument("--smoke", action="store_true",
                    help="apps: one small application, one pair (the CI point)")
    ap.add_argument("--preload-env", action="append", metavar="VAR=VALUE[,VAR=VALUE...]",
                    help="apps: COMMSCHED_* settings of the preloaded runs (default: none, the "
                         "defaults), e.g. COMMSCHED_STRATEGY=lp_shift; repeat it or separate "
                         "them by commas")
    ap.add_argument("--beside", action="append", metavar="VAR=VALUE[,VAR=VALUE...]",
                    help="apps: a third run in every pair, preloaded with these COMMSCHED_* "
                         "settings instead, e.g. COMMSCHED_CANDIDATES=native; its ratio is "
                         "reported beside the preloaded one")
    ap.add_argument("--fftw-wisdom", default=None, metavar="FILE",
                    help="apps: FFTW plans from this wisdom where the file exists, instead of "
                         "measuring one; where it does not, the measured wisdom is kept there "
                         "once its transposes are MPI_Alltoall, so that later points run the "
                         "same plan")
    ap.add_argument("--control", choices=["barrier"], default=None,
                    help="apps: preload a control instead of the library: barrier = MPI's own "
                         "all-to-all after an MPI_Barrier (apps/bench/barrier_preload.c)")
    a = ap.parse_args()
    a.preload_env = ",".join(a.preload_env) if a.preload_env else None
    a.beside = ",".join(a.beside) if a.beside else None
    a.build = os.path.abspath(a.build or default_build())
    if a.set in ("table5", "table11", "bursts") and a.tier != "smpi":
        ap.error(f"--set {a.set} is an SMPI set")
    if a.tier == "smpi":
        smpi_main(a)
    elif a.tier == "netns":
        netns_main(a)
    elif a.tier == "e2e":
        import e2e
        e2e.main(a, HERE, log)
    elif a.tier == "e2e-inner":
        import e2e
        e2e.inner(a, log)
    elif a.tier == "apps":
        apps.main(a, HERE, log, FAILURES)
    elif a.tier == "apps-inner":
        apps.inner(a, log, FAILURES)
    else:
        netns_inner(a)
    finish()


if __name__ == "__main__":
    main()
