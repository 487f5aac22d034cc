#!/usr/bin/env python3
"""Predict benchmark points again with another machine file, without running them again.

The measured times of a bench.py JSON-lines file do not depend on the cost model (every
strategy's plan depends only on the matrix and, for the cost-aware planners maxmin, maxsum, unif
and bvn, on each message's alpha + beta*bytes, which a change of `overhead` leaves alone; a new
size table or new alpha/beta changes those four plans, so run them again with the new machine
file before judging), so a new model can be judged on them offline: for every point this
script rebuilds the matrix (irregular_exchange --matrix-only, no MPI traffic), asks
commsched-analyze for every strategy's predicted time per call on the machine file given for
the point's platform, and writes the records again with predicted_s / native_predicted_s and
the lower bound replaced (report.py then computes the Spearman rho of the new predictions). It
also prints, per point, what auto's trial would run with the new predictions (the 3 best
predicted and native, up to 8 where the calls are predicted cheap: trial_width)
and the best measured time among those, against the oracle. auto's own records are kept as
measured: its choice under a new model has to be run again to count.

  python3 apps/bench/remodel.py bench-results/smpi-default.jsonl --build build \\
      --machine flat=config/machines/smpi_flat.toml --out /tmp/remodel.jsonl

Platforms not named in --machine keep the machine file their records name. SMPI points get
their platform's host names (commsched-analyze --hosts), so host-pattern clusters apply;
emulated-cluster points the ranks per node their records name.
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the SMPI platforms' host names)
import report  # noqa: E402  (spearman)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRIAL_KEEP, TRIAL_KEEP_MOST = 3, 8  # learn::kTrialKeep, kTrialKeepMost
TRIAL_CALLS, TRIAL_SECONDS = 3, 0.1  # the defaults of COMMSCHED_TRIAL_CALLS / _SECONDS
SAME_PREDICTION = 1e-9  # learn::kSamePrediction


def trial_width(pool_times, native_time):
    """learn::trial_width: 3 candidates beside native, up to 8 while (calls + 1) rounds of them
    and native, at their predicted times, fit in the trial's seconds."""
    t = sorted(pool_times)
    k = min(len(t), TRIAL_KEEP)
    rnd = (native_time or 0) + sum(t[:k])
    while k < len(t) and k < TRIAL_KEEP_MOST and (rnd + t[k]) * (TRIAL_CALLS + 1) <= TRIAL_SECONDS:
        rnd += t[k]
        k += 1
    return max(k, TRIAL_KEEP)


def point_key(r):
    return (r["tier"], r["platform"], r["ranks"], r["workload"],
            json.dumps(r["params"], sort_keys=True))


def workload_args(params):
    """irregular_exchange's arguments for a record's params (bench.wl builds them)."""
    return bench.wl("", params["pattern"], params["degree"], params["unit"],
                    params.get("nonuniformity"))["args"]


