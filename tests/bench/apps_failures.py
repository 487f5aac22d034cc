#!/usr/bin/env python3
"""The application tier (bench.py apps) cannot hide a failure: its smoke point runs against a
stand-in mpirun.openmpi (no MPI) and a stand-in fft2d_transpose, and must pass when the
preloaded run prints the native numbers and writes its report, and exit 1 with a FAILED row
and a "failed" summary line when the preloaded run prints other numbers, writes no report, or
exits non-zero. With --control barrier the "preloaded" run must get the control library,
and then writes no report and passes. With --beside, every pair's third run must get its
settings, the three runs must rotate their order, and a third run that prints other numbers
must fail the point as the preloaded one does; --beside with --control is refused.

  tests/bench/apps_failures.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "apps", "bench", "bench.py")

# Runs the program after mpirun's options in --wdir; for a preloaded run (-x LD_PRELOAD=...)
# writes the report and applies CS_FAKE: "wrong" (another checksum), "noreport", "crash"
# (COMMSCHED_TEST_FAKE, set with -x, instead where given); CS_EXPECT_PRELOAD: a preloaded run
# whose LD_PRELOAD does not end so exits 3.
FAKE_MPIRUN = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
args, env, wdir, i = sys.argv[1:], dict(os.environ), None, 0
while i < len(args) and args[i].startswith("-"):
    if args[i] == "-x":
        k, _, v = args[i + 1].partition("=")
        env[k] = v
        i += 2
    elif args[i] in ("--wdir", "-np", "--mca"):
        if args[i] == "--wdir":
            wdir = args[i + 1]
        i += 3 if args[i] == "--mca" else 2
    else:
        i += 1
pre = "LD_PRELOAD" in env
if pre and not env["LD_PRELOAD"].endswith(os.environ.get("CS_EXPECT_PRELOAD", "")):
    print(f"stand-in: LD_PRELOAD={env['LD_PRELOAD']}", file=sys.stderr)
    sys.exit(3)
fake = env.get("COMMSCHED_TEST_FAKE", os.environ.get("CS_FAKE", "")) if pre else ""
if pre and fake != "noreport":
    json.dump({"patterns": [], "unlearned_calls": 24}, open(env["COMMSCHED_REPORT"], "w"))
if fake == "crash":
    print("stand-in: segmentation fault", file=sys.stderr)
    sys.exit(139)
env.pop("LD_PRELOAD", None)
env["CS_CHECKSUM"] = "2.0" if fake == "wrong" else "1.0"
sys.exit(subprocess.run(args[i:], cwd=wdir, env=env).returncode)
'''
FAKE_FFT2D = r'''#!/bin/sh
echo "fft2d maxerr= 0.0"
echo "fft2d checksum= $CS_CHECKSUM"
echo "fft2d ok"
'''

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"apps_failures: FAIL: {what}", file=sys.stderr)


def write_exe(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def run(work, name, fake, extra=(), expect_preload="libcommsched.so", smoke=True, pairs=None):
    out = os.path.join(work, f"{name}.jsonl")
    # TMPDIR: the work directories a failed point keeps go away with this test's own.
    env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"],
               CS_FAKE=fake, CS_EXPECT_PRELOAD=expect_preload, TMPDIR=work)
    p = subprocess.run([sys.executable, BENCH, "apps", "--apps", "fft2d",
                        "--build", os.path.join(work, "build"), "--out", out, "--timeout", "30",
                        *(["--smoke"] if smoke else ["--pairs", str(pairs)]), *extra],
                       capture_output=True, text=True, env=env, timeout=120)
    recs = [json.loads(line) for line in open(out) if line.strip()] if os.path.exists(out) else []
    print(f"--- {name}: exit status {p.returncode}\n{p.stdout}{p.stderr[-1500:]}")
    return (p, [r for r in recs if r.get("record") == "summary"],
            [r for r in recs if r.get("record") == "pair"])


def main():
    with tempfile.TemporaryDirectory(prefix="cs-apps-failures-") as work:
        write_exe(os.path.join(work, "bin", "mpirun.openmpi"), FAKE_MPIRUN)
        write_exe(os.path.join(work, "build", "tests", "apps", "fft2d_transpose"), FAKE_FFT2D)
        write_exe(os.path.join(work, "build", "wrappers", "libcommsched.so"), "")
        p, summ, _ = run(work, "good", "")
        check(p.returncode == 0, f"identical output: exit status {p.returncode}, expected 0")
        check(len(summ) == 1 and summ[0].get("correct") is True and not summ[0].get("failed"),
              f"identical output: summary {summ}")
        for fake, why in (("wrong", "differs from native"), ("noreport", "no report"),
                          ("crash", "exit status 139")):
            p, summ, _ = run(work, fake, fake)
            check(p.returncode == 1, f"{fake}: exit status {p.returncode}, expected 1")
            check("FAILED" in p.stdout, f"{fake}: no FAILED row in the table")
            check(len(summ) == 1 and why in (summ[0].get("failed") or ""),
                  f"{fake}: summary {summ} does not say '{why}'")
        # The control replaces the library and writes no report (already built: no mpicc).
        write_exe(os.path.join(work, "build", "apps", "bench", "libbarrier_preload.so"), "")
        p, summ, _ = run(work, "control", "noreport", ("--control", "barrier"),
                      "libbarrier_preload.so")
        check(p.returncode == 0, f"control: exit status {p.returncode}, expected 0")
        check(len(summ) == 1 and summ[0].get("control") == "barrier" and summ[0].get("correct"),
              f"control: summary {summ}")
        check("control: barrier before each call" in p.stdout, "control: not named in the table")
        # --beside: a third run per pair with its own settings, the order rotating.
        p, summ, pairs = run(work, "beside", "", ("--beside", "COMMSCHED_TEST_FAKE=none"),
                             smoke=False, pairs=3)
        check(p.returncode == 0, f"beside: exit status {p.returncode}, expected 0")
        check(len(summ) == 1 and summ[0].get("beside_env") == ["COMMSCHED_TEST_FAKE=none"] and
              len(summ[0].get("beside_ratios", [])) == 3 and summ[0].get("correct"),
              f"beside: summary {summ}")
        orders = [tuple(r.get("order", ())) for r in pairs]
        check(len(set(orders)) == 3 and all(len(o) == 3 for o in orders) and
              {o[0] for o in orders} == {"native", "preloaded", "beside"},
              f"beside: orders {orders} do not rotate")
        check("COMMSCHED_TEST_FAKE=none, in the same pairs" in p.stdout,
              "beside: its row is not in the table")
        p, summ, _ = run(work, "beside-wrong", "", ("--beside", "COMMSCHED_TEST_FAKE=wrong"))
        check(p.returncode == 1, f"beside-wrong: exit status {p.returncode}, expected 1")
        check(len(summ) == 1 and "beside output differs" in (summ[0].get("failed") or ""),
              f"beside-wrong: summary {summ}")
        p, summ, _ = run(work, "beside-control", "", ("--beside", "COMMSCHED_SEED=1", "--control",
                                                    "barrier"))
        check(p.returncode != 0 and "--control replaces it" in p.stderr,
              f"beside-control: exit status {p.returncode}, expected a refusal")
    if failures:
        print(f"apps_failures: {len(failures)} failure(s)")
        sys.exit(1)
    print("apps_failures: ok")


if __name__ == "__main__":
    main()
