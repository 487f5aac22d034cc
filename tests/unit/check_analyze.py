#!/usr/bin/env python3
"""Runs commsched-analyze on the golden inputs and checks its outputs: the SVG files parse as
XML and hold one row per rank, the Chrome trace is JSON with one track per rank, the CSV matrix
equals the input, and bad inputs give exit status 1 with one clear message.

usage: check_analyze.py ANALYZER DATA_DIR WORK_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, expect=0):
    p = subprocess.run([analyzer, *args], capture_output=True, text=True, timeout=120)
    check(p.returncode == expect,
          f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def rank_rows(path):
    root = ET.parse(path).getroot()  # raises on malformed XML
    check(root.tag == SVG + "svg", f"{path}: root element is {root.tag}")
    return [g for g in root.iter(SVG + "g") if g.get("class") == "rank-row"]


def matrix_from_text(path):
    n, m = 0, {}
    with open(path) as f:
        for line in f:
            w = line.split("#")[0].split()
            if not w:
                continue
            if w[0] == "n":
                n = int(w[1])
            elif int(w[2]) > 0:
                m[(int(w[0]), int(w[1]))] = int(w[2])
    return n, m


analyzer, data, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
matrix_file = os.path.join(data, "traces", "matrix_small.txt")
golden = os.path.join(data, "traces", "golden")

# --matrix: summary, what-if, pictures, CSV; the matrix survives a write/read round trip.
out = os.path.join(work, "small")
p = run("--matrix", matrix_file, "--machine", "default", "--svg", out, "--csv", out,
        "--write-matrix", out + ".txt")
check("fan-out f=3" in p.stdout and "delta=3" in p.stdout, "summary figures:\n" + p.stdout)
check("what-if for P0" in p.stdout and "lower bound" in p.stdout, "what-if table:\n" + p.stdout)
n, m = matrix_from_text(matrix_file)
check(matrix_from_text(out + ".txt") == (n, m), "--write-matrix round trip")
for kind in ("matrix", "gantt"):
    rows = rank_rows(f"{out}-{kind}.svg")
    check(len(rows) == n, f"{kind}.svg: {len(rows)} rank rows, expected {n}")
    check([int(g.get("data-rank")) for g in rows] == list(range(n)), f"{kind}.svg: row order")
root = ET.parse(out + "-strategies.svg").getroot()
bars = [g for g in root.iter(SVG + "g") if g.get("class") == "strategy"]
check(len(bars) >= 10, f"strategies.svg: {len(bars)} strategies")
with open(out + "-matrix.csv") as f:
    got = {(int(r["src"]), int(r["dst"])): int(r["bytes"]) for r in csv.DictReader(f)}
check(got == m, "matrix CSV differs from the input")
with open(out + "-whatif.csv") as f:
    whatif = {r["strategy"]: r for r in csv.DictReader(f)}
check("native" in whatif and "ac" in whatif and len(whatif) >= 10, "whatif.csv strategies")
check(all(float(r["per_call_s"]) > float(r["predicted_s"]) for r in whatif.values()
          if r["ok"] == "1"), "whatif.csv: per-call times include the agreement")

# --strategies: the what-if for native and the named strategies only, with the same figures;
# an unknown id is a usage error naming the valid ones.
run("--matrix", matrix_file, "--machine", "default", "--strategies", "mesh2d,ac",
    "--csv", out + "-some")
with open(out + "-some-whatif.csv") as f:
    some = {r["strategy"]: r for r in csv.DictReader(f)}
check(sorted(some) == ["ac", "mesh2d", "native"], f"--strategies rows: {sorted(some)}")
check(all(some[s]["predicted_s"] == whatif[s]["predicted_s"] for s in some),
      "--strategies changes the predictions")
p = run("--matrix", matrix_file, "--machine", "default", "--strategies", "ac,nosuch", expect=2)
check("nosuch" in p.stderr and "mesh2d" in p.stderr, "--strategies: unknown id message")

# --hosts: the machine file's host-pattern clusters apply to a matrix (hosts a* and b*, a
# slow link between them), so the predictions change; without host names one cluster.
hosts = os.path.join(work, "hosts.txt")
with open(hosts, "w") as f:
    f.write("".join(("a" if r % 2 == 0 else "b") + f"{r}\n" for r in range(n)))
machine = os.path.join(work, "ab.toml")
with open(machine, "w") as f:
    f.write("[link.cluster]\nalpha = 1e-6\nbeta = 1e-9\n[link.inter]\nalpha = 1e-4\n"
            "beta = 1e-8\n[[cluster]]\nhosts = [\"a*\"]\n[[cluster]]\nhosts = [\"b*\"]\n")
run("--matrix", matrix_file, "--machine", machine, "--csv", out + "-flat")
run("--matrix", matrix_file, "--machine", machine, "--hosts", hosts, "--csv", out + "-two")


def predicted(path):
    with open(path) as f:
        return {r["strategy"]: float(r["predicted_s"]) for r in csv.DictReader(f)}


check(predicted(out + "-two-whatif.csv")["native"] > predicted(out + "-flat-whatif.csv")["native"],
      "--hosts: the two-cluster layout slows native down")
with open(hosts, "a") as f:
    f.write("extra\n")
p = run("--matrix", matrix_file, "--machine", machine, "--hosts", hosts, expect=2)
check("host names for" in p.stderr, "--hosts with the wrong count:\n" + p.stderr)
p = run("--matrix", matrix_file, "--svg", out + "-lex", "--plan", "lex")
check("(lex)" in p.stdout, "--plan lex is drawn:\n" + p.stdout)

# Golden traces: 3 ranks, one pattern, 100 calls per rank.
p = run(golden, "--chrome-trace", os.path.join(work, "golden.json"), "--csv",
        os.path.join(work, "golden"), "--svg", os.path.join(work, "golden"))
check("97 calls, 97 optimised" in p.stdout and "3 calls outside patterns" in p.stdout,
      "golden summary:\n" + p.stdout)
check("complete (hash checked)" in p.stdout, "golden matrix verified:\n" + p.stdout)
with open(os.path.join(work, "golden.json")) as f:
    events = json.load(f)["traceEvents"]
check({e["tid"] for e in events if e["ph"] == "X"} == {0, 1, 2}, "chrome trace tracks")
calls = sum(e["args"]["calls"] for e in events if e["ph"] == "X")
check(calls == 300, f"chrome trace holds {calls} calls, expected 300")
check(len(rank_rows(os.path.join(work, "golden-gantt.svg"))) == 3, "golden gantt rows")
with open(os.path.join(work, "golden-calls.csv")) as f:
    rows = list(csv.DictReader(f))
check(sum(int(r["calls"]) for r in rows) == 300, "calls CSV totals")

# Bad inputs: exit 1, one message naming the problem, no traceback or crash.
bad = os.path.join(work, "bad")
os.makedirs(bad)
shutil.copy(os.path.join(golden, "rank0.cstrace"), bad)
with open(os.path.join(golden, "rank1.cstrace"), "rb") as f:
    data1 = f.read()
with open(os.path.join(bad, "rank1.cstrace"), "wb") as f:
    f.write(data1[: len(data1) // 2])
p = run(bad, expect=1)
check("rank1.cstrace" in p.stderr and "truncated" in p.stderr, "truncated file:\n" + p.stderr)
p = run(os.path.join(work, "nonexistent"), expect=1)
check("not a directory" in p.stderr, "missing directory:\n" + p.stderr)
empty = os.path.join(work, "empty")
os.makedirs(empty)
p = run(empty, expect=1)
check("no trace files" in p.stderr, "empty directory:\n" + p.stderr)
badm = os.path.join(work, "bad.txt")
with open(badm, "w") as f:
    f.write("n 4\n0 1 10\n0 7 10\n")
p = run("--matrix", badm, expect=1)
check("bad.txt:3" in p.stderr, "bad matrix line named:\n" + p.stderr)
run("--bogus", expect=2)

# Hostile files (issue 25): refused at once, one message naming the file, nothing replaced.
import time
fifo = os.path.join(work, "fifo")
os.mkfifo(fifo)
deep = os.path.join(work, "deep.toml")
with open(deep, "w") as f:
    f.write("x = " + "[" * 10000 + "]" * 10000 + "\n")
huge_beta = os.path.join(work, "huge_beta.toml")
with open(huge_beta, "w") as f:
    f.write("[link.cluster]\nalpha = 1e-6\nbeta = 1e308\n")
for args, why in [(["--matrix", fifo], fifo + ": a FIFO, not a regular file"),
                  (["--matrix", "/dev/zero"], "/dev/zero: a character device"),
                  (["--matrix", matrix_file, "--hosts", fifo], fifo + ": a FIFO"),
                  (["--matrix", matrix_file, "--machine", fifo], fifo + ": a FIFO"),
                  (["--matrix", matrix_file, "--machine", "/dev/urandom"], "a character device"),
                  (["--matrix", matrix_file, "--machine", deep], "deep.toml:1: nested too deeply"),
                  (["--matrix", matrix_file, "--machine", huge_beta],
                   "huge_beta.toml:3: key 'beta' in [link.cluster] must be a positive number"),
                  (["--matrix", matrix_file, "--write-matrix", fifo], fifo + ": a FIFO"),
                  ([golden, "--chrome-trace", "/dev/null"], "/dev/null: a character device")]:
    t0 = time.monotonic()
    p = run(*args, expect=1)
    check(time.monotonic() - t0 < 10, f"{args}: took {time.monotonic() - t0:.1f} s")
    check(why in p.stderr and p.stderr.count("commsched-analyze:") == 1,
          f"{args}: expected one message with '{why}':\n{p.stderr}")
keep = os.path.join(work, "keep.txt")
with open(keep, "w") as f:
    f.write("keep")
link = os.path.join(work, "link-matrix.csv")
os.symlink(keep, link)
p = run("--matrix", matrix_file, "--csv", os.path.join(work, "link"), expect=1)
check("link-matrix.csv: a symbolic link" in p.stderr, "CSV onto a link refused:\n" + p.stderr)
check(os.path.islink(link) and open(keep).read() == "keep", "the link and its target are kept")

if failures:
    print(f"check_analyze: {len(failures)} failures", file=sys.stderr)
    sys.exit(1)
print("check_analyze: ok")
