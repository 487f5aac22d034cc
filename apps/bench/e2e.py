"""The whole-job tier: what a user pays end to end with default settings.

  apps/bench/bench.py e2e [--machines shm,flat,shallow,two_clusters] [--pairs 5] [--out FILE]
                          [--workloads NAME,...] [--e2e-ranks 8] [--build DIR]

Each point runs one whole program (irregular_exchange, calling MPI_Alltoallv, or MPI_Alltoall or
MPI_Neighbor_alltoallv where the workload says so; sweep_100 runs apps/alltoallv_sweep, 100
calls per message size, and reports each size's ratio against MPI's own inside the run too)
natively and with libcommsched.so
preloaded with default settings (no COMMSCHED_* variable, no machine file), A/B interleaved
--pairs times in alternating order (native first in even pairs, preloaded first in odd ones).
A run's time is its alltoallv_total_s: every MPI_Alltoallv call's time on the slowest rank,
summed from the first call to the last, so learning, the trial and every agreement count. The
ratio of a pair is native / preloaded (above 1: the library made the job faster); a point
reports the median ratio over its pairs and their spread, and the preloaded run's report
(strategy, calls in trial, net gain) of the median pair.

Machines: shm (shared memory, --ranks ranks on this machine), and the emulated cluster of
apps/bench/netns_cluster.sh (8 nodes x 2 ranks, 100 Mbit/s): flat with deep queues, flat with
shallow queues (64 KB, rto_min 5 ms), two clusters. The cluster needs root; without it those
machines print one SKIPPED line.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from harness import NETNS_CONFIGS

# name: (irregular_exchange arguments, calls). Fixed patterns, counts redrawn every call, two
# patterns alternating, a pattern that drifts every 50 calls, short jobs and a long one.
WORKLOADS = {
    "hotspot_2k": (["--pattern", "hotspot", "--degree", "4", "--unit", "2048"], 300),
    "random_sparse_1k": (["--pattern", "random", "--degree", "4", "--unit", "1024"], 300),
    "ring_fan_4k": (["--pattern", "neighbors", "--degree", "4", "--unit", "4096"], 300),
    # The ring fan with far partners: 4 neighbours x 8 units of 4 KiB, plus 4 random peers x 1.
    "fan_far_4k": (["--pattern", "fan", "--degree", "4", "--unit", "4096"], 300),
    "dense_256": (["--pattern", "uniform", "--degree", "64", "--unit", "256"], 300),
    "redrawn_1k": (["--pattern", "random", "--degree", "4", "--unit", "1024",
                    "--change-every", "1"], 300),
    "alternating_1k": (["--pattern", "random", "--degree", "4", "--unit", "1024",
                        "--change-every", "1", "--cycle", "2"], 300),
    "drift50_1k": (["--pattern", "random", "--degree", "4", "--unit", "1024",
                    "--change-every", "50"], 300),
    "short20_1k": (["--pattern", "skewed", "--degree", "4", "--unit", "1024"], 20),
    "short50_1k": (["--pattern", "skewed", "--degree", "4", "--unit", "1024"], 50),
    "long1000_1k": (["--pattern", "skewed", "--degree", "4", "--unit", "1024"], 1000),
    # The other entry points: MPI_Alltoall of 64 B and of 1 KiB with every rank, and
    # MPI_Neighbor_alltoallv on the distributed graph of the ring fan.
    "alltoall_64": (["--call", "alltoall", "--unit", "64"], 300),
    "alltoall_1k": (["--call", "alltoall", "--unit", "1024"], 300),
    "neighbor_fan_4k": (["--call", "neighbor", "--pattern", "neighbors", "--degree", "4",
                         "--unit", "4096"], 300),
    # A latency benchmark's shape (apps/alltoallv_sweep): 100 calls of every rank sending
    # S bytes to every rank, S = 1 B, 2 B, ... 64 KiB, then the next S. Besides the whole run,
    # the point gives each size's ratio measured inside the preloaded run: the same 100 calls
    # also go to PMPI_Alltoallv (MPI's own), in alternating blocks of 10, and the ratio is
    # PMPI's median block over MPI_'s (the native run's same ratio is the method's control).
    "sweep_100": (["--calls", "100", "--max-size", "65536", "--pmpi-blocks", "10"], 1700),
}
SWEEP_APP = {"sweep_100": "alltoallv_sweep"}  # workloads not run by irregular_exchange
MACHINES = ["shm", "flat", "shallow", "two_clusters"]


def parse(out):
    r = {}
    for line in out.splitlines():
        if line.startswith("[") or "=" not in line:
            continue
        for kv in line.split():
            k, _, v = kv.partition("=")
            r[k] = v
    return r


def one_run(cmd, env, timeout):
    """(whole run's time, checksum, {size: PMPI_ over MPI_ time per call} of a sweep, else {})."""
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    r = parse(p.stdout)
    if p.returncode != 0 or "alltoallv_total_s" not in r or r.get("errors") != "0":
        raise RuntimeError(f"rc={p.returncode}: {p.stderr[-1500:]}")
    sizes = {}
    for line in p.stdout.splitlines():
        kv = dict(x.partition("=")[::2] for x in line.split())
        if "size" in kv and "ratio" in kv:
            sizes[int(kv["size"])] = float(kv["ratio"])
    return float(r["alltoallv_total_s"]), r["checksum"], sizes


def point(mpirun, n, app, lib, workload, pairs, timeout, log):
    args, calls = WORKLOADS[workload]
    work = tempfile.mkdtemp(prefix="cs-e2e-")
    os.chmod(work, 0o755)
    base = {k: v for k, v in os.environ.items() if not k.startswith("COMMSCHED_")}
    if workload in SWEEP_APP:
        argv = [os.path.join(os.path.dirname(app), SWEEP_APP[workload])] + args
    else:
        argv = [app] + args + ["--iterations", str(calls), "--warmup", "0"]
    natives, preloads, ratios, reports, size_ratios, size_controls = [], [], [], [], {}, {}
    for i in range(pairs):
        report = os.path.join(work, f"r{i}.json")
        pre = mpirun + ["-np", str(n), "-x", f"LD_PRELOAD={lib}", "-x",
                        f"COMMSCHED_REPORT={report}"] + argv
        nat = mpirun + ["-np", str(n)] + argv
        order = [("native", nat), ("preloaded", pre)]
        if i % 2:
            order.reverse()
        t = {}
        for kind, cmd in order:
            t[kind] = one_run(cmd, base, timeout)
        if t["native"][1] != t["preloaded"][1]:
            raise RuntimeError(f"{workload}: checksums differ: {t}")
        natives.append(t["native"][0])
        preloads.append(t["preloaded"][0])
        ratios.append(t["native"][0] / t["preloaded"][0])
        for size, ratio in t["preloaded"][2].items():
            size_ratios.setdefault(size, []).append(ratio)
        for size, ratio in t["native"][2].items():
            size_controls.setdefault(size, []).append(ratio)
        try:
            with open(report) as f:
                reports.append(json.load(f))
        except (OSError, ValueError):
            reports.append(None)
        log(f"[e2e] {workload} pair {i + 1}/{pairs}: native {t['native'][0]:.4g} s, "
            f"preloaded {t['preloaded'][0]:.4g} s, ratio {ratios[-1]:.3f}")
    mid = sorted(range(pairs), key=lambda k: ratios[k])[pairs // 2]
    rep = reports[mid] or {}
    pats = rep.get("patterns", [])
    per_size = {str(k): statistics.median(v) for k, v in sorted(size_ratios.items())}
    control = {str(k): statistics.median(v) for k, v in sorted(size_controls.items())}
    extra = {"size_ratios": per_size, "size_ratio_min": min(per_size.values()),
             "size_controls": control} if per_size else {}
    return extra | {
        "workload": workload, "calls": calls, "ranks": n, "pairs": pairs,
        "native_s": statistics.median(natives), "preloaded_s": statistics.median(preloads),
        "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
        "ratio_max": max(ratios), "ratios": ratios,
        "strategies": sorted({p["strategy"] for p in pats}),
        "patterns": len(pats), "unlearned_calls": rep.get("unlearned_calls"),
        "trial_s": sum(p.get("trial_s", 0) for p in pats),
        # Calls that ran a schedule (under auto, mostly the trial's candidate calls).
        "optimised_calls": sum(p.get("calls_optimised", 0) for p in pats),
        "net_gain_s": sum(p.get("net_gain_s", 0) for p in pats),
    }


def table(rows):
    lines = ["| machine | workload | calls | native s | preloaded s | ratio (median) | "
             "ratio range | chose | in trial s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['machine']} | {r['workload']} | {r['calls']} | {r['native_s']:.4g} | "
            f"{r['preloaded_s']:.4g} | **{r['ratio_median']:.3f}** | "
            f"{r['ratio_min']:.3f}–{r['ratio_max']:.3f} | {', '.join(r['strategies']) or '–'} | "
            f"{r['trial_s']:.3g} |")
    for r in rows:
        if r.get("size_ratios"):
            lines.append(f"\n{r['machine']} {r['workload']}: per size, MPI's own over the "
                         "library's time per call in the preloaded run (control: the same in "
                         "the native run), median over pairs: " + ", ".join(
                             f"{k} B {v:.2f} ({r['size_controls'].get(k, 0):.2f})"
                             for k, v in r["size_ratios"].items()))
    return "\n".join(lines)


def run_points(machine, mpirun, n, a, out_path, log):
    app = os.path.join(a.build, "apps", "irregular_exchange")
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    names = a.workloads.split(",") if a.workloads else list(WORKLOADS)
    rows = []
    with open(out_path, "a") as out:
        for w in names:
            t0 = time.time()
            r = point(mpirun, n, app, lib, w, a.pairs, a.timeout, log)
            r.update(machine=machine, tier="e2e", wall_s=round(time.time() - t0, 1))
            out.write(json.dumps(r) + "\n")
            out.flush()
            rows.append(r)
    return rows


def main(a, here, log):
    out_path = a.out or os.path.join(a.build, "results", "e2e.jsonl")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    if os.path.exists(out_path) and not a.append:
        os.remove(out_path)
    machines = a.machines.split(",") if a.machines else ["shm"]
    for m in machines:
        if m not in MACHINES:
            sys.exit(f"e2e: unknown machine '{m}' (one of {', '.join(MACHINES)})")
    for m in machines:
        if m == "shm":
            mpirun = ["mpirun.openmpi", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
            if os.geteuid() == 0:
                mpirun.append("--allow-run-as-root")
            run_points("shm", mpirun, a.e2e_ranks, a, out_path, log)
            continue
        if os.geteuid() != 0:
            print(f"SKIPPED: e2e {m}: the emulated cluster needs root", flush=True)
            continue
        cmd = ["bash", os.path.join(here, "netns_cluster.sh"), "--build", a.build,
               "--timeout", str(a.timeout * 40 * a.pairs)] + NETNS_CONFIGS[m] + \
              ["--", sys.executable, os.path.join(here, "bench.py"), "e2e-inner", "--config", m,
               "--build", a.build, "--out", out_path, "--append", "--pairs", str(a.pairs),
               "--timeout", str(a.timeout)]
        if a.workloads:
            cmd += ["--workloads", a.workloads]
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            sys.exit(f"e2e {m}: exit status {rc}")
    rows = [json.loads(l) for l in open(out_path)]
    print(table(rows), flush=True)
    failed = [r for r in rows if r["ratio_median"] < 0.98 or r.get("size_ratio_min", 1) < 0.95]
    log(f"[e2e] {len(rows)} points, {len(failed)} below 0.98 (a sweep: a size below 0.95): "
        f"{', '.join(r['machine'] + '/' + r['workload'] for r in failed) or 'none'}; {out_path}")


def inner(a, log):
    mpirun = os.environ.get("CS_MPIRUN")
    if not mpirun:
        sys.exit("bench.py e2e-inner runs inside apps/bench/netns_cluster.sh")
    n = int(os.environ["CS_NODES"]) * int(os.environ["CS_RANKS_PER_NODE"])
    run_points(a.config, [mpirun], n, a, a.out, log)  # the launcher yields when idle already
