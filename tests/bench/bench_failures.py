#!/usr/bin/env python3
"""apps/bench/bench.py cannot hide a failure: it runs its SMPI smoke set against a stand-in
smpirun (no simulation) that makes one strategy abort as SimGrid does on dense points and gives
another wrong bytes, and checks the exit status, the FAILED rows of the table, the JSON lines,
that every simulation got SimGrid's coarser maxmin/precision, and that report.py's table shows
the failed cell.

  tests/bench/bench_failures.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "apps", "bench", "bench.py")

# Answers like irregular_exchange under smpirun; CS_FAKE_ABORT names the strategy that aborts,
# CS_FAKE_WRONG the one whose bytes are wrong. Native runs with COMMSCHED_ENABLE=0.
FAKE_SMPIRUN = r'''#!/usr/bin/env python3
import os, sys
if "--version" in sys.argv:
    print("SimGrid version 3.32 (stand-in)")
    sys.exit(0)
if not any(a.startswith("--cfg=maxmin/precision:") for a in sys.argv):
    print("stand-in smpirun: no --cfg=maxmin/precision", file=sys.stderr)
    sys.exit(3)
s = "native" if os.environ.get("COMMSCHED_ENABLE") == "0" else os.environ["COMMSCHED_STRATEGY"]
if s == os.environ.get("CS_FAKE_ABORT"):
    print("[0.01] Cannot saturate more a constraint that has no active element!", file=sys.stderr)
    sys.exit(134)
errors = 7 if s == os.environ.get("CS_FAKE_WRONG") else 0
print("pattern=uniform ranks=32 iterations=1 bytes_per_iter=65536")
print(f"errors={errors}")
print("checksum=00000000deadbeef")
print("alltoallv_total_s=0.001")
print("time_stats_s=" + ",".join(["0.001"] * 7))
'''

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"bench_failures: FAIL: {what}", file=sys.stderr)


def run(work, name, **fake):
    out = os.path.join(work, f"{name}.jsonl")
    env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"],
               **fake)
    p = subprocess.run([sys.executable, BENCH, "smpi", "--set", "smoke", "--build",
                        os.path.join(work, "build"), "--out", out, "--timeout", "30"],
                       capture_output=True, text=True, env=env, timeout=120)
    recs = [json.loads(line) for line in open(out) if line.strip()] if os.path.exists(out) else []
    print(f"--- {name}: exit status {p.returncode}\n{p.stdout}{p.stderr[-1500:]}")
    return p, {r["strategy"]: r for r in recs}


def table_row(stdout, strategy):
    return next((ln for ln in stdout.splitlines() if f" {strategy} " in ln), "")


def main():
    with tempfile.TemporaryDirectory(prefix="cs-bench-failures-") as work:
        os.makedirs(os.path.join(work, "bin"))
        os.makedirs(os.path.join(work, "build", "smpi"))
        smpirun = os.path.join(work, "bin", "smpirun")
        with open(smpirun, "w") as f:
            f.write(FAKE_SMPIRUN)
        app = os.path.join(work, "build", "smpi", "irregular_exchange")
        with open(app, "w") as f:
            f.write("#!/bin/sh\nexit 99\n")  # never run: the stand-in smpirun answers for it
        for path in (smpirun, app):
            os.chmod(path, 0o755)

        p, recs = run(work, "clean")
        check(p.returncode == 0, f"every point ran: exit status {p.returncode}, expected 0")
        check(set(recs) == {"native", "color", "rs_nh"}, f"clean run's lines: {sorted(recs)}")
        check("FAILED" not in p.stdout, "clean run shows no FAILED row")

        p, recs = run(work, "abort", CS_FAKE_ABORT="color")
        check(p.returncode == 1, f"a simulation aborted: exit status {p.returncode}, expected 1")
        row = table_row(p.stdout, "color")
        check("FAILED" in row and "Cannot saturate" in row,
              f"the table shows color FAILED with SimGrid's message: '{row}'")
        check("FAILED" not in table_row(p.stdout, "rs_nh"), "rs_nh still has its time")
        c = recs.get("color", {})
        check(c.get("time_s") is None and "exit status 134" in str(c.get("failed")),
              f"color's line carries the failure: {c}")
        check(recs.get("rs_nh", {}).get("time_s") == 0.001, "rs_nh's line has its time")
        # report.py keeps the failure in its table and draws the rest.
        md = os.path.join(work, "abort.md")
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(BENCH), "report.py"),
                            os.path.join(work, "abort.jsonl"), "--md", md, "--svg-dir",
                            os.path.join(work, "fig")], capture_output=True, text=True)
        check(r.returncode == 0, f"report.py on a failed point: {r.returncode} {r.stderr}")
        rows = [ln for ln in open(md) if ln.startswith("| 256 B |")] if os.path.exists(md) else []
        check(len(rows) == 1 and "FAILED" in rows[0], f"report.py's table row: {rows}")

        p, recs = run(work, "wrong", CS_FAKE_WRONG="rs_nh")
        check(p.returncode == 1, f"wrong bytes: exit status {p.returncode}, expected 1")
        check("FAILED" in table_row(p.stdout, "rs_nh"), "the table shows rs_nh FAILED")
        check("7 wrong bytes" in str(recs.get("rs_nh", {}).get("failed")),
              f"rs_nh's line says why: {recs.get('rs_nh')}")
    if failures:
        return 1
    print("bench_failures: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