def whatif(build, params, n, machine, ranks_per_node, hosts, work, recorded, full_max):
    """(strategy -> (seconds per call as auto ranks it, plan shape), the matrix's lower bound).
    A matrix of more than full_max non-zeros is predicted for the `recorded` strategies only."""
    mfile = os.path.join(work, "m.txt")
    subprocess.run(["mpirun.openmpi", "--allow-run-as-root", "-np", "1",
                    os.path.join(build, "apps", "irregular_exchange")] + workload_args(params)
                   + ["--matrix-only", str(n), "--matrix-out", mfile],
                   check=True, stdout=subprocess.DEVNULL)
    prefix = os.path.join(work, "w")
    cmd = [os.path.join(build, "apps", "commsched-analyze"), "--matrix", mfile,
           "--machine", machine, "--csv", prefix]
    with open(mfile) as f:
        nonzeros = sum(1 for line in f if line.strip() and line[0] not in "#n")
    if nonzeros > full_max:
        cmd += ["--strategies", ",".join(recorded)]
    if hosts:
        hfile = os.path.join(work, "hosts.txt")
        with open(hfile, "w") as f:
            f.write("\n".join(hosts) + "\n")
        cmd += ["--hosts", hfile]
    elif ranks_per_node > 1:
        cmd += ["--ranks-per-node", str(ranks_per_node)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    out, bound = {}, None
    with open(prefix + "-whatif.csv") as f:
        for row in csv.DictReader(f):
            bound = float(row["lower_bound_s"])
            if row["ok"] == "1":
                shape = tuple(row[k] for k in ("predicted_s", "phases", "messages", "wire_bytes",
                                               "staging_max"))
                out[row["strategy"]] = (float(row["per_call_s"]), shape)
    return out, bound


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="bench.py JSON-lines files")
    ap.add_argument("--build", default=os.path.join(REPO, "build"),
                    help="a build tree with irregular_exchange and commsched-analyze")
    ap.add_argument("--machine", action="append", default=[],
                    help="PLATFORM=FILE: predict that platform's points on FILE")
    ap.add_argument("--out", required=True, help="the records with the new predictions")
    ap.add_argument("--full-max-nonzeros", type=int, default=500000,
                    help="points whose matrix has more non-zeros are predicted for their "
                    "recorded strategies only (every planner on a dense 1024-rank matrix takes "
                    "the what-if about 20 minutes); their 'auto would try' column then picks "
                    "among those")
    a = ap.parse_args()
    override = dict(m.split("=", 1) for m in a.machine)
    points = collections.OrderedDict()
    for path in a.inputs:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    points.setdefault(point_key(r), {})[r["strategy"]] = r  # last line wins
    work = tempfile.mkdtemp(prefix="cs-remodel-")
    counts = collections.Counter()
    with open(a.out, "w") as out:
        for key, cells in points.items():
            tier, platform, n = key[0], key[1], key[2]
            any_rec = next(iter(cells.values()))
            machine = override.get(platform) or os.path.join(REPO, any_rec.get("machine_file") or
                                                             "config/machines/default.toml")
            base = platform.split("+")[0]
            hosts = bench.SMPI_PLATFORMS[base]["hosts"](n) if tier == "smpi" else None
            rpn = any_rec.get("ranks_per_node") or (2 if tier == "netns" else 1)
            recorded = sorted({s for s in cells if s not in ("native", "auto") + bench.PLANLESS
                               and not s.startswith("rs_nh+")})
            shaped, bound = whatif(a.build, any_rec["params"], n, machine, rpn, hosts, work,
                                   recorded, a.full_max_nonzeros)
            pred = {s: t for s, (t, _) in shaped.items()}
            measured = {s: r["time_s"] for s, r in cells.items()
                        if s != "auto" and (r["time_s"] or 0) > 0}  # a failed point: None
            old_pairs, new_pairs = [], []
            for s, r in cells.items():
                old = report.predicted_of(s, r, cells)
                if s in measured and not s.startswith("rs_nh+") and s not in bench.PLANLESS:
                    if old is not None and old >= 0:
                        old_pairs.append((old, measured[s]))
                    if s in pred:
                        new_pairs.append((pred[s], measured[s]))
            for s, r in cells.items():
                r = dict(r)
                if s not in ("auto",) + bench.PLANLESS and not s.startswith("rs_nh+") and s in pred:
                    r["predicted_s"] = pred[s]
                r["native_predicted_s"] = pred.get("native")
                if bound:
                    r["lower_bound_s"] = bound
                    if (r.get("time_s") or 0) > 0:
                        r["time_over_lower_bound"] = r["time_s"] / bound
                r["predicted_by"] = os.path.relpath(machine, REPO) if machine.startswith(REPO) \
                    else machine
                out.write(json.dumps(r) + "\n")
            rho_old = report.spearman(*zip(*old_pairs)) if len(old_pairs) >= 3 else None
            rho_new = report.spearman(*zip(*new_pairs)) if len(new_pairs) >= 3 else None
            pool = sorted((s for s in pred if s not in ("native",) + bench.PLANLESS), key=pred.get)
            tried, shapes, lookalikes = [], set(), 0
            keep = trial_width([pred[s] for s in pool], pred.get("native"))
            for s in pool:  # distinct plans only, as the library's trial (same figures: same plan)
                if len(tried) + lookalikes >= keep or shaped[s][1] in shapes:
                    continue
                phases = shaped[s][1][1]
                if any(shaped[t][1][1] == phases and abs(pred[t] - pred[s]) <= SAME_PREDICTION * pred[t]
                       for t in tried):  # one the model cannot tell apart takes a slot, untried
                    lookalikes += 1
                    continue
                tried.append(s)
                shapes.add(shaped[s][1])
            tried.append("native")
            got = [(measured[s], s) for s in tried if s in measured]
            oracle = min(measured.values()) if measured else None
            line = (f"{platform} {n} {key[3]} {json.loads(key[4]).get('unit')}: rho "
                    f"{rho_old if rho_old is None else round(rho_old, 2)} -> "
                    f"{rho_new if rho_new is None else round(rho_new, 2)} ({len(new_pairs)})")
            if got and oracle:
                best_t, best_s = min(got)
                line += f"; trial {','.join(tried)} -> {best_s} {best_t / oracle:.2f} of oracle"
                counts["trial_ok"] += best_t / oracle <= 1.05
                counts["trial_n"] += 1
            if rho_new is not None:
                counts["rho_new"] += rho_new >= 0.9
                counts["rho_n"] += 1
            if rho_old is not None:
                counts["rho_old"] += rho_old >= 0.9
            print(line, flush=True)
    print(f"rho >= 0.9: {counts['rho_old']} before, {counts['rho_new']} now, of "
          f"{counts['rho_n']} points; trial's best within 5 % of the oracle: "
          f"{counts['trial_ok']} of {counts['trial_n']}")


if __name__ == "__main__":
    main()
